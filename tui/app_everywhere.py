"""Keys that work on every pane (issue 23, item 9): `y` / `Y` copy the current row's id or
path (tui/clipboard.py), `ctrl+z` undoes the last change of the memory folder, asking first.

`MemdeckApp` (app.py) mixes this in; a pane offers what it can copy with
`copy_value("id" | "path") -> (what, text) | None`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from textual import work
from textual.binding import Binding

from memdeck.engine import MemdeckError, local_time

from .clipboard import copy_with_program
from .messages import MemoryChanged
from .widgets.confirm import ConfirmScreen

if TYPE_CHECKING:
    from .app_host import AppHost

    class Host(AppHost, Protocol):
        """The app with this mixin's own steps (what `self` is in the methods below)."""

        def _copy_by_program(self, label: str, text: str) -> Any: ...
        def _undo_ask(self) -> Any: ...
        def _undo_confirm(self, last: Any, before: Any) -> None: ...
        def _undo(self, commit: str, summary: str) -> Any: ...

BINDINGS = [
    Binding("y", "copy('id')", "Copy id", id="app.copy_id", show=False),
    Binding("Y", "copy('path')", "Copy path", id="app.copy_path", show=False),
    Binding("ctrl+z", "undo_memory", "Undo last memory change", id="app.undo", show=False),
]


class EverywhereActions:
    # -- copy -----------------------------------------------------------------------------
    def action_copy(self: Host, what: str) -> None:
        pane = self.built(self.active_pane)
        got = getattr(pane, "copy_value", lambda _what: None)(what) if pane else None
        if got is None:
            self.notify(f"Nothing here has a{'n id' if what == 'id' else ' path'} to copy.",
                        severity="warning", timeout=4)
            return
        label, text = got
        self.copy_to_clipboard(text)  # OSC 52: the terminal's clipboard
        self._copy_by_program(label, text)

    @work(thread=True, group="clipboard", name="copying", exit_on_error=False)
    def _copy_by_program(self: Host, label: str, text: str) -> None:
        program = copy_with_program(text)
        how = "terminal clipboard (OSC 52)" + (f" and {program}" if program else "")
        self.call_from_thread(self.notify, f"Copied {label}: {text} · {how}", timeout=6)

    # -- undo -----------------------------------------------------------------------------
    def action_undo_memory(self: Host) -> None:
        if self.running:
            self.notify("A run is changing the memory folder: undo once it has finished.",
                        severity="warning", timeout=5)
            return
        self._undo_ask()

    @work(thread=True, exclusive=True, group="undo", name="reading the memory history",
          exit_on_error=False)
    def _undo_ask(self: Host) -> None:
        try:
            self.engine.record_outside_edits()  # a change made outside memdeck is the last
            entries = self.engine.history()
        except MemdeckError as e:
            self.call_from_thread(self.notify, f"Cannot undo: {e}", severity="error",
                                  timeout=8)
            return
        if len(entries) < 2:
            self.call_from_thread(self.notify, "Nothing to undo: the memory folder has no "
                                  "earlier state in its history.", timeout=5)
            return
        self.call_from_thread(self._undo_confirm, entries[0], entries[1])

    def _undo_confirm(self: Host, last: Any, before: Any) -> None:
        detail = (f"The last change: {last.commit[:12]} · {local_time(last.time)} · "
                  f"{last.origin_label} · {last.summary}\n\n"
                  f"The memory folder becomes what it was before it ({before.commit[:12]} · "
                  f"{local_time(before.time)} · {before.summary}). This is recorded as a new "
                  "restore commit, so the change undone stays in History (4) and can be "
                  "restored from there.")

        def answered(yes: bool | None) -> None:
            if yes:
                self._undo(before.commit, last.summary)

        self.push_screen(ConfirmScreen("Undo the last change to memory?", detail, yes="Undo"),
                         answered)

    @work(thread=True, exclusive=True, group="undo", name="undoing", exit_on_error=False)
    def _undo(self: Host, commit: str, summary: str) -> None:
        new = self.engine.restore(commit)
        self.call_from_thread(self.notify, f"Undone: {summary} (the folder is {commit[:12]} "
                              f"again, new commit {new[:12]}).", timeout=6)
        self.post_message(MemoryChanged("restore"))
