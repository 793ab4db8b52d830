"""A coloured unified diff, drawn lazily: only the lines on screen are rendered (the Line
API), and long lines wrap to the width. Parsing happens off the event loop (`parse_diff` is
a plain function a worker calls); the widget only lays out and draws.

Used by History (a commit's `git show --stat --patch`) and, through `HunkList`, by Review."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any, NamedTuple

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

STAT_BAR = re.compile(r"\| +\d+ ([+-]+)$")
HUNK_RE = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_CONTROL = {i: "\ufffd" for i in range(32) if i != 9} | {127: "\ufffd"}


class DiffRow(NamedTuple):
    """One logical line. `kind`: file, path, meta, stat, hunk, add, del, ctx, note, text.
    `sign` is the +/-/space column of a diff line ('' for headers); `hunk` numbers the hunk
    the row belongs to (-1: none); `secret` marks a line that adds a secret."""

    kind: str
    sign: str
    body: str
    hunk: int = -1
    secret: bool = False


def clean(text: str) -> str:
    """Tabs expanded, control characters made visible: nothing reaches the terminal raw."""
    return text.expandtabs(4).translate(_CONTROL)


def diff_line(line: str, hunk: int = -1, secret: bool = False) -> DiffRow:
    """A line inside a hunk, by its first character."""
    sign, body = line[:1], clean(line[1:].rstrip("\n"))
    kind = {"+": "add", "-": "del", " ": "ctx", "\\": "note"}.get(sign, "ctx")
    if kind == "note":
        return DiffRow("note", "", clean(line.rstrip("\n")), hunk)
    return DiffRow(kind, sign or " ", body, hunk, secret)


def parse_diff(text: str) -> list[DiffRow]:
    """`git show --stat --patch` or `diff -u` output as rows. Hunk bodies are counted from
    their `@@` header, so a removed line starting `--` is never taken for a file header."""
    rows: list[DiffRow] = []
    old_left = new_left = 0
    hunk = -1
    seen_diff = git = False
    for raw in text.splitlines():
        if old_left > 0 or new_left > 0:
            row = diff_line(raw or " ", hunk)
            if row.kind in ("ctx", "del"):
                old_left -= 1
            if row.kind in ("ctx", "add"):
                new_left -= 1
            rows.append(row)
            continue
        if raw.startswith("\\"):
            rows.append(DiffRow("note", "", clean(raw), hunk))
            continue
        m = HUNK_RE.match(raw)
        if m:
            hunk += 1
            old_left = int(m.group(1) if m.group(1) is not None else 1)
            new_left = int(m.group(2) if m.group(2) is not None else 1)
            rows.append(DiffRow("hunk", "", clean(raw), hunk))
        elif raw.startswith("diff --git ") or (raw.startswith("--- ") and not git):
            seen_diff = True
            git = git or raw.startswith("diff --git ")
            rows.append(DiffRow("file", "", clean(raw)))
        elif raw.startswith(("--- ", "+++ ")):
            rows.append(DiffRow("path" if git else "file", "", clean(raw)))
        elif not seen_diff:
            rows.append(DiffRow("stat", "", clean(raw)))
        else:
            rows.append(DiffRow("meta", "", clean(raw)))
    return rows


def wrap(text: str, width: int) -> list[str]:
    """`text` in pieces of at most `width` cells, broken after a space when one is near."""
    width = max(1, width)
    if len(text) <= width and (text.isascii() or cell_len(text) <= width):
        return [text]
    out: list[str] = []
    while text:
        if cell_len(text) <= width:
            out.append(text)
            break
        head = (text[:width] if text.isascii() else chop_cells(text, width)[0]) or text[0]
        cut = head.rfind(" ")
        if cut >= len(head) // 2:
            head = head[: cut + 1]
        out.append(head)
        text = text[len(head):]
    return out or [""]


class DiffView(ScrollView, can_focus=True):
    """Rows of a diff, wrapped to the width, coloured by kind. Subclasses may draw a gutter
    (`GUTTER` cells wide, `gutter_segments`) and change a row's style or text."""

    BINDINGS = [
        Binding("k", "scroll_up", "Up", show=False),
        Binding("j", "scroll_down", "Down", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]
    COMPONENT_CLASSES = {
        "diff-view--add", "diff-view--del", "diff-view--ctx", "diff-view--hunk",
        "diff-view--file", "diff-view--path", "diff-view--meta", "diff-view--stat",
        "diff-view--note", "diff-view--text", "diff-view--secret", "diff-view--empty",
    }
    # The colours are the widget's own (shared by History and Review), from the theme.
    DEFAULT_CSS = """
    DiffView { height: 1fr; overflow-x: hidden; overflow-y: auto; scrollbar-gutter: stable; }
    DiffView > .diff-view--add { color: $text-success; background: $success 12%; }
    DiffView > .diff-view--del { color: $text-error; background: $error 12%; }
    DiffView > .diff-view--ctx { color: $text-muted; }
    DiffView > .diff-view--hunk { color: $text-accent; }
    DiffView > .diff-view--file { color: $text; text-style: bold; background: $panel; }
    DiffView > .diff-view--path { color: $text; text-style: bold; }
    DiffView > .diff-view--meta { color: $text-muted; text-style: italic; }
    DiffView > .diff-view--stat { color: $text; }
    DiffView > .diff-view--note { color: $text-muted; text-style: italic; }
    DiffView > .diff-view--text { color: $text; }
    DiffView > .diff-view--secret { color: $error; text-style: bold reverse; }
    DiffView > .diff-view--empty { color: $text-muted; text-style: italic; }
    """
    GUTTER = 0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[DiffRow] = []
        self.empty_text = ""
        self._width = 0
        self._starts: list[int] = []  # first visual line of each row
        self._pieces: dict[int, list[str]] = {}  # rows that wrap: their pieces
        self._strips: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)
        self._styles: dict[str, Style] = {}

    # -- data -----------------------------------------------------------------------------
    def show_rows(self, rows: list[DiffRow], empty_text: str = "") -> None:
        """Show `rows` from the top; `empty_text` when there are none."""
        self.rows = rows
        self.empty_text = empty_text
        self._width = 0
        self._relayout()
        self.scroll_to(0, 0, animate=False, immediate=True)

    def row_text(self, index: int, row: DiffRow) -> str:
        """The text drawn for a row (subclasses may decorate it; its length must not
        depend on state that changes without a relayout)."""
        return row.body

    def row_style(self, index: int, row: DiffRow) -> Style:
        return self._style("secret" if row.secret else row.kind)

    def gutter_segments(self, index: int, row: DiffRow, first: bool) -> list[Segment]:
        return []

    def cache_key(self, index: int) -> tuple[Any, ...]:
        """What, besides the row and width, a drawn line depends on."""
        return ()

    # -- layout ---------------------------------------------------------------------------
    @property
    def text_width(self) -> int:
        return max(8, self.scrollable_content_region.width - self.GUTTER)

    def _relayout(self) -> None:
        width = self.text_width
        self._width = width
        self._pieces = {}
        self._strips.clear()
        self._styles = {}
        starts, y = [], 0
        for i, row in enumerate(self.rows):
            starts.append(y)
            text = self.row_text(i, row)
            room = width - len(row.sign)
            if len(text) <= room and (text.isascii() or cell_len(text) <= room):
                y += 1
            else:
                pieces = wrap(text, room)
                self._pieces[i] = pieces
                y += len(pieces)
        self._starts = starts
        self.virtual_size = Size(self.scrollable_content_region.width,
                                 y if self.rows else 1)
        self._scroll_update(self.virtual_size)  # scrollbars follow now, as TextArea does
        self.refresh()

    def on_resize(self) -> None:
        if self.text_width != self._width:
            self._relayout()

    def row_at(self, y: int) -> tuple[int, int]:
        """(row index, piece index) of visual line `y`."""
        i = bisect_right(self._starts, y) - 1
        return i, y - self._starts[i]

    def row_span(self, first_row: int, last_row: int) -> tuple[int, int]:
        """(first visual line, number of lines) of rows first_row..last_row inclusive."""
        start = self._starts[first_row]
        end = (self._starts[last_row + 1] if last_row + 1 < len(self._starts)
               else self.virtual_size.height)
        return start, end - start

    def refresh_rows(self) -> None:
        """Redraw after a change of selection or cursor (the layout stays)."""
        self._strips.clear()
        self.refresh()

    # -- drawing --------------------------------------------------------------------------
    def _style(self, kind: str) -> Style:
        style = self._styles.get(kind)
        if style is None:
            style = self._styles[kind] = self.rich_style + self.get_component_rich_style(
                f"diff-view--{kind}")
        return style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = {}
        self._strips.clear()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = self.scroll_offset.y + y
        if not self.rows:
            if y == 0 and self.empty_text:
                return Strip([Segment(self.empty_text, self._style("empty"))]).adjust_cell_length(
                    width, self.rich_style)
            return Strip.blank(width, self.rich_style)
        if index >= self.virtual_size.height:
            return Strip.blank(width, self.rich_style)
        i, piece = self.row_at(index)
        key = (i, piece, width, self.cache_key(i))
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._draw(i, piece, width)
        return strip

    def _draw(self, i: int, piece: int, width: int) -> Strip:
        row = self.rows[i]
        style = self.row_style(i, row)
        pieces = self._pieces.get(i)
        text = pieces[piece] if pieces is not None else self.row_text(i, row)
        segs = self.gutter_segments(i, row, piece == 0)
        if row.sign:
            segs.append(Segment(row.sign if piece == 0 else " " * len(row.sign), style))
        bar = STAT_BAR.search(text) if row.kind == "stat" else None
        if bar:  # ` 12 ++++--` in a --stat line: the pluses green, the minuses red
            segs.append(Segment(text[: bar.start(1)], style))
            pluses = bar.group(1).rstrip("-")
            segs.append(Segment(pluses, style + Style(color=self._style("add").color)))
            segs.append(Segment(bar.group(1)[len(pluses):],
                                style + Style(color=self._style("del").color)))
        else:
            segs.append(Segment(text, style))
        # add/del/secret backgrounds run to the edge, like a diff tool's
        edge = row.kind in ("add", "del", "file", "hunk") or row.secret
        fill = style if edge else self.rich_style
        return Strip(segs).adjust_cell_length(width, fill)
