"""A virtual table of sessions: only the rows on screen are drawn (the Line API, through
CursorList), so 10,000 sessions cost no more to show than 30."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Static

from memdeck.engine import local_time

from ..render import STATUS_STYLE
from .cursor_list import MOVES, CursorList


class Column(NamedTuple):
    key: str
    title: str
    width: int


FIXED = (("updated", "updated", 16), ("project", "project", 16), ("source", "source", 8),
         ("status", "status", 15))
# source shows what the user ran ("Codex TUI", "exec", "sub-agent: review"), never Codex's
# raw JSON; the column is as wide as the longest label on the table, within these bounds
SOURCE_WIDTH = (6, 17)


def source_width(rows: list[Any]) -> int:
    lo, hi = SOURCE_WIDTH
    return min(hi, max([lo, *(len(label) for label in {s.source_label for s in rows})]))


def layout(width: int, source: int = FIXED[2][2]) -> list[Column]:
    """Fixed columns first; preview and reason share what is left (reason gets more)."""
    cols = [Column(k, t, source if k == "source" else w) for k, t, w in FIXED]
    rest = max(20, width - sum(c.width + 1 for c in cols) - 1)
    preview = max(10, rest * 2 // 5)
    cols += [Column("preview", "preview", preview), Column("reason", "reason",
                                                            max(10, rest - preview - 1))]
    return cols


def cell_values(s: Any) -> dict[str, str]:
    return {
        "updated": local_time(s.updated_at),
        "project": s.project,
        "source": s.source_label,
        "status": s.status,
        "preview": " ".join((s.preview or "—").split()),
        "reason": s.reason,
    }


def row_segments(values: dict[str, str], cols: list[Column], base: Style,
                 status_style: Style | None) -> list[Segment]:
    segs: list[Segment] = []
    for i, c in enumerate(cols):
        text = values[c.key]
        cell = set_cell_size(text, c.width)
        if len(text) > c.width and c.width > 1:
            cell = set_cell_size(text, c.width - 1) + "…"
        style = base + status_style if c.key == "status" and status_style else base
        segs.append(Segment((" " if i else " ") + cell, style))
    return segs


class SessionHeader(Static):
    """The column titles, drawn with the same layout as the rows."""

    def render_header(self, width: int) -> None:
        table = next(iter(self.parent.query(SessionTable)), None) if self.parent else None
        cols = layout(width, table.source_width if table is not None else FIXED[2][2])
        self.update("".join(" " + set_cell_size(c.title, c.width) for c in cols))


class SessionTable(CursorList):
    """Sessions, one per line, with a cursor. Enter opens the one under the cursor."""

    BINDINGS = [*MOVES, Binding("enter", "open", "Open", id="sessions.open")]
    COMPONENT_CLASSES = {"session-table--cursor", "session-table--odd"}
    DEFAULT_CSS = """
    SessionTable { height: 1fr; }
    SessionTable > .session-table--cursor { background: $block-cursor-background;
        color: $block-cursor-foreground; text-style: bold; }
    SessionTable:blur > .session-table--cursor { background: $block-cursor-blurred-background;
        text-style: none; }
    SessionTable > .session-table--odd { background: $surface-lighten-1 20%; }
    """

    @dataclass
    class Highlighted(Message):
        session: Any

    @dataclass
    class Opened(Message):
        session: Any

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._values: LRUCache[int, dict[str, str]] = LRUCache(4096)
        self.source_width = FIXED[2][2]

    @property
    def rows(self) -> list[Any]:
        return self.items

    def set_rows(self, rows: list[Any], keep: str | None = None) -> None:
        """Show `rows`; the cursor stays on the session `keep` (a rollout path) if present."""
        self._values.clear()
        width = source_width(rows) if rows else self.source_width
        if width != self.source_width:
            self.source_width = width
            if self.parent is not None:  # the titles follow the new layout
                for header in self.parent.query(SessionHeader):
                    header.render_header(self.size.width or self.app.size.width)
        target = 0
        if keep is not None:
            target = next((i for i, s in enumerate(rows) if s.rollout_path == keep), 0)
        self.show_items(rows, target)

    def cache_key(self, index: int, item: Any) -> tuple[Any, ...]:
        return (item.rollout_path, item.status)

    def render_item(self, index: int, s: Any, selected: bool, width: int) -> Strip:
        if selected:
            base = self.get_component_rich_style("session-table--cursor")
        elif index % 2:
            base = self.rich_style + self.get_component_rich_style("session-table--odd")
        else:
            base = self.rich_style
        values = self._values.get(index)
        if values is None:
            values = self._values[index] = cell_values(s)
        status = None if selected else Style.parse(STATUS_STYLE.get(s.status, "none"))
        return Strip(row_segments(values, layout(width, self.source_width), base,
                                  status)).adjust_cell_length(width, base)
