"""A virtual table of sessions: only the rows on screen are drawn (the Line API), so 10,000
sessions cost no more to show than 30."""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from ..render import STATUS_STYLE


class Column(NamedTuple):
    key: str
    title: str
    width: int


FIXED = (("updated", "updated", 16), ("project", "project", 16), ("source", "source", 8),
         ("status", "status", 15))


def layout(width: int) -> list[Column]:
    """Fixed columns first; preview and reason share what is left (reason gets more)."""
    cols = [Column(*c) for c in FIXED]
    rest = max(20, width - sum(c.width + 1 for c in cols) - 1)
    preview = max(10, rest * 2 // 5)
    cols += [Column("preview", "preview", preview), Column("reason", "reason",
                                                            max(10, rest - preview - 1))]
    return cols


def when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "?"


def cell_values(s: Any) -> dict[str, str]:
    return {
        "updated": when(s.updated_at),
        "project": s.project,
        "source": s.source or "?",
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
        cols = layout(width)
        self.update("".join(" " + set_cell_size(c.title, c.width) for c in cols))


class SessionTable(ScrollView, can_focus=True):
    """Sessions, one per line, with a cursor. Enter opens the one under the cursor."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "jump(0)", "First", show=False),
        Binding("end,G", "jump(-1)", "Last", show=False),
        Binding("enter", "open", "Open", id="sessions.open"),
    ]
    COMPONENT_CLASSES = {"session-table--cursor", "session-table--odd"}
    DEFAULT_CSS = """
    SessionTable { height: 1fr; }
    SessionTable > .session-table--cursor { background: $block-cursor-background;
        color: $block-cursor-foreground; text-style: bold; }
    SessionTable:blur > .session-table--cursor { background: $block-cursor-blurred-background;
        text-style: none; }
    SessionTable > .session-table--odd { background: $surface-lighten-1 20%; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

    class Highlighted(Message):
        def __init__(self, session: Any) -> None:
            super().__init__()
            self.session = session

    class Opened(Message):
        def __init__(self, session: Any) -> None:
            super().__init__()
            self.session = session

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[Any] = []
        self._cache: LRUCache[tuple[Any, ...], Strip] = LRUCache(2048)
        self._values: LRUCache[int, dict[str, str]] = LRUCache(4096)

    # -- data ---------------------------------------------------------------------------
    def set_rows(self, rows: list[Any], keep: str | None = None) -> None:
        """Show `rows`; the cursor stays on the session `keep` (a rollout path) if present."""
        self.rows = rows
        self._cache.clear()
        self._values.clear()
        self.virtual_size = Size(self.size.width, len(rows))
        target = 0
        if keep is not None:
            target = next((i for i, s in enumerate(rows) if s.rollout_path == keep), 0)
        self.cursor = min(target, max(0, len(rows) - 1))
        self.refresh()

    @property
    def current(self) -> Any | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    # -- drawing ------------------------------------------------------------------------
    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        _, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        s = self.rows[index]
        selected = index == self.cursor
        key = (index, selected, width, self.has_focus, s.rollout_path, s.status)
        strip = self._cache.get(key)
        if strip is None:
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
            strip = Strip(row_segments(values, layout(width), base, status)).adjust_cell_length(
                width, base)
            self._cache[key] = strip
        return strip

    def watch_cursor(self, old: int, new: int) -> None:
        if not self.rows:
            return
        self._scroll_cursor_into_view()
        self.refresh()
        self.post_message(self.Highlighted(self.rows[new]))

    def on_focus(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._cache.clear()
        self.refresh()

    def _scroll_cursor_into_view(self) -> None:
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, force=True,
                              immediate=True)

    # -- actions ------------------------------------------------------------------------
    def action_move(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.size.height - 1))

    def action_jump(self, where: int) -> None:
        if self.rows:
            self.cursor = 0 if where == 0 else len(self.rows) - 1

    def action_open(self) -> None:
        if self.current is not None:
            self.post_message(self.Opened(self.current))

    def on_click(self, event: Any) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self.rows):
            if index == self.cursor and event.chain >= 2:
                self.action_open()
            self.cursor = index
