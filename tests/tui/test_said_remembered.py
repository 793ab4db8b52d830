"""Said vs remembered (`m` in Sessions): three columns — said, raw memory, fed today — with
the verdicts, opened on a row or an open transcript; `esc` closes."""

from __future__ import annotations

from typing import Any

from memdeck.tui.widgets.session_table import SessionTable
from memdeck.tui.widgets.sessions.said_remembered import SaidRememberedScreen
from memdeck.tui.widgets.sessions.transcript import TranscriptView
from tests.tui import stable_demo
from tests.tui.conftest import SIZE, settle

stable_engine = stable_demo.stable_engine  # fixture: the demo home at a fixed path


def _text(app: Any, wid: str) -> str:
    return str(app.screen.query_one(wid).render())


async def _on_row(app: Any, pilot: Any, preview: str) -> None:
    await settle(app, pilot)
    table = app.query_one(SessionTable)
    table.cursor = next(i for i, s in enumerate(table.rows) if s.preview.startswith(preview))
    await pilot.pause()


async def test_m_on_a_consolidated_row_shows_the_three_columns(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await _on_row(app, pilot, "The checkout tests fail")
        await pilot.press("m")
        await settle(app, pilot)
        assert isinstance(app.screen, SaidRememberedScreen)
        head = _text(app, "#sr-head")
        assert head.startswith("Said vs remembered  shop · ")
        assert "kept 10  reworded 0  dropped 0" in head
        assert "compared with MEMORY.md and memory_summary.md" in head
        said = _text(app, "#sr-said-text")
        assert said.startswith("user · item 2\nkept · 11 of 13 keywords in MEMORY.md:12-13")
        assert "The checkout tests fail. We use MySQL 8.4 here" in said
        raw = _text(app, "#sr-raw-text")
        assert "11 - user said: The checkout tests fail." in raw
        # a v1 row's rollout summary, after the raw memory
        raw_part, _, summary = raw.partition("rollout summary (memory v1 keeps it beside the "
                                             "raw memory)\n")
        assert "11 - user said:" in raw_part and summary.startswith("\n  1 # Checkout tests")
        assert "7 - Preference signals: The checkout tests fail." in summary
        fed = _text(app, "#sr-fed-text")
        assert fed.startswith("MEMORY.md:5-9\nTask 1: fix checkout rounding test, success: "
                              "its rollout_summary_files name the session\n## Task 1:")
        assert "- The database backend is MySQL 8.4 [Task 1]" in fed
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SaidRememberedScreen)
        assert app.query_one(SessionTable).has_focus


async def test_m_in_an_open_transcript_says_why_there_is_no_raw_memory(demo_engine,
                                                                       make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await _on_row(app, pilot, "Why does `mkdocs serve` fail")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one(TranscriptView).has_focus
        await pilot.press("m")
        await settle(app, pilot)
        assert isinstance(app.screen, SaidRememberedScreen)
        assert _text(app, "#sr-raw-text").startswith("no raw memory: too_recent: idle")
        assert _text(app, "#sr-fed-text") == "nothing of this session is in today's memory"
        assert "dropped · 0 of 4 keywords" in _text(app, "#sr-said-text")
        await pilot.press("escape")
        await pilot.pause()
        assert app.query_one(TranscriptView).has_focus  # back where it was opened


async def test_the_columns_stack_on_a_narrow_terminal(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await _on_row(app, pilot, "The checkout tests fail")
        await pilot.press("m")
        await settle(app, pilot)
        cols = [app.screen.query_one(f"#{c}") for c in ("sr-said", "sr-raw", "sr-fed")]
        assert len({c.region.x for c in cols}) == 1  # one above the other
        assert all(c.region.width >= 78 for c in cols)
    async with make_app(demo_engine).run_test(size=(100, 30)) as pilot:
        app = pilot.app
        await _on_row(app, pilot, "The checkout tests fail")
        await pilot.press("m")
        await settle(app, pilot)
        cols = [app.screen.query_one(f"#{c}") for c in ("sr-said", "sr-raw", "sr-fed")]
        assert len({c.region.y for c in cols}) == 1 and all(c.region.width >= 30 for c in cols)


def test_snapshot_said_vs_remembered(stable_engine, make_app, snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await _on_row(pilot.app, pilot, "The checkout tests fail")
        await pilot.press("m")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(stable_engine), terminal_size=SIZE, run_before=run_before)
