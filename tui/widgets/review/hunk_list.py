"""A proposal's hunks as one scrolling diff with a cursor on a hunk and a check mark per
hunk: which of them an accept takes. Lines that add a secret are marked ⚠ in reverse red. A
hunk an ad-hoc note caused says so under its header ("from note 2026-12-03 'forget: …'")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region
from textual.message import Message

from ..diff_view import DiffRow, DiffView, Layout, clean, diff_line, lay_out

SECRET_MARK = "⚠"


class HunkRows(NamedTuple):
    """What the list draws, built off the event loop by `hunk_rows`."""

    rows: list[DiffRow]
    header_rows: list[int]  # the row of each hunk's header
    secrets: dict[int, dict[str, Any]]  # hunk number → the first secret it would add
    counts: dict[str, tuple[int, int]]  # path → lines added, removed
    layout: Layout | None = None  # the rows wrapped to the list's width (`with_layout`)


def secret_in(hunk: Any, secrets: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The first secret inside the hunk's new range: the same test the engine's accept makes."""
    first, count = hunk.new_range
    for s in secrets:
        if s["path"] == hunk.path and first <= s["line"] < first + max(count, 1):
            return s
    return None


def hunk_rows(hunks: list[Any], secrets: list[dict[str, Any]]) -> HunkRows:
    rows: list[DiffRow] = []
    header_rows: list[int] = []
    flagged: dict[int, dict[str, Any]] = {}
    counts: dict[str, tuple[int, int]] = {}
    secret_lines = {(s["path"], s["line"]) for s in secrets}
    for k, h in enumerate(hunks):
        adds = sum(1 for x in h.lines if x.startswith("+"))
        dels = sum(1 for x in h.lines if x.startswith("-"))
        a, d = counts.get(h.path, (0, 0))
        counts[h.path] = (a + adds, d + dels)
        found = secret_in(h, secrets)
        if found is not None:
            flagged[k] = found
        mark = f"  {SECRET_MARK} adds a secret" if found else ""
        header_rows.append(len(rows))
        rows.append(DiffRow("hunk", "", clean(f"{h.path}  {h.header}  +{adds} −{dels}{mark}"),
                            k, found is not None))
        for note in h.notes:
            rows.append(DiffRow("meta", "", clean(f"    from note {note.label}"), k))
        line_no = h.new_range[0]
        for x in h.lines:
            secret = False
            if x[:1] in (" ", "+"):
                secret = (h.path, line_no) in secret_lines
                line_no += 1
            rows.append(diff_line(x, k, secret))
        rows.append(DiffRow("text", "", "", k))
    return HunkRows(rows, header_rows, flagged, counts)


def hunk_text(row: DiffRow, checked: bool) -> str:
    """A row as the list draws it: a hunk's header behind its check box."""
    if row.kind == "hunk":
        return f"[{'x' if checked else ' '}] {row.body}"
    return row.body


def with_layout(data: HunkRows, width: int) -> HunkRows:
    """`data` with its rows wrapped to `width` text cells, off the event loop: a proposal of
    thousands of lines is laid out in the loading worker, not while the app should answer
    keys. (A check box is as wide ticked as not, and wraps the same.)"""
    texts = (hunk_text(row, True) for row in data.rows)
    return data._replace(layout=lay_out(data.rows, texts, width))


