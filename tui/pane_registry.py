"""The app's panes in key order (1-6): id, title and where the class is. A pane's module is
imported when the pane is first shown (or in the background once the first listing is on
screen), not while the app starts. app.py builds the tabs from this, app_commands.py the
palette's entries."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .panes.base import Pane

# id, title, "module:class" under tui/panes/
PANES: list[tuple[str, str, str]] = [
    ("sessions", "Sessions", "sessions:SessionsPane"),
    ("memories", "Raw memories", "memories:MemoriesPane"),
    ("memory", "Memory", "memory:MemoryPane"),
    ("history", "History", "history:HistoryPane"),
    ("review", "Review", "review:ReviewPane"),
    ("settings", "Settings", "settings:SettingsPane"),
]


def pane_class(pid: str) -> type[Pane]:
    spec = next(where for p, _, where in PANES if p == pid)
    module, name = spec.split(":")
    cls: type[Pane] = getattr(importlib.import_module(f"{__package__}.panes.{module}"), name)
    return cls
