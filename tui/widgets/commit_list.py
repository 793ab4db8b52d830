"""The history's commits, one per line with a cursor: short hash, local time, who made the
state (each origin its own colour) and the summary. Drawn with the Line API, so a history of
thousands of commits costs no more than one screenful."""

from __future__ import annotations

import time
from typing import Any

from rich.cells import cell_len, set_cell_size
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

ORIGIN_LABEL = {"codex": "Codex", "consolidation": "consolidation", "user": "user",
                "external": "outside", "restore": "restore"}
COLUMNS = (("commit", 10), ("time", 16), ("origin", 13))


def when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


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


class CommitList(ScrollView, can_focus=True):
    """Enter posts `Opened` (the pane moves focus to the diff)."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "jump(0)", "Newest", show=False),
        Binding("end,G", "jump(-1)", "Oldest", show=False),
        Binding("enter", "open", "Read the diff", id="history.open"),
    ]
    COMPONENT_CLASSES = {
        "commit-list--cursor", "commit-list--hash", "commit-list--time",
        "commit-list--codex", "commit-list--consolidation", "commit-list--user",
        "commit-list--external", "commit-list--restore",
    }
    DEFAULT_CSS = """
    CommitList { height: 1fr; overflow-x: hidden; }
    CommitList > .commit-list--cursor { background: $block-cursor-background;
        color: $block-cursor-foreground; text-style: bold; }
    CommitList:blur > .commit-list--cursor { background: $block-cursor-blurred-background;
        text-style: none; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

    class Highlighted(Message):
        def __init__(self, entry: Any) -> None:
            super().__init__()
            self.entry = entry

    class Opened(Message):
        def __init__(self, entry: Any) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entries: list[Any] = []
        self._cache: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)

    def set_entries(self, entries: list[Any], keep: str | None = None) -> None:
        """Show `entries` (newest first); the cursor stays on commit `keep` if present."""
        self.entries = entries
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(entries))
        self._scroll_update(self.virtual_size)
        target = next((i for i, e in enumerate(entries) if e.commit == keep), 0)
        self.cursor = min(target, max(0, len(entries) - 1))
        self.refresh()

    @property
    def current(self) -> Any | None:
        return self.entries[self.cursor] if 0 <= self.cursor < len(self.entries) else None

    # -- drawing --------------------------------------------------------------------------
    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.entries))
        self._cache.clear()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.size.width
        if index >= len(self.entries):
            return Strip.blank(width, self.rich_style)
        selected = index == self.cursor
        key = (index, selected, width, self.has_focus)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._draw(self.entries[index], selected, width)
        return strip

    def _part(self, name: str, base: Style, selected: bool) -> Style:
        if selected:
            return base
        return base + self.get_component_rich_style(f"commit-list--{name}", partial=True)

    def _draw(self, e: Any, selected: bool, width: int) -> Strip:
        base = self.rich_style + (self.get_component_rich_style("commit-list--cursor")
                                  if selected else Style())
        summary = max(10, width - sum(w + 1 for _, w in COLUMNS) - 1)
        origin = e.origin if e.origin in ORIGIN_LABEL else "external"
        segs = [
            Segment(" " + fit(e.commit[:10], 10), self._part("hash", base, selected)),
            Segment(" " + fit(when(e.time), 16), self._part("time", base, selected)),
            Segment(" " + fit(ORIGIN_LABEL[origin], 13), self._part(origin, base, selected)),
            Segment(" " + fit(e.summary, summary), base),
        ]
        return Strip(segs).adjust_cell_length(width, base)

    def watch_cursor(self, old: int, new: int) -> None:
        if not self.entries:
            return
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, force=True,
                              immediate=True)
        self._cache.clear()
        self.refresh()
        self.post_message(self.Highlighted(self.entries[new]))

    def on_focus(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._cache.clear()
        self.refresh()

    # -- actions --------------------------------------------------------------------------
    def action_move(self, delta: int) -> None:
        if self.entries:
            self.cursor = max(0, min(len(self.entries) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.size.height - 1))

    def action_jump(self, where: int) -> None:
        if self.entries:
            self.cursor = 0 if where == 0 else len(self.entries) - 1

    def action_open(self) -> None:
        if self.current is not None:
            self.post_message(self.Opened(self.current))

    def on_click(self, event: Any) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self.entries):
            if index == self.cursor and event.chain >= 2:
                self.action_open()
            self.cursor = index
