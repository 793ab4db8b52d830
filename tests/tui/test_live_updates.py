"""The app watches the Codex home with real watchfiles: a new rollout appears in the table and
an outside edit of the memory folder lands in history, without a key pressed."""

from __future__ import annotations

import shutil
from typing import Any

from memdeck.engine.memory_folder.history import History
from memdeck.tui.widgets.session_table import SessionTable
from tests.conftest import FIXTURES
from tests.tui.conftest import SIZE, settle


async def wait_until(pilot: Any, condition: Any, seconds: float = 60.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        await pilot.pause(0.05)
    return condition()


async def test_new_rollout_and_outside_memory_edit_show_up(demo_engine, make_app) -> None:
    app = make_app(demo_engine, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(SessionTable)
        assert await wait_until(pilot, lambda: len(table.rows) == 19)

        day = demo_engine.home.sessions_dir / "2026" / "11" / "20"
        day.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / "cli-preferences.jsonl",
                        day / "rollout-2026-11-20T11-00-00-cli-preferences.jsonl")
        assert await wait_until(pilot, lambda: len(table.rows) == 20), "new rollout shown"

        memory_md = demo_engine.home.memory_root / "MEMORY.md"
        history = History(demo_engine.home, demo_engine.clock)  # entries() records nothing
        before = len(history.entries())
        memory_md.write_text(memory_md.read_text() + "\n- edited by hand outside memdeck\n")
        assert await wait_until(pilot, lambda: len(history.entries()) == before + 1)
        assert history.entries()[0].origin == "external"
    # leaving the app stops the watcher thread
    assert not any(w.is_running for w in app.workers)


# -- every row on screen is recomputed after each action (issue 10, requirement 1) -----------
# Each test acts through the keys a user presses, then reads the Sessions row as drawn (the
# table's own line and the detail line under it), never the engine.


async def shown_row(app: Any, pilot: Any, session_id: str) -> str:
    """The session's row as the table draws it, plus the detail line under the table."""
    from textual.widgets import Static

    table = app.query_one(SessionTable)
    index = next(i for i, s in enumerate(table.rows) if s.id == session_id)
    table.cursor = index
    await pilot.pause()
    line = table.render_line(index - table.scroll_offset.y).text
    return line + "\n" + str(app.query_one("#session-detail", Static).render())


async def to_sessions(app: Any, pilot: Any) -> None:
    await pilot.press("1")
    await settle(app, pilot)


def extracted_ids(engine: Any) -> list[str]:
    return [s.id for s in engine.sessions() if s.status == "extracted"]


async def test_extract_then_accept_in_review_the_rows_say_consolidated(demo_engine,
                                                                        make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        eligible = [s.id for s in app.query_one(SessionTable).rows if s.status == "eligible"]
        assert eligible
        await pilot.press("c")  # extract + consolidate: Review opens with the proposal
        await settle(app, pilot)
        assert app.active_pane == "review"
        await to_sessions(app, pilot)
        row = await shown_row(app, pilot, eligible[0])
        assert " extracted " in row and "waiting for consolidation" in row
        await pilot.press("5", "A")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        await to_sessions(app, pilot)
        row = await shown_row(app, pilot, eligible[0])
        assert "in the consolidated memory" in row and "waiting" not in row


async def test_reject_leaves_the_rows_waiting(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        eligible = [s.id for s in app.query_one(SessionTable).rows if s.status == "eligible"]
        await pilot.press("c")
        await settle(app, pilot)
        await pilot.press("r", *"too vague", "enter")
        await settle(app, pilot)
        assert not [p for p in demo_engine.proposals() if p.status == "pending"]
        await to_sessions(app, pilot)
        row = await shown_row(app, pilot, eligible[0])
        assert "waiting for consolidation" in row


async def test_restore_past_a_consolidation_the_rows_wait_again(demo_engine,
                                                                make_app) -> None:
    from memdeck.tui.widgets.history.commit_list import CommitList

    demo_engine.record_outside_edits()
    demo_engine.extract(backend="offline")
    demo_engine.accept(demo_engine.consolidate(backend="offline").id)
    sid = next(s.id for s in demo_engine.sessions(refresh=False)
               if "in the consolidated memory" in s.reason)
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "in the consolidated memory" in await shown_row(app, pilot, sid)
        await pilot.press("4")
        await settle(app, pilot)
        commits = app.query_one(CommitList)
        await pilot.press("end")  # the state memdeck first found, before the consolidation
        await settle(app, pilot)
        assert commits.current.origin == "start"
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert commits.entries[0].origin == "restore"
        await to_sessions(app, pilot)
        row = await shown_row(app, pilot, sid)
        # the restored files do not hold it: the next consolidation adds it again
        assert "waiting for consolidation" in row and "in the consolidated memory" not in row


async def test_forget_keeps_the_row_in_place_and_says_what_was_done(demo_engine,
                                                                     make_app) -> None:
    from memdeck.tui.widgets.confirm import ConfirmScreen

    demo_engine.record_outside_edits()
    demo_engine.extract(backend="offline")
    demo_engine.accept(demo_engine.consolidate(backend="offline").id)
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        s = next(x for x in table.rows if "in the consolidated memory" in x.reason)
        place = table.rows.index(s)
        await shown_row(app, pilot, s.id)
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Codex will not use it again" not in app.screen.detail
        assert "still in MEMORY.md until the next consolidation" in app.screen.detail
        await pilot.press("y")
        await settle(app, pilot)
        assert table.rows.index(next(x for x in table.rows if x.id == s.id)) == place
        row = await shown_row(app, pilot, s.id)
        assert " disabled " in row and "forgotten with memdeck" in row
        assert "switched off during the session" not in row
        assert "MEMORY.md keeps what it taught" in row


async def test_reset_in_settings_the_rows_lose_their_memories(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    sid = extracted_ids(demo_engine)[0]
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert " extracted " in await shown_row(app, pilot, sid)
        await pilot.press("6")
        await settle(app, pilot)
        await pilot.press("R", *"reset", "enter")
        await settle(app, pilot)
        await to_sessions(app, pilot)
        row = await shown_row(app, pilot, sid)
        assert " extracted " not in row and "raw memory extracted" not in row


async def test_an_outside_change_seen_by_the_watcher_updates_the_row(demo_engine,
                                                                    make_app) -> None:
    import sqlite3

    app = make_app(demo_engine, watch=True)
    sid = extracted_ids(demo_engine)[0]
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(SessionTable)
        assert await wait_until(pilot, lambda: len(table.rows) == 19)
        assert " extracted " in await shown_row(app, pilot, sid)
        # Codex (another process) forgets the thread: its row and job go from the pipeline DB
        conn = sqlite3.connect(demo_engine.home.pipeline_db)
        conn.execute("DELETE FROM stage1_outputs WHERE thread_id = ?", (sid,))
        conn.execute("DELETE FROM jobs WHERE job_key = ?", (sid,))
        conn.commit()
        conn.close()

        async def gone() -> bool:
            return "raw memory extracted" not in await shown_row(app, pilot, sid)

        for _ in range(400):
            if await gone():
                break
            await pilot.pause(0.05)
        assert await gone(), "the row followed the pipeline DB without a key pressed"


async def test_ages_tick_while_the_pane_is_on_screen(demo_engine, make_app) -> None:
    from memdeck.tui.panes.sessions import SessionsPane

    app = make_app(demo_engine)
    sid = extracted_ids(demo_engine)[0]
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        before = await shown_row(app, pilot, sid)
        demo_engine.clock.advance(3 * 86400)  # three days later, the app still open
        app.query_one(SessionsPane)._tick()  # what the pane's timer calls every 10 s
        await settle(app, pilot)
        after = await shown_row(app, pilot, sid)
        assert after != before
        ago = [w for w in before.split(",") if "extracted" in w and "ago" in w][0]
        assert ago not in after


async def test_with_generate_memories_off_rows_say_so_and_c_asks_first(demo_engine,
                                                                       make_app) -> None:
    from memdeck.tui.widgets.confirm import ConfirmScreen

    demo_engine.config_set("generate_memories", "false")
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        eligible = [s for s in table.rows if s.status == "eligible"]
        assert eligible
        row = await shown_row(app, pilot, eligible[0].id)
        assert "generate_memories is off" in row and "Codex still extracts this one" in row
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and not app.running
        assert "Generating memories is off" in app.screen.question
        await pilot.press("n")
        await settle(app, pilot)
        assert not demo_engine.proposals() and app.active_pane == "sessions"
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("y")  # the user asked for it: the run goes ahead
        await settle(app, pilot)
        assert app.active_pane == "review" and demo_engine.proposals()


async def test_an_open_transcripts_header_follows_the_accept(demo_engine, make_app) -> None:
    from textual.widgets import Static

    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        target = next(s for s in table.rows if s.status == "eligible")
        await shown_row(app, pilot, target.id)
        await pilot.press("enter")  # its transcript
        await settle(app, pilot)

        def header() -> str:
            return str(app.query_one("#transcript-header", Static).render())

        assert "eligible" in header()
        await pilot.press("c")
        await settle(app, pilot)
        await pilot.press("A")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        await to_sessions(app, pilot)
        assert "in the consolidated memory" in header() and "eligible" not in header()
