"""Pane: Review (being built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from .base import Pane


class ReviewPane(Pane):
    TITLE = "Review"

    def compose(self) -> ComposeResult:
        yield Static("Review")
