"""The Sessions pane: the table, filters, a transcript, extract and forget."""

from __future__ import annotations

from textual.widgets import Input

from memdeck.tui.panes.sessions import SessionsPane
from memdeck.tui.widgets.session_table import SessionTable
from memdeck.tui.widgets.sessions.transcript import TranscriptView
from tests.tui.conftest import SIZE, settle


async def test_table_lists_every_demo_session_with_status(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        assert len(table.rows) == 19
        assert {s.status for s in table.rows} >= {"eligible", "extracted", "too_recent",
                                                  "unreadable", "failed"}
        assert table.has_focus
        assert app.query_one("#session-count").render().plain == "19 sessions"


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
        assert len(table.rows) == 19
        assert table.has_focus


async def test_status_filter_and_counts(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.query_one("#status-filter").value = "extracted"
        await pilot.pause()
        table = app.query_one(SessionTable)
        assert len(table.rows) == 3 and {s.status for s in table.rows} == {"extracted"}
        assert app.query_one("#session-count").render().plain == "3 of 19"
        app.query_one("#project-filter").value = "infra"
        await pilot.pause()
        assert [s.project for s in table.rows] == ["infra"]


async def test_age_statuses_are_in_the_status_filter_with_their_reasons(demo_engine,
                                                                        make_app) -> None:
    """The demo's pruned and too-old-to-keep sessions: listed in the status filter, and the
    detail line under the table gives the rule and the numbers."""
    from textual.widgets import Select, Static

    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        options = {v for _label, v in app.query_one("#status-filter", Select)._options}
        assert {"pruned", "too_old_to_keep"} <= options
        table = app.query_one(SessionTable)
        for status, words in (("pruned", "unused for 31.0 d > max_unused_days = 30"),
                              ("too_old_to_keep", "phase 2 only takes memories used or active "
                                                  "in the last 30 d")):
            app.query_one("#status-filter").value = status
            await pilot.pause()
            assert [s.status for s in table.rows] == [status]
            await pilot.pause()
            detail = str(app.query_one("#session-detail", Static).render())
            assert f"{status}: " in detail and words in " ".join(detail.split())


async def test_open_transcript_shows_roles_and_collapsed_tools(demo_engine, make_app) -> None:
    from textual.widgets import Collapsible, Static

    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        table.cursor = next(i for i, s in enumerate(table.rows) if "Django" in s.preview)
        await pilot.press("enter")
        await settle(app, pilot)
        view = app.query_one(TranscriptView)
        assert app.query_one(SessionsPane).showing_transcript
        assert "Django" in view.detail.session.preview
        users = view.query(".turn.user")
        assistants = view.query(".turn.assistant")
        assert users and assistants
        tools = view.query(Collapsible).filter(".tool")
        assert tools and all(c.collapsed for c in tools)
        contexts = view.query(Collapsible).filter(".context")
        assert contexts and all(c.collapsed for c in contexts)  # AGENTS.md / environment
        header = str(app.query_one("#transcript-header", Static).render())
        assert "eligible" in header
        await pilot.press("escape")
        assert not app.query_one(SessionsPane).showing_transcript
        assert table.has_focus


async def test_forget_asks_first_and_cancel_changes_nothing(demo_engine, make_app) -> None:
    from memdeck.tui.widgets.confirm import ConfirmScreen

    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        table.cursor = next(i for i, s in enumerate(table.rows) if s.status == "extracted")
        target = table.current
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        after = {s.rollout_path: s for s in demo_engine.sessions()}
        assert after[target.rollout_path].status == "extracted"

        await pilot.press("f")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        after = {s.rollout_path: s for s in demo_engine.sessions()}
        assert after[target.rollout_path].status == "disabled"
        shown = {s.rollout_path: s for s in table.rows}
        assert shown[target.rollout_path].status == "disabled"  # the table reloaded


async def test_extract_this_session_now(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        table.cursor = next(i for i, s in enumerate(table.rows) if s.status == "eligible")
        target = table.current
        await pilot.press("x")
        await settle(app, pilot)
        shown = {s.rollout_path: s for s in table.rows}
        assert shown[target.rollout_path].status in ("extracted", "no_output")
        assert any(m.thread_id == target.id for m in demo_engine.memories().rows) or \
            shown[target.rollout_path].status == "no_output"


async def test_an_unreadable_home_error_is_one_lasting_line(tmp_path, make_app) -> None:
    from memdeck.engine import Engine
    from memdeck.tui.widgets.home_banner import HomeBanner

    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    (home / "memories").mkdir()  # memory v1: memories_1.sqlite is the one Codex uses
    (home / "memories_1.sqlite").write_bytes(b"this is not a database" * 100)
    app = make_app(Engine.open(home))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        banner = app.query_one(HomeBanner)
        assert banner.display, "the broken pipeline DB is reported, under the header"
        assert any("memories_1.sqlite" in w for w in banner.warnings)
        assert all("\n" not in w and "Traceback" not in w for w in banner.warnings)
        assert app.query_one(SessionTable).rows == []


def _footer_keys(app) -> set[str]:
    """What the footer shows: the descriptions of its keys."""
    from memdeck.tui.widgets.key_footer import KeyFooter

    return {e.description for e in app.screen.query_one(KeyFooter).entries()[0]}


async def test_esc_back_is_offered_only_where_it_leads_somewhere(demo_engine, make_app) -> None:
    """Issue 10: the footer showed `esc Back` on the table, where it did nothing."""
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.query_one(SessionTable).has_focus
        assert "Back" not in _footer_keys(app)
        await pilot.press("enter")  # open the highlighted session
        await settle(app, pilot)
        assert app.query_one(SessionsPane).showing_transcript
        assert "Back" in _footer_keys(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not app.query_one(SessionsPane).showing_transcript
        assert "Back" not in _footer_keys(app)
        await pilot.press("slash")  # in the filter field, esc leaves it
        await pilot.pause()
        assert "Back" in _footer_keys(app)


async def test_the_footer_offers_m_said_vs_remembered(demo_engine, make_app) -> None:
    """Issue 11: `m` worked on the table and in a transcript but the footer never showed it."""
    from memdeck.tui.widgets.key_footer import KeyFooter

    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        shown = {e.display: e.description for e in app.screen.query_one(KeyFooter).entries()[0]}
        assert shown.get("m") == "Said vs remembered"
        await pilot.press("enter")  # in the open transcript too
        await settle(app, pilot)
        assert "Said vs remembered" in _footer_keys(app)


async def test_s_sorts_by_the_next_column_and_S_turns_it_round(demo_engine, make_app) -> None:
    """Issue 23, item 9: any column sorts; the title says which and which way; the cursor
    stays on its session."""
    from memdeck.tui.widgets.session_table import SessionHeader

    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        header = app.query_one(SessionHeader)
        listed = [s.rollout_path for s in table.rows]
        stamps = [s.updated_at for s in table.rows]
        assert stamps == sorted(stamps, reverse=True)  # the engine's order: newest first
        assert "updated▼" in header.render().plain
        await pilot.press("j", "j")
        kept = table.current.rollout_path
        await pilot.press("s")  # project, A to Z
        await settle(app, pilot)
        projects = [s.project for s in table.rows]
        assert projects == sorted(projects, key=str.casefold) and projects != [
            s.project for s in demo_engine.sessions()]
        assert "project▲" in header.render().plain and "updated▼" not in header.render().plain
        assert table.current.rollout_path == kept
        await pilot.press("S")  # Z to A
        await settle(app, pilot)
        assert [s.project for s in table.rows] == sorted(projects, key=str.casefold,
                                                          reverse=True)
        assert "project▼" in header.render().plain
        for _ in range(5):  # source, status, preview, reason, then updated again
            await pilot.press("s")
        await settle(app, pilot)
        assert [s.rollout_path for s in table.rows] == listed


async def test_a_click_on_a_column_title_sorts_by_it(demo_engine, make_app) -> None:
    from memdeck.engine import STATUSES
    from memdeck.tui.widgets.session_table import SessionHeader

    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        header = app.query_one(SessionHeader)
        x = header.render().plain.index("status")
        await pilot.click(SessionHeader, offset=(x + 1, 0))
        await settle(app, pilot)
        ranks = [STATUSES.index(s.status) for s in app.query_one(SessionTable).rows]
        assert ranks == sorted(ranks) and "status▲" in header.render().plain
        await pilot.click(SessionHeader, offset=(x + 1, 0))
        await settle(app, pilot)
        ranks = [STATUSES.index(s.status) for s in app.query_one(SessionTable).rows]
        assert ranks == sorted(ranks, reverse=True)


async def test_the_detail_line_shows_the_whole_reason_at_80_columns(demo_engine,
                                                                    make_app) -> None:
    """Issue 23, item 9: the info bar under the table wraps the reason; it never cuts it."""
    app = make_app(demo_engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        longest = max(table.rows, key=lambda s: len(s.reason))
        assert len(longest.reason) > 150  # more than two lines at 80 columns
        table.cursor = table.rows.index(longest)
        await settle(app, pilot)
        detail = app.query_one("#session-detail")
        lines = [line.text.rstrip() for line in detail.render_lines(detail.region.reset_offset)]
        shown = " ".join(" ".join(lines[1:]).split())
        assert f"{longest.status}: {longest.reason}" in shown, lines
        assert "…" not in shown
        assert app.query_one(SessionTable).size.height >= 10  # the table keeps its room
