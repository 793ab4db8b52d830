"""Pane 4, History: every state of the memory folder memdeck has recorded, who made it, and
the coloured diff of the one under the cursor; `r` makes the folder that state again, as a
new commit (nothing is lost)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

from memdeck.engine import local_time

from ..messages import MemoryChanged
from ..widgets.confirm import ConfirmScreen
from ..widgets.diff_view import DiffRow, DiffView, parse_diff
from ..widgets.history.commit_list import CommitHeader, CommitList
from .base import Pane


class HistoryPane(Pane):
    TITLE = "History"
    BINDINGS = [
        Binding("r", "restore", "Restore this state", id="history.restore"),
        Binding("s", "sync", "Sync", id="history.sync"),
        Binding("escape", "back", "Commits", id="history.back", show=False),
        Binding("R", "reload", "Reload", id="history.reload", show=False),
    ]
    COMMANDS = [
        ("Restore this state", "Make the memory folder what it was at the selected commit "
         "(as a new commit)", "restore"),
        ("Reload history", "Read the history repository again", "reload"),
        ("Sync with git remotes", "Push the memory to a remote, or pull one into Review",
         "sync"),
    ]

    @dataclass
    class Loaded(Message):
        entries: list[Any]

    @dataclass
    class DiffLoaded(Message):
        commit: str
        rows: list[DiffRow]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entries: list[Any] = []
        self._diffs: LRUCache[str, list[DiffRow]] = LRUCache(32)  # commits never change
        self._keep: str | None = None  # the commit the cursor goes to after a reload

    def compose(self) -> ComposeResult:
        # One focusable widget per container: when the pane is hidden, Textual moves focus
        # from the focused widget to a focusable sibling, which would pull this tab back.
        with Vertical(id="history-list"):
            yield CommitHeader(id="history-header")
            yield CommitList(id="history-commits")
        with Vertical(id="history-detail"):
            yield Static("", id="history-entry")
            yield DiffView(id="history-diff")

    def on_resize(self) -> None:
        self.query_one(CommitHeader).render_header(self.query_one(CommitList).size.width
                                                   or self.size.width)

    def _refocus(self) -> None:
        """Focus the main widget if nothing in the pane has it (it was hidden before the
        load). At once, not deferred: a late focus would pull its tab back into view."""
        if self.focus_lost():
            self.screen.set_focus(self.query_one(CommitList))

    def focus_default(self) -> None:
        self.query_one(CommitList).focus()

    # -- loading --------------------------------------------------------------------------
    def reload(self) -> None:
        self.load_entries()

    def action_reload(self) -> None:
        self.reload()

    @work(thread=True, exclusive=True, group="history-load", name="loading history",
          exit_on_error=False)
    def load_entries(self) -> None:
        self.engine.record_outside_edits()  # an edit made outside memdeck shows up as one
        self.post_message(self.Loaded(self.engine.history()))

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        commits = self.query_one(CommitList)
        keep = self._keep or (commits.current.commit if commits.current else None)
        self._keep = None
        self.entries = event.entries
        commits.set_entries(event.entries, keep)
        self.refresh_bindings()  # restore applies now that there are commits
        self._refocus()
        if not event.entries:
            self.query_one("#history-entry", Static).update("")
            self.query_one(DiffView).show_rows([], "No history yet: memdeck records the memory "
                                               "folder the first time it reads it.")

    @on(CommitList.Highlighted)
    def _highlighted(self, event: CommitList.Highlighted) -> None:
        e = event.entry
        self.query_one("#history-entry", Static).update(self._entry_text(e))
        rows = self._diffs.get(e.commit)
        view = self.query_one(DiffView)
        if rows is not None:
            view.loading = False
            self._show_diff(rows)
        else:
            view.loading = True
            self.load_diff(e.commit)

    def _entry_text(self, e: Any) -> Content:
        origin = e.origin_label
        current = self.entries and self.entries[0].commit == e.commit
        return Content.assemble(
            ("commit ", "$foreground-muted"), (e.commit[:12], "bold $text-accent"),
            f"  ·  {local_time(e.time)}  ·  ", (origin, "bold"), f"  ·  {e.summary}",
            ("\n" + ("the memory folder is in this state now" if current else
                     "r makes the memory folder this state again (as a new commit)"),
             "$foreground-muted"))

    @work(thread=True, exclusive=True, group="history-diff", name="reading the commit",
          exit_on_error=False)
    def load_diff(self, commit: str) -> None:
        if get_current_worker().is_cancelled:  # the cursor moved on already
            return
        _, text = self.engine.history_show(commit)
        self.post_message(self.DiffLoaded(commit, parse_diff(text)))

    @on(DiffLoaded)
    def _diff_loaded(self, event: DiffLoaded) -> None:
        self._diffs[event.commit] = event.rows
        current = self.query_one(CommitList).current
        if current is not None and current.commit == event.commit:
            self.query_one(DiffView).loading = False
            self._show_diff(event.rows)

    def _show_diff(self, rows: list[DiffRow]) -> None:
        self.query_one(DiffView).show_rows(rows, "No file changed in this commit.")

    def show_commit(self, commit: str) -> None:
        """Put the cursor on `commit` (a trace's "changed" step): now if the commits are
        listed, else once they are."""
        self._keep = commit
        if self.entries and any(e.commit == commit for e in self.entries):
            self._keep = None
            self.query_one(CommitList).set_entries(self.entries, commit)

    # -- actions --------------------------------------------------------------------------
    @on(CommitList.Opened)
    def _opened(self) -> None:
        self.query_one(DiffView).focus()

    def action_back(self) -> None:
        commits = self.query_one(CommitList)
        if commits.has_focus and getattr(self.app, "trail", None) is not None:
            self.app.action_trail_back()  # type: ignore[attr-defined]  # came from a trace
            return
        commits.focus()

    def copy_value(self, what: str) -> tuple[str, str] | None:
        e = self.query_one(CommitList).current
        return ("commit", e.commit) if e is not None and what == "id" else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "restore":
            return bool(self.entries)
        return True

    def action_sync(self) -> None:
        from ..widgets.history.sync_screen import SyncScreen

        self.app.push_screen(SyncScreen())

    def action_restore(self) -> None:
        e = self.query_one(CommitList).current
        if e is None:
            return
        if self.entries and self.entries[0].commit == e.commit:
            self.notify("The memory folder is in this state now; pick an older commit to "
                        "restore.", severity="warning")
            return
        origin = e.origin_label
        detail = (f"{e.commit[:12]} · {local_time(e.time)} · {origin} · {e.summary}\n\n"
                  "The memory folder becomes exactly what it was then. This is recorded as a "
                  "new restore commit; the state it replaces stays in the history, so nothing "
                  "is lost.")

        def answered(yes: bool | None) -> None:
            if yes:
                self.restore(e.commit)

        self.app.push_screen(ConfirmScreen("Restore this state?", detail, yes="Restore"),
                             answered)

    @work(thread=True, exclusive=True, group="history-restore", name="restoring",
          exit_on_error=False)
    def restore(self, commit: str) -> None:
        new = self.engine.restore(commit)
        self._keep = new
        if new == commit:  # the folder already held exactly that; git made no commit
            self.notify("The memory folder already holds that state; nothing changed.")
        else:
            self.notify(f"Restored {commit[:12]}: the memory folder is that state again "
                        f"(new commit {new[:12]}).", timeout=6)
        self.post_message(MemoryChanged("restore"))
