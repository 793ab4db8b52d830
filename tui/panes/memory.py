"""Pane: Memory (being built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from .base import Pane


class MemoryPane(Pane):
    TITLE = "Memory"

    def compose(self) -> ComposeResult:
        yield Static("Memory")
