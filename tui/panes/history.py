"""Pane: History (being built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from .base import Pane


class HistoryPane(Pane):
    TITLE = "History"

    def compose(self) -> ComposeResult:
        yield Static("History")
