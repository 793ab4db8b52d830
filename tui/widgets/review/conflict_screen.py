"""A pull's conflicts (issue 26, item 5), opened from Review with `C` (`c` stays the app's
extract+consolidate): the regions this machine and the remote both changed, one at a time,
both sides side by side with the base they started from; `o` keeps this machine's lines, `t`
takes the remote's, `b` both (this machine's first). Nothing is written into the memory
folder here: the proposal's workspace changes, and the accept (refused until no conflict is
left) does the rest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from ...messages import MemoryChanged
from ..key_footer import KeyFooter


class ConflictScreen(Screen[None]):
    BINDINGS = [
        Binding("o", "take('ours')", "Keep mine", id="conflict.ours"),
        Binding("t", "take('theirs')", "Take theirs", id="conflict.theirs"),
        Binding("b", "take('both')", "Both", id="conflict.both"),
        Binding("escape", "back", "Back", id="conflict.back"),
    ]
    DEFAULT_CSS = """
    ConflictScreen #conflict-title { height: auto; padding: 0 1; background: $panel; }
    ConflictScreen #conflict-list { height: auto; max-height: 8; }
    ConflictScreen #conflict-sides { height: 1fr; }
    ConflictScreen .conflict-side { width: 1fr; height: 1fr; padding: 0 1;
                                    border: round $panel-lighten-2; }
    ConflictScreen #conflict-base { height: auto; max-height: 8; padding: 0 1;
                                    color: $foreground-muted; }
    """

    @dataclass
    class Loaded(Message):
        conflicts: list[Any]

    def __init__(self, proposal_id: str, remote: str) -> None:
        super().__init__(id="conflict-screen")
        self.pid = proposal_id
        self.remote = remote
        self.conflicts: list[Any] = []
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Conflicts of proposal {self.pid}: this machine and {self.remote} "
                        "changed the same lines", id="conflict-title")
            yield OptionList(id="conflict-list")
            with Horizontal(id="conflict-sides"):
                yield Static("", id="conflict-ours", classes="conflict-side")
                yield Static("", id="conflict-theirs", classes="conflict-side")
            yield Static("", id="conflict-base")
        yield KeyFooter()

    @property
    def engine(self) -> Any:
        return self.app.engine  # type: ignore[attr-defined]

    def on_mount(self) -> None:
        self.query_one("#conflict-ours", Static).border_title = "this machine"
        self.query_one("#conflict-theirs", Static).border_title = self.remote
        self.query_one(OptionList).focus()
        self.load()

    def action_back(self) -> None:
        self.app.pop_screen()

    @work(thread=True, exclusive=True, group="conflicts", name="reading the conflicts",
          exit_on_error=False)
    def load(self) -> None:
        self.post_message(self.Loaded(self.engine.pull_conflicts(self.pid)))

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        self.conflicts = event.conflicts
        self.busy = False
        listing = self.query_one(OptionList)
        listing.clear_options()
        listing.add_options([Option(f"{i}. {c.path} line {c.at + 1}", id=str(i))
                             for i, c in enumerate(event.conflicts, 1)])
        if event.conflicts:
            listing.highlighted = 0
            self._show(event.conflicts[0])
        else:
            for side in ("#conflict-ours", "#conflict-theirs"):
                self.query_one(side, Static).update("")
            self.query_one("#conflict-base", Static).update(Content(
                "No conflict left: accept the proposal in Review (a or A)."))
        self.refresh_bindings()

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        i = int(event.option_id or 0) - 1
        if 0 <= i < len(self.conflicts):
            self._show(self.conflicts[i])

    def _show(self, c: Any) -> None:
        self.query_one("#conflict-ours", Static).update(Content("\n".join(c.ours) or "(none)"))
        self.query_one("#conflict-theirs", Static).update(
            Content("\n".join(c.theirs) or "(none)"))
        self.query_one("#conflict-base", Static).update(Content(
            "before either change: " + (" / ".join(c.base) if c.base else "(nothing)")))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "take":
            return bool(self.conflicts) and not self.busy
        return True

    def action_take(self, take: str) -> None:
        i = self.query_one(OptionList).highlighted
        if i is None or not self.conflicts or self.busy:
            return
        self.busy = True
        self.refresh_bindings()
        self.resolve(i + 1, take)

    @work(thread=True, exclusive=True, group="conflicts", name="resolving the conflict",
          exit_on_error=False)
    def resolve(self, n: int, take: str) -> None:
        left = self.engine.resolve_conflict(self.pid, n, take)
        self.app.post_message(MemoryChanged("resolve"))  # Review shows the new diff
        self.post_message(self.Loaded(left))
