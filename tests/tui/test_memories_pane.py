"""The Raw memories pane: stage-1 rows, the open one as Markdown, the jump to its session."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable, Markdown

from memdeck.tui.widgets.memories.raw_memory_view import RawMemoryView
from memdeck.tui.widgets.sessions.transcript import TranscriptView
from tests.test_line_usage import changed_home  # noqa: F401, F811  (a fixture)
from tests.tui.conftest import SIZE, settle

DEMO_SLUGS = ["docs_broken_links", "checkout_tests", "deploy_staging"]




def column(table: DataTable[Any], key: str) -> list[str]:
    return [str(c) for c in table.get_column(key)]


async def test_rows_show_the_demo_stage1_outputs(demo_engine, make_app) -> None:
    app = make_app(demo_engine, initial="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one("#memories-table", DataTable)
        assert column(table, "slug") == DEMO_SLUGS
        assert column(table, "project") == ["docs-site", "shop", "infra"]
        assert column(table, "uses") == ["—", "3", "1"]
        assert column(table, "phase2") == ["", "✓", "✓"]
        assert column(table, "last") == ["never", "11-19 12:00", "11-19 12:00"]  # this year
        assert table.has_focus


async def test_moving_the_cursor_shows_that_memory(demo_engine, make_app) -> None:
    app = make_app(demo_engine, initial="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        raw = app.query_one("#raw-memory-md", Markdown)
        summary = app.query_one("#rollout-summary-md", Markdown)
        assert "mkdocs build --strict" in raw.source
        assert summary.source.startswith("# Docs style")
        await pilot.press("down")
        await settle(app, pilot)
        assert "make check-quick" in raw.source
        assert summary.source.startswith("# Checkout tests")
        # front matter is a YAML block, not a heading underline
        assert raw.source.startswith("```yaml\ndescription: checkout tests in shop")
        header = str(app.query_one("#raw-memory-header").render())
        assert "01a1e8eb-a600-72ae-93e1-daa89c2b9d9f · shop" in header
        assert app.query_one(RawMemoryView).row.rollout_slug == "checkout_tests"


async def test_enter_opens_the_session_transcript(demo_engine, make_app) -> None:
    app = make_app(demo_engine, initial="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("down", "enter")
        await settle(app, pilot)
        assert app.active_pane == "sessions"
        view = app.query_one(TranscriptView)
        assert view.display and view.detail is not None
        assert view.detail.session.id == "01a1e8eb-a600-72ae-93e1-daa89c2b9d9f"


async def test_o_opens_the_session_too(demo_engine, make_app) -> None:
    app = make_app(demo_engine)  # Sessions first: its index is warm, the jump is direct
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        await pilot.press("o")
        await settle(app, pilot)
        assert app.active_pane == "sessions"
        detail = app.query_one(TranscriptView).detail
        assert detail is not None and detail.session.id.startswith("01a1eddc")


async def test_empty_state_says_how_to_make_memories(demo_engine, make_app) -> None:
    demo_engine.reset()
    app = make_app(demo_engine, initial="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not app.query_one("#memories-table").display
        note = str(app.query_one("#memories-empty").render())
        assert note.startswith("No raw memories yet. Press c to extract")


def test_snapshot_raw_memory_open(demo_engine, make_app, snap_compare) -> None:
    async def open_second(pilot: Any) -> None:
        await settle(pilot.app, pilot)
        await pilot.press("down")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(demo_engine, initial="memories"), terminal_size=SIZE,
                        run_before=open_second)


async def test_a_row_cited_before_it_existed_says_why_its_count_is_lower(changed_home,  # noqa: F811
                                                                         make_app) -> None:
    """Issue 11: Codex counts a citation only when a row exists; the pane says how many of
    the citations came earlier, so `usage 1` beside two citations is not a mystery."""
    from memdeck.engine import Engine
    from tests.test_line_usage import ADA, pipeline_row, ts

    pipeline_row(changed_home.root, "memories_1.sqlite", ADA, updated=ts("2026-11-14T09:00:00"),
                 generated=ts("2026-11-15T00:00:00"), usage=1,
                 last_usage=ts("2026-11-25T10:00:00"))
    engine = Engine.open(changed_home.root)
    engine.refresh()
    app = make_app(engine, initial="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        header = str(app.query_one("#raw-memory-header").render())
        assert "used 1×: 1 citation before this row existed (Codex counts only later ones)" \
            in header


async def test_raw_memories_sort_by_any_column(demo_engine, make_app) -> None:
    """Issue 23, item 9: `s` sorts by the next column, `S` turns it round, a click on a
    title sorts by it; the open memory stays open."""
    app = make_app(demo_engine, initial="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one("#memories-table", DataTable)
        pane = app.query_one("#memories-pane")
        await pilot.press("j")
        await settle(app, pilot)
        opened = pane.current.thread_id
        await pilot.press("s")  # thread, A to Z
        await settle(app, pilot)
        threads = [r.thread_id for r in pane.rows]
        assert threads == sorted(threads) and "thread▲" in str(table.columns[
            next(k for k in table.columns if k.value == "thread")].label)
        assert column(table, "thread") == [t[:8] for t in threads]
        assert pane.current.thread_id == opened
        await pilot.press("S")
        await settle(app, pilot)
        assert [r.thread_id for r in pane.rows] == sorted(threads, reverse=True)
        x = sum(c.get_render_width(table) for c in list(table.columns.values())[:4])
        await pilot.click("#memories-table", offset=(x + 1, 0))  # the "uses" title
        await settle(app, pilot)
        assert column(table, "uses") == ["3", "1", "—"]  # most used first, none last
        await pilot.click("#memories-table", offset=(x + 1, 0))
        await settle(app, pilot)
        assert column(table, "uses") == ["1", "3", "—"]