class HunkList(DiffView):
    """Up/down (j/k) move between hunks and scroll to the one under the cursor; the pane
    toggles and accepts. A click on a hunk moves the cursor there; on its check box, toggles."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Previous hunk", show=False),
        Binding("down,j", "move(1)", "Next hunk", show=False),
        Binding("home,g", "jump(0)", "First hunk", show=False),
        Binding("end,G", "jump(-1)", "Last hunk", show=False),
    ]
    COMPONENT_CLASSES = {"hunk-list--cursor", "hunk-list--bar", "hunk-list--off"}
    DEFAULT_CSS = """
    HunkList > .hunk-list--cursor { background: $block-cursor-background;
        color: $block-cursor-foreground; text-style: bold; }
    HunkList:blur > .hunk-list--cursor { background: $block-cursor-blurred-background;
        color: $text-accent; text-style: bold; }
    HunkList > .hunk-list--bar { color: $accent; }
    HunkList > .hunk-list--off { color: $text-disabled; }
    """
    GUTTER = 2

    @dataclass
    class Changed(Message):
        """The cursor moved or the selection changed."""

        hunk_list: HunkList

        @property
        def control(self) -> HunkList:
            return self.hunk_list

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.header_rows: list[int] = []
        self.secret_hunks: dict[int, dict[str, Any]] = {}
        self.selected: set[int] = set()
        self.cursor = 0

    def set_hunks(self, data: HunkRows, selected: set[int] | None = None, cursor: int = 0,
                  empty_text: str = "") -> None:
        """Show the hunks; all selected unless `selected` says otherwise."""
        self.header_rows = data.header_rows
        self.secret_hunks = data.secrets
        n = len(data.header_rows)
        self.selected = set(range(n)) if selected is None else {i for i in selected if i < n}
        self.cursor = min(max(0, cursor), max(0, n - 1))
        self.show_rows(data.rows, empty_text, data.layout)
        if n:
            self.call_after_refresh(self.scroll_to_cursor)
        self.post_message(self.Changed(self))

    @property
    def count(self) -> int:
        return len(self.header_rows)

    # -- drawing --------------------------------------------------------------------------
    def row_text(self, index: int, row: DiffRow) -> str:
        return hunk_text(row, row.hunk in self.selected)

    def cache_key(self, index: int) -> tuple[Any, ...]:
        k = self.rows[index].hunk
        return (k == self.cursor, k in self.selected, self.has_focus)

    def row_style(self, index: int, row: DiffRow) -> Style:
        if row.kind == "hunk" and row.hunk == self.cursor:
            return self.rich_style + self.get_component_rich_style("hunk-list--cursor")
        if row.hunk >= 0 and row.hunk not in self.selected and not row.secret:
            return self.rich_style + self.get_component_rich_style("hunk-list--off")
        if row.kind == "hunk" and row.secret:
            return self._style("secret")
        return super().row_style(index, row)

    def gutter_segments(self, index: int, row: DiffRow, first: bool) -> list[Segment]:
        bar = Segment("▌", self.rich_style + self.get_component_rich_style("hunk-list--bar")) \
            if row.hunk == self.cursor and row.hunk >= 0 else Segment(" ", self.rich_style)
        warn = Segment(SECRET_MARK, self._style("secret")) if row.secret and first \
            else Segment(" ", self.rich_style)
        return [bar, warn]

    # -- cursor and selection -------------------------------------------------------------
    def _hunk_span(self, k: int) -> tuple[int, int]:
        last = (self.header_rows[k + 1] - 1 if k + 1 < len(self.header_rows)
                else len(self.rows) - 1)
        return self.row_span(self.header_rows[k], last)

    def scroll_to_cursor(self) -> None:
        """As little scrolling as shows the whole hunk; a tall one from its header."""
        if not self.header_rows:
            return
        start, height = self._hunk_span(self.cursor)
        self.scroll_to_region(Region(0, start, 1, height), animate=False, force=True,
                              immediate=True)

    def reveal_secret(self, k: int) -> None:
        """Put the cursor on hunk `k` and its first line that adds a secret in view."""
        self.move_to(k)
        first = self.header_rows[k] if 0 <= k < len(self.header_rows) else None
        row = next((i for i in range(first, len(self.rows)) if self.rows[i].hunk == k
                    and self.rows[i].secret and self.rows[i].kind != "hunk"), None) \
            if first is not None else None
        if row is not None:
            y, _ = self.row_span(row, row)
            self.scroll_to_region(Region(0, y, 1, 1), animate=False, force=True,
                                  immediate=True, center=True)

    def move_to(self, k: int) -> None:
        if not self.header_rows:
            return
        self.cursor = max(0, min(len(self.header_rows) - 1, k))
        self.refresh_rows()
        self.scroll_to_cursor()
        self.post_message(self.Changed(self))

    def action_move(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_jump(self, where: int) -> None:
        self.move_to(0 if where == 0 else len(self.header_rows) - 1)

    def toggle(self, k: int | None = None) -> None:
        k = self.cursor if k is None else k
        if not 0 <= k < len(self.header_rows):
            return
        self.selected ^= {k}
        self.refresh_rows()
        self.post_message(self.Changed(self))

    def on_click(self, event: Click) -> None:
        y = self.scroll_offset.y + event.y
        if not self.rows or y >= self.virtual_size.height:
            return
        i, piece = self.row_at(y)
        k = self.rows[i].hunk
        if k < 0:
            return
        on_box = self.rows[i].kind == "hunk" and piece == 0 and \
            self.GUTTER <= event.x < self.GUTTER + 3
        if on_box:
            self.cursor = k
            self.toggle(k)
        elif k != self.cursor:
            self.cursor = k
            self.refresh_rows()
            self.post_message(self.Changed(self))

    def on_focus(self) -> None:
        self.refresh_rows()

    def on_blur(self) -> None:
        self.refresh_rows()
