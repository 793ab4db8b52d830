"""`?`: the keys that work here and now (after the user's remapping), and where things are."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .key_footer import KeyFooter

INTRO = ("memdeck shows Codex's long-term memory: sessions and why each was or was not "
         "remembered, the raw memories, the consolidated MEMORY.md, its history, and "
         "consolidations waiting for your review.")


def key_table(rows: list[tuple[str, str, str]]) -> Table:
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    t.add_column(style="dim")
    for key, desc, where in rows:
        t.add_row(key, desc, where)
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", id="help.close")]

    def __init__(self, rows: list[tuple[str, str, str]], pane: str) -> None:
        super().__init__(classes="modal")
        self.rows = rows
        self.pane = pane

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(Text("memdeck — keys", style="bold"), id="question")
            yield Static(INTRO, id="detail")
            yield Static(key_table(self.rows))
            yield Static(Text("ctrl+p opens the command palette: every action by name. Keys "
                              "can be remapped in memdeck/config.toml [keymap] (Settings "
                              "pane). Escape closes this.", style="dim"), id="hint")
        yield KeyFooter()  # its own keys, not the pane's behind it

    def action_dismiss(self, result: Any = None) -> None:  # type: ignore[override]
        self.dismiss(None)
