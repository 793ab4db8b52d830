"""The Sessions pane: the table, filters, a transcript, extract and forget."""

from __future__ import annotations

from typing import Any

from textual.widgets import Input

from tests.tui.conftest import SIZE
from tui.panes.sessions import SessionsPane
from tui.widgets.session_table import SessionTable
from tui.widgets.transcript import TranscriptView


async def settle(app: Any, pilot: Any) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_table_lists_every_demo_session_with_status(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        assert len(table.rows) == 17
        assert {s.status for s in table.rows} >= {"eligible", "extracted", "too_recent",
                                                  "unreadable", "failed"}
        assert table.has_focus
        assert app.query_one("#session-count").render().plain == "17 sessions"


async def test_text_filter_narrows_and_escape_clears(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        assert app.query_one("#session-filter", Input).has_focus
        await pilot.press(*"django")
        table = app.query_one(SessionTable)
        assert [s.project for s in table.rows] == ["shop"]
        assert "Django" in table.rows[0].preview
        await pilot.press("escape")
        assert len(table.rows) == 17
        assert table.has_focus
