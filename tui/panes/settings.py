"""Pane: Settings (being built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from .base import Pane


class SettingsPane(Pane):
    TITLE = "Settings"

    def compose(self) -> ComposeResult:
        yield Static("Settings")
