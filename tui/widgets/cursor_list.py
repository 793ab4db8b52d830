"""A list drawn with the Line API (only the lines on screen are rendered) and a cursor: the
base of the sessions table and the history's commit list (a DataTable that moves like it:
moving_table.py).

Subclasses set `items` through `show_items`, draw one line in `render_item`, and define the
nested messages `Highlighted(item)` and `Opened(item)` the cursor posts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

MOVES = [
    Binding("up,k", "move(-1)", "Up", show=False),
    Binding("down,j", "move(1)", "Down", show=False),
    Binding("pageup", "page(-1)", "Page up", show=False),
    Binding("pagedown", "page(1)", "Page down", show=False),
    Binding("home,g", "jump(0)", "First", show=False),
    Binding("end,G", "jump(-1)", "Last", show=False),
]


class CursorList(ScrollView, can_focus=True):
    Highlighted: Callable[[Any], Message]  # nested message classes taking the item
    Opened: Callable[[Any], Message]

    cursor: reactive[int] = reactive(0, always_update=True)

    def __init__(self, cache_size: int = 2048, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: list[Any] = []
        self._cache: LRUCache[tuple[Any, ...], Strip] = LRUCache(cache_size)

    def show_items(self, items: list[Any], cursor: int = 0) -> None:
        self.items = items
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(items))
        self._scroll_update(self.virtual_size)
        self.cursor = min(max(0, cursor), max(0, len(items) - 1))
        self.refresh()

    @property
    def current(self) -> Any | None:
        return self.items[self.cursor] if 0 <= self.cursor < len(self.items) else None

    # -- drawing --------------------------------------------------------------------------
    def render_item(self, index: int, item: Any, selected: bool, width: int) -> Strip:
        raise NotImplementedError

    def cache_key(self, index: int, item: Any) -> tuple[Any, ...]:
        """What a drawn line depends on besides its place, the cursor, width and focus."""
        return ()

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.size.width
        if index >= len(self.items):
            return Strip.blank(width, self.rich_style)
        item = self.items[index]
        selected = index == self.cursor
        key = (index, selected, width, self.has_focus, *self.cache_key(index, item))
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self.render_item(index, item, selected, width)
        return strip

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.items))
        self._cache.clear()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def on_focus(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._cache.clear()
        self.refresh()

    def watch_cursor(self, old: int, new: int) -> None:
        if not self.items:
            return
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, force=True,
                              immediate=True)
        self.refresh()
        self.post_message(self.Highlighted(self.items[new]))

    # -- actions --------------------------------------------------------------------------
    def action_move(self, delta: int) -> None:
        if self.items:
            self.cursor = max(0, min(len(self.items) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.size.height - 1))

    def action_jump(self, where: int) -> None:
        if self.items:
            self.cursor = 0 if where == 0 else len(self.items) - 1

    def action_open(self) -> None:
        if self.current is not None:
            self.post_message(self.Opened(self.current))

    def on_click(self, event: Any) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self.items):
            if index == self.cursor and event.chain >= 2:
                self.action_open()
            self.cursor = index
