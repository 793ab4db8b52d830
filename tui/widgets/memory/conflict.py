"""The file changed on disk while the user edited it: show both sides' changes and let the
user choose. Nothing is written until they do, and their text is never dropped unasked."""

from __future__ import annotations

import difflib

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from ..key_footer import KeyFooter

KEEP_MINE, TAKE_DISK, BACK = "mine", "disk", "edit"
MAX_DIFF_LINES = 400  # a huge rewrite still opens at once; the rest is counted


def coloured_diff(before: str, after: str) -> Content:
    """`before` → `after` as a unified diff in theme colours: additions in the success
    colour, removals in the error colour, hunk headers in the accent colour."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="",
                                      n=2))[2:]  # the ---/+++ header: the section title says it
    if not lines:
        return Content.styled("no differences", "$text-muted")
    parts: list[tuple[str, str]] = []
    for line in lines[:MAX_DIFF_LINES]:
        if line.startswith("@@"):
            style = "bold $text-accent"
        elif line.startswith("+"):
            style = "$text-success"
        elif line.startswith("-"):
            style = "$text-error"
        else:
            style = "$text-muted"
        parts.append((line, style))
    if len(lines) > MAX_DIFF_LINES:
        parts.append((f"… {len(lines) - MAX_DIFF_LINES} more diff lines",
                      "italic $text-muted"))
    return Content("\n").join(Content.styled(text, style) for text, style in parts)


class ConflictScreen(ModalScreen[str]):
    """Returns `mine` (overwrite with my text), `disk` (discard my edit) or `edit` (go back
    to editing, nothing decided)."""

    BINDINGS = [
        Binding("k", "choose('mine')", "Keep mine", id="conflict.mine"),
        Binding("d", "choose('disk')", "Take disk version, drop mine", id="conflict.disk"),
        Binding("escape,b", "choose('edit')", "Back to editing", id="conflict.back"),
    ]

    def __init__(self, path: str, base: str, disk: str | None, mine: str) -> None:
        super().__init__(classes="modal")
        self.path = path
        self.base = base
        self.disk = disk
        self.mine = mine

    def compose(self) -> ComposeResult:
        gone = self.disk is None
        with Vertical(id="dialog", classes="conflict"):
            yield Label(f"{self.path} {'was deleted' if gone else 'changed on disk'} "
                        "while you were editing it", id="question")
            yield Static("Nothing has been saved. Both versions stay in memdeck's history "
                         "whichever you choose.", id="detail")
            with VerticalScroll(id="conflict-diffs"):
                yield Label("Changed on disk since you opened it", classes="diff-title")
                if gone:
                    yield Static(Content.styled("the file no longer exists on disk",
                                                "$text-error"), id="diff-disk")
                else:
                    yield Static(coloured_diff(self.base, self.disk or ""),
                                 id="diff-disk")
                yield Label("Your edit", classes="diff-title")
                yield Static(coloured_diff(self.base, self.mine),
                             id="diff-mine")
            with Horizontal(id="buttons"):
                yield Button("Keep mine (k)", id="mine", variant="warning")
                yield Button("Take disk version, drop mine (d)", id="disk")
                yield Button("Back to editing (esc)", id="edit", variant="primary")
        yield KeyFooter()  # its keys (k, d, esc), not the editor's

    def on_mount(self) -> None:
        self.query_one("#edit", Button).focus()

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or BACK)
