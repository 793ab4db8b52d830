"""Exactly what the agent is shown of memory next session, and how many tokens it costs."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from ..key_footer import KeyFooter


class InjectedScreen(ModalScreen[None]):
    """`summary` is the engine's InjectedSummary. Escape or `i` closes."""

    BINDINGS = [Binding("escape,i,q", "close", "Close", id="injected.close")]

    def __init__(self, summary: Any) -> None:
        super().__init__(classes="modal")
        self.summary = summary

    def compose(self) -> ComposeResult:
        s = self.summary
        with Vertical(id="dialog", classes="injected"):
            yield Label("What the agent is shown next session", id="question")
            yield Static(Content.styled(s.note, "$text-success" if s.active
                                        else "$text-warning"), id="injected-note")
            if s.active and s.messages:
                size = sum(len(m.encode("utf-8")) for m in s.messages)
                parts = ("one developer message part" if len(s.messages) == 1 else
                         f"{len(s.messages)} developer message parts of at most 8,900 bytes")
                yield Static(f"memory {s.version} · with Codex's instructions: {size:,} bytes "
                             f"in {parts}, about {s.message_tokens:,} tokens",
                             id="injected-parts", markup=False)
            if s.text:
                yield TextArea(s.text, language="markdown", theme="css", read_only=True,
                               soft_wrap=True, show_line_numbers=True, id="injected-text")
            yield Label("memory_summary.md, trimmed and cut to Codex's limit · Escape to close",
                        id="hint")
        yield KeyFooter()  # its own keys, not the pane's behind it

    def on_mount(self) -> None:
        for ta in self.query(TextArea):
            ta.focus()

    def action_close(self) -> None:
        self.dismiss(None)
