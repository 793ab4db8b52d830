"""A memory file with line numbers and Markdown highlighting: read-only until the user
presses `e`, then an editor that remembers the version it started from.

Beside the line numbers, a usage gutter (issue 11, `set_usage`): how many times later sessions
cited each line and how long ago the last time was (`12× 3d`); `·` marks a line never cited; a
line that drops out of the memory within a week under Codex's `max_unused_days` rule has its
count in the warning colour. While editing, the gutter is hidden: the lines move."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.strip import Strip
from textual.widgets import TextArea

USAGE_WIDTH = 9  # ` 12× 3d  `
SOON_S = 7 * 86400  # "drops out soon": within a week


def age_text(seconds: float) -> str:
    """A short age: 5m, 3h, 2d, 6w, 14mo, 2y."""
    for unit, size in (("y", 365 * 86400), ("mo", 30 * 86400), ("w", 7 * 86400),
                       ("d", 86400), ("h", 3600)):
        if seconds >= size * (2 if unit in ("y", "mo", "w") else 1):
            return f"{int(seconds // size)}{unit}"
    return f"{max(0, int(seconds // 60))}m"


def usage_cell(stat: Any, now: float) -> tuple[str, str]:
    """The gutter's text for one line and its kind: cited, soon (drops out within a week),
    never (a line with text never cited), or blank."""
    if stat is None or not stat.text.strip():
        return " " * USAGE_WIDTH, "blank"
    soon = stat.drops_out is not None and stat.drops_out - now < SOON_S
    if stat.count:
        age = age_text(now - stat.last_cited) if stat.last_cited else ""
        return f"{stat.count:>3}× {age:<3} "[:USAGE_WIDTH].ljust(USAGE_WIDTH), \
            "soon" if soon else "cited"
    return "    ·    ", "soon" if soon else "never"


class MemoryEditor(TextArea):
    """Shows one `MemoryFileText`; `begin_edit` / `end_edit` switch between viewing and
    editing. `base` is the file as it was opened: a save names its version, and leaving
    without saving puts its text back."""

    DEFAULT_CSS = """
    MemoryEditor { height: 1fr; }
    """
    # viewing: g / Home to the top, G / End to the bottom (editing: Home / End stay on the line)
    # (a key bound here replaces TextArea's binding of it: editing keeps Home / End by the
    # second pair, tried when view_jump is off)
    BINDINGS = [
        Binding("g,home", "view_jump(0)", "Top", show=False),
        Binding("G,end", "view_jump(-1)", "Bottom", show=False),
        Binding("j", "view_move(1)", "Down", show=False),  # viewing: j / k move the line,
        Binding("k", "view_move(-1)", "Up", show=False),  # as in every list
        Binding("home", "cursor_line_start", "Cursor line start", show=False),
        Binding("end", "cursor_line_end", "Cursor line end", show=False),
    ]

    usage: dict[int, Any] = {}  # 1-based line -> LineStat (engine FileUsage); class default:
    #                             TextArea asks for the gutter's width while it is built

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", language="markdown", theme="css", soft_wrap=True,
                         read_only=True, show_line_numbers=True, tab_behavior="indent",
                         **kwargs)
        self.base: Any | None = None  # engine MemoryFileText
        self.usage = {}
        self.usage_now = 0.0  # the engine clock's time of the usage shown (`set_usage`)

    @property
    def editing(self) -> bool:
        return not self.read_only

    @property
    def dirty(self) -> bool:
        return self.editing and self.base is not None and self.text != self.base.text

    def show(self, file: Any) -> None:
        """View `file` (read-only), keeping the cursor line when it is the same file."""
        same = self.base is not None and self.base.path == file.path
        row = self.cursor_location[0] if same else 0
        if not (same and self.base is not None and self.base.text == file.text):
            self.usage = {}  # counted for other lines: the pane loads the file's own
        self.base = file
        self.read_only = True
        self.remove_class("editing")
        self.load_text(file.text)
        self.cursor_location = (min(row, self.document.line_count - 1), 0)
        if not same:
            self.scroll_home(animate=False)

    def clear_file(self) -> None:
        self.base = None
        self.usage = {}
        self.read_only = True
        self.remove_class("editing")
        self.load_text("")

    # -- the usage gutter -------------------------------------------------------------------
    def set_usage(self, usage: Any | None, now: float) -> None:
        """Show `usage` (engine FileUsage of the file shown) in the gutter, its ages measured
        at `now` (the engine's clock); None hides it."""
        self.usage = {s.line: s for s in usage.lines} if usage is not None else {}
        self.usage_now = now
        self._refresh_gutter()

    def _refresh_gutter(self) -> None:
        self._rewrap_and_refresh_virtual_size()
        self.refresh()

    @property
    def showing_usage(self) -> bool:
        return bool(self.usage) and not self.editing

    @property
    def gutter_width(self) -> int:
        return super().gutter_width + (USAGE_WIDTH if self.showing_usage else 0)

    def cursor_stat(self) -> Any | None:
        """The LineStat of the cursor's line, if the gutter is shown."""
        return self.usage.get(self.cursor_location[0] + 1) if self.showing_usage else None

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if not self.showing_usage:
            return strip
        info = self.wrapped_document._offset_to_line_info
        y_offset = y + int(self.scroll_offset.y)
        if not 0 <= y_offset < len(info):
            return strip
        line_index, section = info[y_offset]
        text, kind = usage_cell(self.usage.get(line_index + 1), self.usage_now) \
            if section == 0 else (" " * USAGE_WIDTH, "blank")
        theme = self._theme
        base = theme.gutter_style if theme and theme.gutter_style else Style()
        colour = {"cited": Style(color="cyan"), "soon": Style(color="yellow", bold=True),
                  "never": Style(dim=True)}.get(kind, Style(dim=True))  # (a plain blank cell
        #                                       was dropped from SVG screenshots)
        cell = Strip([Segment(text, base + colour)], USAGE_WIDTH)
        return Strip.join([cell, strip.crop(USAGE_WIDTH, strip.cell_length)])

    def begin_edit(self) -> None:
        self.read_only = False
        self.add_class("editing")
        self._refresh_gutter()  # hidden while editing: the lines move
        self.focus()

    def end_edit(self, keep_text: bool = False) -> None:
        """Back to viewing; the text typed is dropped unless `keep_text`."""
        self.read_only = True
        self.remove_class("editing")
        if keep_text:
            self.usage = {}  # the saved text's lines are not the ones counted: reloaded
        if not keep_text and self.base is not None and self.text != self.base.text:
            row = self.cursor_location[0]
            self.load_text(self.base.text)
            self.cursor_location = (min(row, self.document.line_count - 1), 0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("view_jump", "view_move"):
            return self.read_only
        return super().check_action(action, parameters)

    def action_view_jump(self, where: int) -> None:
        last = max(0, self.document.line_count - 1)
        self.move_cursor((0 if where == 0 else last, 0))
        if where == 0:
            self.scroll_home(animate=False)
        else:
            self.scroll_end(animate=False)

    def action_view_move(self, delta: int) -> None:
        if delta > 0:
            self.action_cursor_down()
        else:
            self.action_cursor_up()

    async def _on_key(self, event: events.Key) -> None:
        # Textual calls TextArea's own `_on_key` after this one. While editing it would use
        # Escape to move focus on; here Escape leaves edit mode, so it skips TextArea's
        # handler and bubbles on to the pane's binding.
        if event.key == "escape" and self.editing:
            event.prevent_default()
