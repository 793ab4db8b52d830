"""Pane: Raw memories (being built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from .base import Pane


class MemoriesPane(Pane):
    TITLE = "Raw memories"

    def compose(self) -> ComposeResult:
        yield Static("Raw memories")
