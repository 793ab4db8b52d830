"""A DataTable that moves like every memdeck list (its own module: DataTable is not imported
while the app starts, only with the first pane that shows one)."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.widgets import DataTable


class MovingDataTable(DataTable[Any]):
    """A DataTable whose cursor also moves with `j`/`k`/`g`/`G`, as in every memdeck list
    (`?` says "everywhere")."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "First", show=False),
        Binding("G", "scroll_bottom", "Last", show=False),
    ]
