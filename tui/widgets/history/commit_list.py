"""The history's commits, one per line with a cursor: short hash, local time, who made the
state (each origin its own colour) and the summary. Drawn with the Line API, so a history of
thousands of commits costs no more than one screenful."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Static

from memdeck.engine import local_time

from ..cursor_list import MOVES, CursorList

ORIGINS = ("codex", "consolidation", "user", "external", "restore", "start")  # a style each

COLUMNS = (("commit", 10), ("time", 16), ("origin", 13))


def fit(text: str, width: int) -> str:
    text = " ".join(text.split())
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(text, max(0, width - 1)) + "…"


def header_text(width: int) -> str:
    summary = max(10, width - sum(w + 1 for _, w in COLUMNS) - 1)
    return "".join(" " + fit(t, w) for t, w in (*COLUMNS, ("summary", summary)))


class CommitHeader(Static):
    """The column titles, laid out as the rows are."""

    def render_header(self, width: int) -> None:
        self.update(header_text(width))


class CommitList(CursorList):
    """Enter posts `Opened` (the pane moves focus to the diff)."""

    BINDINGS = [*MOVES, Binding("enter", "open", "Read the diff", id="history.open")]
    COMPONENT_CLASSES = {
        "commit-list--cursor", "commit-list--hash", "commit-list--time",
        "commit-list--codex", "commit-list--consolidation", "commit-list--user",
        "commit-list--external", "commit-list--restore", "commit-list--start",
    }
    DEFAULT_CSS = """
    CommitList { height: 1fr; overflow-x: hidden; }
    CommitList > .commit-list--cursor { background: $block-cursor-background;
        color: $block-cursor-foreground; text-style: bold; }
    CommitList:blur > .commit-list--cursor { background: $block-cursor-blurred-background;
        text-style: none; }
    """

    @dataclass
    class Highlighted(Message):
        entry: Any

    @dataclass
    class Opened(Message):
        entry: Any

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cache_size=1024, **kwargs)

    @property
    def entries(self) -> list[Any]:
        return self.items

    def set_entries(self, entries: list[Any], keep: str | None = None) -> None:
        """Show `entries` (newest first); the cursor stays on commit `keep` if present."""
        self.show_items(entries, next((i for i, e in enumerate(entries) if e.commit == keep),
                                      0))

    def _part(self, name: str, base: Style, selected: bool) -> Style:
        if selected:
            return base
        return base + self.get_component_rich_style(f"commit-list--{name}", partial=True)

    def render_item(self, index: int, e: Any, selected: bool, width: int) -> Strip:
        base = self.rich_style + (self.get_component_rich_style("commit-list--cursor")
                                  if selected else Style())
        summary = max(10, width - sum(w + 1 for _, w in COLUMNS) - 1)
        origin = e.origin if e.origin in ORIGINS else "external"
        segs = [
            Segment(" " + fit(e.commit[:10], 10), self._part("hash", base, selected)),
            Segment(" " + fit(local_time(e.time), 16), self._part("time", base, selected)),
            Segment(" " + fit(e.origin_label, 13), self._part(origin, base, selected)),
            Segment(" " + fit(e.summary, summary), base),
        ]
        return Strip(segs).adjust_cell_length(width, base)
