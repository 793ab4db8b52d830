"""A virtual table of sessions: only the rows on screen are drawn (the Line API, through
CursorList), so 10,000 sessions cost no more to show than 30."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Static

from memdeck.engine import STATUSES, local_time

from ..render import STATUS_STYLE
from ..table_sort import Column as SortColumn
from ..table_sort import SortOrder
from .cursor_list import MOVES, CursorList

# what each column sorts by (`s`, `S`, a click on its title; tui/table_sort.py)
SORTS = (
    SortColumn("updated", "updated", lambda s: s.updated_at, newest_first=True),
    SortColumn("project", "project", lambda s: s.project),
    SortColumn("source", "source", lambda s: s.source_label),
    SortColumn("status", "status",
               lambda s: STATUSES.index(s.status) if s.status in STATUSES else len(STATUSES)),
    SortColumn("preview", "preview", lambda s: " ".join((s.preview or "").split())),
    SortColumn("reason", "reason", lambda s: s.reason),
)
ENGINE_ORDER = SortOrder("updated", descending=True)  # how the engine lists them


def matches(s: Any, text: str, status: str, project: str) -> bool:
    if status != "*" and s.status != status:
        return False
    if project != "*" and s.project != project:
        return False
    if not text:
        return True
    hay = f"{s.preview}\n{s.cwd}\n{s.id}\n{s.reason}\n{s.status}\n{s.source}".lower()
    return all(word in hay for word in text.lower().split())


def detail_line(s: Any) -> Text:
    """The highlighted session in full: what the table's columns cut short. It wraps, so a
    long reason or path is never cut mid-sentence (issue 23, item 9)."""
    t = Text(overflow="fold")
    t.append(s.id or "no session id", style="bold")
    t.append(f"  {s.cwd or '?'}", style="dim")
    if s.git_branch:
        t.append(f"  ({s.git_branch})", style="dim")
    t.append("\n")
    t.append(s.status, style=STATUS_STYLE.get(s.status, ""))
    t.append(f": {s.reason}")
    return t


class Column(NamedTuple):
    key: str  # which of `cell_values` it shows
    title: str
    width: int


STATUS_WIDTH = max(map(len, STATUS_STYLE))  # the longest status word: never cut
SOURCE_DEFAULT = 8
# source shows what the user ran ("Codex TUI", "exec", "sub-agent: review"), never Codex's
# raw JSON; the column is as wide as the longest label on the table, within these bounds
SOURCE_WIDTH = (6, 17)
# (from this table width: updated column, project width, source width at most): the narrower
# the table, the more the fixed columns give up so that preview and reason stay readable;
# status is never cut, the detail line under the table shows the whole values
SHRINK = ((140, "updated", 16, SOURCE_WIDTH[1]), (110, "updated_short", 14, SOURCE_WIDTH[1]),
          (90, "updated_short", 10, 9), (0, "updated_short", 10, 0))


def source_width(rows: list[Any]) -> int:
    lo, hi = SOURCE_WIDTH
    return min(hi, max([lo, *(len(label) for label in {s.source_label for s in rows})]))


def layout(width: int, source: int = SOURCE_DEFAULT) -> list[Column]:
    """The fixed columns, as narrow as `width` asks (SHRINK); preview and reason share what
    is left, reason gets more."""
    updated, project, source_max = next((u, p, s) for w, u, p, s in SHRINK if width >= w)
    cols = [Column(updated, "updated", 16 if updated == "updated" else 11),
            Column("project", "project", project)]
    if source_max:
        cols.append(Column("source", "source", min(source, source_max)))
    cols.append(Column("status", "status", STATUS_WIDTH))
    rest = max(20, width - sum(c.width + 1 for c in cols) - 1)
    preview = max(10, rest * 2 // 5)
    cols += [Column("preview", "preview", preview), Column("reason", "reason",
                                                            max(10, rest - preview - 1))]
    return cols


def short_time(ts: float | None, year: int, missing: str = "?") -> str:
    """11 columns: `11-20 10:30` in `year` (the newest row's), else `2025-11-20`."""
    if not ts:
        return missing
    t = time.localtime(ts)
    return time.strftime("%m-%d %H:%M" if t.tm_year == year else "%Y-%m-%d", t)


def newest_year(stamps: Iterable[float | None]) -> int:
    """The year of the newest of `stamps` (0: none): `short_time` leaves that one out."""
    newest = max((ts or 0 for ts in stamps), default=0)
    return time.localtime(newest).tm_year if newest else 0


def cell_values(s: Any, year: int = 0) -> dict[str, str]:
    return {
        "updated": local_time(s.updated_at),
        "updated_short": short_time(s.updated_at, year),
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


def sort_key(column_key: str) -> str:
    return "updated" if column_key == "updated_short" else column_key


class SessionHeader(Static):
    """The column titles, drawn with the same layout as the rows; the sorted one carries
    its arrow, a click on a title sorts by it."""

    @dataclass
    class SortClicked(Message):
        column: str

    def _table(self) -> SessionTable | None:
        return next(iter(self.parent.query(SessionTable)), None) if self.parent else None

    def _columns(self, width: int) -> list[Column]:
        table = self._table()
        if table is not None:
            width = table.rows_width() or width
        return layout(width, table.source_width if table is not None else SOURCE_DEFAULT)

    def render_header(self, width: int) -> None:
        table = self._table()
        order = table.order if table is not None else ENGINE_ORDER
        self._width = width
        self.update("".join(" " + set_cell_size(order.title(sort_key(c.key), c.title), c.width)
                            for c in self._columns(width)))

    def on_click(self, event: Any) -> None:
        x = 0
        for c in self._columns(getattr(self, "_width", 0) or self.size.width):
            if x <= event.x <= x + c.width:
                self.post_message(self.SortClicked(sort_key(c.key)))
                return
            x += c.width + 1


class SessionTable(CursorList):
    """Sessions, one per line, with a cursor. Enter opens the one under the cursor."""

    BINDINGS = [*MOVES, Binding("enter", "open", "Open", id="sessions.open")]
    COMPONENT_CLASSES = {"session-table--cursor", "session-table--odd"}
    DEFAULT_CSS = """
    SessionTable { height: 1fr; overflow-x: hidden; }
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
        self.source_width = SOURCE_DEFAULT
        self._header_width = 0
        self.year = 0  # the newest session's: short times leave it out
        self.order = ENGINE_ORDER

    @property
    def rows(self) -> list[Any]:
        return self.items

    def set_rows(self, rows: list[Any], keep: str | None = None) -> None:
        """Show `rows`; the cursor stays on the session `keep` (a rollout path) if present."""
        self._values.clear()
        self.year = newest_year(s.updated_at for s in rows)
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

    def rows_width(self) -> int:
        """The width the rows are laid out in: the table's, less the scrollbar once there
        is one (the header must follow it, or its titles stand off their columns)."""
        return self.scrollable_content_region.width

    def cache_key(self, index: int, item: Any) -> tuple[Any, ...]:
        return (item.rollout_path, item.status, self.rows_width())

    def render_item(self, index: int, s: Any, selected: bool, width: int) -> Strip:
        if selected:
            base = self.get_component_rich_style("session-table--cursor")
        elif index % 2:
            base = self.rich_style + self.get_component_rich_style("session-table--odd")
        else:
            base = self.rich_style
        values = self._values.get(index)
        if values is None:
            values = self._values[index] = cell_values(s, self.year)
        status = None if selected else Style.parse(STATUS_STYLE.get(s.status, "none"))
        inner = self.rows_width() or width
        if inner != self._header_width:  # a scrollbar came or went: the titles follow
            self._header_width = inner
            if self.parent is not None:
                for header in self.parent.query(SessionHeader):
                    self.call_later(header.render_header, inner)
        return Strip(row_segments(values, layout(inner, self.source_width), base,
                                  status)).adjust_cell_length(width, base)
