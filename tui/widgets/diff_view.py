"""A coloured unified diff, drawn lazily: only the lines on screen are rendered (the Line
API), and long lines wrap to the width. Parsing happens off the event loop (`parse_diff` is
a plain function a worker calls), and so may the wrapping (`lay_out`, to a width: Review
wraps a proposal in its loading worker); the widget adopts a layout and draws.

Used by History (a commit's `git show --stat --patch`) and, through `HunkList`, by Review."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
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
RELAYOUT_IN_THREAD = 2000  # rows from which a width change re-wraps off the event loop


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
    """`text` in pieces of at most `width` cells, broken after a space when one is near.
    Linear in the length: each piece is chopped from a window of the text, not the rest of
    it, and the cells left are counted down rather than measured again."""
    width = max(1, width)
    if len(text) <= width and (text.isascii() or cell_len(text) <= width):
        return [text]
    out: list[str] = []
    window = 4 * width + 8  # enough characters for the first piece and two more after it
    left = cell_len(text)
    while text:
        if left <= width and cell_len(text) <= width:
            out.append(text)
            break
        if text.isascii() if len(text) <= window else text[:window].isascii():
            head = text[:width]
        else:
            lines = chop_cells(text[:window], width)
            if len(lines) < 3 and len(text) > window:  # a window too short to be sure
                lines = chop_cells(text, width)
            head = lines[0]
        head = head or text[0]
        cut = head.rfind(" ")
        if cut >= len(head) // 2:
            head = head[: cut + 1]
        out.append(head)
        left -= cell_len(head)
        text = text[len(head):]
    return out or [""]


class Layout(NamedTuple):
    """Rows wrapped to a width: where each row starts (visual line) and, for a row that
    wraps, the offsets in its text where its pieces start. A plain value, so a worker can
    build it (`lay_out`) and the widget adopt it when the width still matches."""

    width: int  # the text width laid out for
    starts: list[int]  # first visual line of each row
    cuts: dict[int, list[int]]  # rows that wrap: the start offset of each piece
    height: int  # visual lines in all


def lay_out(rows: list[DiffRow], texts: Iterable[str], width: int) -> Layout:
    """`rows` (drawn as `texts`) wrapped to `width` cells less each row's sign column."""
    starts: list[int] = []
    cuts: dict[int, list[int]] = {}
    y = 0
    for i, (row, text) in enumerate(zip(rows, texts, strict=True)):
        starts.append(y)
        room = width - len(row.sign)
        if len(text) <= room and (text.isascii() or cell_len(text) <= room):
            y += 1
            continue
        at, offsets = 0, []
        for piece in wrap(text, room):
            offsets.append(at)
            at += len(piece)
        cuts[i] = offsets
        y += len(offsets)
    return Layout(width, starts, cuts, y)


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
        self._cuts: dict[int, list[int]] = {}  # rows that wrap: where their pieces start
        self._strips: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)
        self._styles: dict[str, Style] = {}

    # -- data -----------------------------------------------------------------------------
    def show_rows(self, rows: list[DiffRow], empty_text: str = "",
                  layout: Layout | None = None) -> None:
        """Show `rows` from the top; `empty_text` when there are none. `layout`, built off
        the event loop for these rows, is taken when its width is the widget's; otherwise
        the rows are wrapped here."""
        self.rows = rows
        self.empty_text = empty_text
        self._width = 0
        if layout is not None and layout.width == self.text_width \
                and len(layout.starts) == len(rows):
            self._adopt(layout)
        else:
            self._relayout()
        self.scroll_to(0, 0, animate=False, immediate=True)

    def row_text(self, index: int, row: DiffRow) -> str:
        """The text drawn for a row (subclasses may decorate it; its length and where it
        wraps must not depend on state that changes without a relayout)."""
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
        self._adopt(lay_out(self.rows, (self.row_text(i, row) for i, row in
                                        enumerate(self.rows)), width))

    def _adopt(self, layout: Layout) -> None:
        self._width = layout.width
        self._cuts = layout.cuts
        self._strips.clear()
        self._styles = {}
        self._starts = layout.starts
        self.virtual_size = Size(self.scrollable_content_region.width,
                                 layout.height if self.rows else 1)
        self._scroll_update(self.virtual_size)  # scrollbars follow now, as TextArea does
        self.refresh()

    def on_resize(self) -> None:
        width = self.text_width
        if width == self._width:
            return
        if len(self.rows) < RELAYOUT_IN_THREAD:
            self._relayout()
            return
        # a long diff is re-wrapped in a thread; until then the old layout is drawn, cut to
        # the new width (a moment, once per resize)
        rows = self.rows
        texts = [self.row_text(i, row) for i, row in enumerate(rows)]
        self.run_worker(lambda: self.app.call_from_thread(self._adopt_if_current, rows,
                                                          lay_out(rows, texts, width)),
                        thread=True, exclusive=True, group="diff-relayout",
                        name="wrapping the diff", exit_on_error=False)

    def _adopt_if_current(self, rows: list[DiffRow], layout: Layout) -> None:
        """Take a layout built in a thread, unless the rows or the width changed since."""
        if rows is self.rows and layout.width == self.text_width:  # else a newer one comes
            self._adopt(layout)

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
        text = self.row_text(i, row)
        cuts = self._cuts.get(i)
        if cuts is not None:
            end = cuts[piece + 1] if piece + 1 < len(cuts) else len(text)
            text = text[cuts[piece]:end]
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
