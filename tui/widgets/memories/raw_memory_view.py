"""A stage-1 row's raw memory and rollout summary, side by side, rendered as Markdown.

The raw memory starts with YAML front matter; Markdown would read its closing `---` as a
heading underline, so the front matter is shown as a YAML block instead."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Label, Markdown, Static
from textual.widgets.data_table import ColumnKey

from memdeck.engine import local_time

# the raw memories table (tui/panes/memories.py): thread, project, slug, generated, uses, last
# used, phase 2; times are `11-18 16:00` (the header under the table has the whole one), the
# slug gets what is left at the table's width, so `phase 2` is never cut at 80 or 100 columns
CELL_PADDING = 2  # DataTable's, per column
SCROLLBAR = 2


def memory_columns(width: int) -> list[tuple[str, str, int]]:
    project = 14 if width >= 100 else 10
    fixed = 8 + project + 11 + 4 + 11 + 7
    slug = max(12, min(40, width - SCROLLBAR - 7 * CELL_PADDING - fixed))
    return [("thread", "thread", 8), ("project", "project", project), ("slug", "slug", slug),
            ("generated", "generated", 11), ("uses", "uses", 4), ("last", "last used", 11),
            ("phase2", "phase 2", 7)]


def fit_columns(table: DataTable[Any], width: int) -> None:
    """Give the table's columns the widths `memory_columns` picks for `width`."""
    changed = False
    for key, _, w in memory_columns(width):
        column = table.columns.get(ColumnKey(key))
        if column is not None and column.width != w:
            column.width, changed = w, True
    if changed:  # DataTable has no public call for this: what its own width updates do
        table._clear_caches()
        table._require_update_dimensions = True
        table.refresh()


def split_front_matter(text: str) -> tuple[str, str]:
    """(front matter without the fences, body); no front matter: ("", text)."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return "\n".join(lines[1:i]), "\n".join(lines[i + 1:]).lstrip("\n")
    return "", text


def raw_memory_markdown(text: str) -> str:
    front, body = split_front_matter(text or "")
    parts = [f"```yaml\n{front}\n```"] if front.strip() else []
    parts.append(body.strip() or "*(empty)*")
    return "\n\n".join(parts)


def project_of(row: Any, sessions: dict[str, Any]) -> str:
    """The session's project, else the `cwd:` the raw memory itself names."""
    s = sessions.get(row.thread_id)
    if s is not None and s.cwd:
        return str(s.project)
    front, _ = split_front_matter(row.raw_memory or "")
    for line in front.splitlines():
        if line.startswith("cwd:"):
            cwd = line[4:].strip().replace("\\", "/").rstrip("/")  # a Windows cwd too
            return cwd.rsplit("/", 1)[-1] or "?"
    return "?"


class RawMemoryView(Vertical):
    """The open raw memory: a one-line header, then memory and summary in two columns."""

    DEFAULT_CSS = """
    RawMemoryView { height: 1fr; }
    RawMemoryView > #raw-memory-header { height: auto; }
    RawMemoryView > Horizontal { height: 1fr; }
    RawMemoryView .raw-column { width: 1fr; height: 1fr; }
    """

    row: Any | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="raw-memory-header")
        with Horizontal():
            with VerticalScroll(id="raw-memory-scroll", classes="raw-column"):
                yield Label("Raw memory", classes="raw-title")
                yield Markdown("", id="raw-memory-md")
            with VerticalScroll(id="rollout-summary-scroll", classes="raw-column"):
                yield Label("Rollout summary", classes="raw-title")
                yield Markdown("", id="rollout-summary-md")

    async def show(self, row: Any | None, project: str = "") -> None:
        """Show `row` (None: nothing); awaits the Markdown so the view is whole when done."""
        self.row = row
        if row is None:
            self.query_one("#raw-memory-header", Static).update("")
            await self.query_one("#raw-memory-md", Markdown).update("")
            await self.query_one("#rollout-summary-md", Markdown).update("")
            return
        header = (f"{row.thread_id} · {project} · session updated "
                  f"{local_time(row.source_updated_at, 'never')} · generated "
                  f"{local_time(row.generated_at, 'never')}")
        if row.selected_for_phase2:
            stale = (row.selected_for_phase2_source_updated_at is not None
                     and row.selected_for_phase2_source_updated_at != row.source_updated_at)
            header += " · selected for phase 2" + (" (changed since)" if stale else "")
        if getattr(row, "citation_note", ""):  # why Codex's usage count is below the citations
            header += f"\nused {row.usage_count or 0}×: {row.citation_note}"
        self.query_one("#raw-memory-header", Static).update(header)
        await self.query_one("#raw-memory-md", Markdown).update(
            raw_memory_markdown(row.raw_memory))
        await self.query_one("#rollout-summary-md", Markdown).update(
            (row.rollout_summary or "").strip() or "*(empty)*")
        for sid in ("#raw-memory-scroll", "#rollout-summary-scroll"):
            self.query_one(sid, VerticalScroll).scroll_home(animate=False)
