"""Pane 2, Raw memories: the stage-1 rows phase 1 wrote (one per extracted session) with their
usage, and the highlighted one's raw memory and rollout summary as Markdown; jump to its
session's transcript."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey

from memdeck.engine import HomeInfo

from ..messages import ShowSession
from ..table_sort import Column as SortColumn
from ..table_sort import SortOrder
from ..widgets.memories.moving_table import MovingDataTable
from ..widgets.memories.raw_memory_view import (
    RawMemoryView,
    fit_columns,
    memory_columns,
    project_of,
)
from ..widgets.session_table import newest_year, short_time
from .base import Pane

ENGINE_ORDER = SortOrder("", descending=True)  # the engine's: the newest session first

def version_line(home: HomeInfo) -> str:
    """Which pipeline these rows belong to: the version Codex uses, and its database."""
    if home.version is None or home.pipeline_db is None:
        return home.problem or ""
    owner = "Codex's" if home.pipeline_db_is_codex else "memdeck's own until Codex makes one"
    line = (f"Memory {home.memory_version} ({home.version.reason}) · {home.pipeline_db.name}, "
            f"{owner}")
    if home.memory_version == "v2":
        line += " · v2 keeps a summary per session; its raw memory is empty by design"
    return line


class MemoriesPane(Pane):
    TITLE = "Raw memories"
    BINDINGS = [
        Binding("o", "open_session", "Open session", id="memories.open"),
        Binding("s", "sort", "Sort", id="memories.sort"),
        Binding("S", "sort(True)", "Reverse sort", id="memories.sort_reverse", show=False),
        Binding("R", "reload", "Reload", id="memories.reload", show=False),
    ]
    COMMANDS = [
        ("Open the session of this raw memory", "Show its transcript in Sessions",
         "open_session"),
        ("Reload raw memories", "Read the stage-1 rows again", "reload"),
        ("Sort raw memories by the next column", "A click on a column's title sorts by it too",
         "sort"),
        ("Reverse the raw memories' sort", "Newest or oldest first, A to Z or Z to A",
         "sort(True)"),
    ]

    @dataclass
    class Loaded(Message):
        rows: list[Any]
        projects: dict[str, str]
        consolidate_key: str
        where: str = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[Any] = []
        self.projects: dict[str, str] = {}
        self.order = ENGINE_ORDER
        self._listed: list[Any] = []  # in the engine's order

    def compose(self) -> ComposeResult:
        yield Static("", id="memories-where", classes="pane-note")
        yield MovingDataTable(id="memories-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="memories-empty")
        yield RawMemoryView(id="raw-memory-view")

    def on_mount(self) -> None:
        table = self.query_one("#memories-table", DataTable)
        for key, title, width in memory_columns(self.size.width or self.app.size.width):
            table.add_column(title, width=width, key=key)
        table.loading = True
        self.query_one("#memories-empty").display = False

    def on_resize(self, event: events.Resize) -> None:
        fit_columns(self.query_one("#memories-table", DataTable), event.size.width)

    def focus_default(self) -> None:
        self.query_one("#memories-table", DataTable).focus()

    # -- loading --------------------------------------------------------------------------
    def reload(self) -> None:
        self.load_memories()

    def action_reload(self) -> None:
        self.reload()

    @work(thread=True, exclusive=True, group="memories-load", name="loading raw memories",
          exit_on_error=False)
    def load_memories(self) -> None:
        rows = self.engine.memories().rows
        known = self.engine.thread_labels()  # the index only: no statuses needed here
        projects = {r.thread_id: (label.project if (label := known.get(r.thread_id)) else "")
                    or project_of(r, {}) for r in rows}
        keymap, _problems = self.engine.keymap()
        self.post_message(self.Loaded(rows, projects, keymap.get("app.consolidate", "c"),
                                      version_line(self.engine.home_info())))

    @on(Loaded)
    async def _loaded(self, event: Loaded) -> None:
        table = self.query_one("#memories-table", DataTable)
        keep = self.current.thread_id if self.current is not None else None
        table.loading = False
        self.projects, self._listed = event.projects, event.rows
        self.rows = self.order.apply(event.rows, self._sorts())
        self.query_one("#memories-where", Static).update(event.where)
        self._fill()
        empty = not self.rows
        table.display = not empty
        if self.focus_lost():
            self.focus_default()  # focus could not land on the table while it was loading
        self.query_one(RawMemoryView).display = not empty
        note = self.query_one("#memories-empty", Static)
        note.display = empty
        if empty:
            keys = ", ".join(self.app.get_key_display(Binding(k, ""))
                             for k in event.consolidate_key.split(","))
            note.update(f"No raw memories yet. Press {keys} to extract sessions that are "
                        "ready (each becomes a raw memory here) and consolidate them.")
            await self.query_one(RawMemoryView).show(None)
            return
        await self._cursor_to(keep)

    def _fill(self) -> None:
        table = self.query_one("#memories-table", DataTable)
        table.clear()
        for key, title, _ in memory_columns(self.size.width or self.app.size.width):
            table.columns[ColumnKey(key)].label = Text(self.order.title(key, title))
        year = newest_year(r.generated_at for r in self.rows)
        for r in self.rows:
            table.add_row(
                r.thread_id[:8], self.projects.get(r.thread_id, "?"), r.rollout_slug or "—",
                short_time(r.generated_at, year, "never"),
                Text(str(r.usage_count) if r.usage_count is not None else "—",
                     justify="right"),
                short_time(r.last_usage, year, "never"),
                Text("✓" if r.selected_for_phase2 else "", justify="center"),
                key=r.thread_id)

    async def _cursor_to(self, thread_id: str | None) -> None:
        table = self.query_one("#memories-table", DataTable)
        index = next((i for i, r in enumerate(self.rows) if r.thread_id == thread_id), 0)
        if table.cursor_row != index:
            table.move_cursor(row=index)  # the highlight handler shows it
        else:
            await self._show(index)

    def copy_value(self, what: str) -> tuple[str, str] | None:
        row = self.current
        if row is None or what != "id":
            return None
        return "thread id", row.thread_id

    # -- sorting (tui/table_sort.py) ------------------------------------------------------
    def _sorts(self) -> tuple[SortColumn, ...]:
        projects = self.projects
        return (
            SortColumn("thread", "thread", lambda r: r.thread_id),
            SortColumn("project", "project", lambda r: projects.get(r.thread_id) or None),
            SortColumn("slug", "slug", lambda r: r.rollout_slug),
            SortColumn("generated", "generated", lambda r: r.generated_at, newest_first=True),
            SortColumn("uses", "uses", lambda r: r.usage_count, newest_first=True),
            SortColumn("last", "last used", lambda r: r.last_usage, newest_first=True),
            SortColumn("phase2", "phase 2", lambda r: int(bool(r.selected_for_phase2)),
                       newest_first=True),
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return bool(self.rows) if action == "sort" else True

    async def action_sort(self, reverse: bool = False) -> None:
        await self._sort_by(self.order.reversed() if reverse else self.order.next(self._sorts()))

    @on(DataTable.HeaderSelected, "#memories-table")
    async def _header(self, event: DataTable.HeaderSelected) -> None:
        col = next(c for c in self._sorts() if c.key == event.column_key.value)
        await self._sort_by(self.order.clicked(col))

    async def _sort_by(self, order: SortOrder) -> None:
        keep = self.current.thread_id if self.current is not None else None
        self.order = order
        self.rows = order.apply(self._listed, self._sorts())
        self._fill()
        await self._cursor_to(keep)

    # -- the open memory ------------------------------------------------------------------
    @property
    def current(self) -> Any | None:
        table = self.query_one("#memories-table", DataTable)
        if not self.rows or not (0 <= table.cursor_row < len(self.rows)):
            return None
        return self.rows[table.cursor_row]

    @on(DataTable.RowHighlighted, "#memories-table")
    async def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        await self._show(event.cursor_row)

    async def _show(self, index: int) -> None:
        if 0 <= index < len(self.rows):
            row = self.rows[index]
            await self.query_one(RawMemoryView).show(row, self.projects.get(row.thread_id, "?"))

    @on(DataTable.RowSelected, "#memories-table")
    def _selected(self) -> None:
        self.action_open_session()

    def action_open_session(self) -> None:
        row = self.current
        if row is not None:
            self.post_message(ShowSession(row.thread_id))
