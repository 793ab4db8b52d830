"""Following one memory line both ways in the app (issue 11): the usage gutter beside
MEMORY.md, `t` for where a line came from, `u` for the sessions that used it, Enter to open a
step where it lives and `esc` to walk back."""

from __future__ import annotations

from typing import Any

from memdeck.tui.panes.memory import MemoryPane
from memdeck.tui.widgets.line_trace import LineTraceScreen
from memdeck.tui.widgets.memory_editor import MemoryEditor
from memdeck.tui.widgets.transcript import TranscriptView
from tests.tui.conftest import SIZE, settle
from tests.tui.test_keys import screen_text
from tests.tui.test_live_updates import wait_until
from tests.tui.test_memory_pane import open_memory, open_path, title


def gutter(editor: MemoryEditor) -> dict[int, str]:
    """Document line (1-based) -> the gutter text drawn beside its first screen row."""
    out: dict[int, str] = {}
    info = editor.wrapped_document._offset_to_line_info
    top = int(editor.scroll_offset.y)
    for y in range(editor.size.height):
        if top + y < len(info) and info[top + y][1] == 0:
            out[info[top + y][0] + 1] = editor.render_line(y).text
    return out


async def on_cited_line(app: Any, pilot: Any, engine: Any) -> tuple[MemoryPane, Any]:
    stat = next(s for s in engine.line_usage("MEMORY.md").lines if s.count)
    pane = await open_memory(app, pilot)
    await open_path(app, pilot, "MEMORY.md")
    pane.editor.focus()
    pane.editor.move_cursor((stat.line - 1, 0), center=True)
    assert await wait_until(pilot, lambda: pane.editor.showing_usage)
    await settle(app, pilot)
    return pane, stat


async def test_the_gutter_counts_citations_and_marks_lines_never_cited(demo_engine,
                                                                       make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        pane, stat = await on_cited_line(app, pilot, demo_engine)
        drawn = gutter(pane.editor)
        assert drawn[stat.line].lstrip().startswith(f"{stat.count}×"), drawn[stat.line]
        never = next(s.line for s in demo_engine.line_usage("MEMORY.md").lines
                     if not s.count and s.text.strip() and s.line in drawn)
        assert drawn[never].split()[0] == "·"
        # the cursor's line says what the gutter means, and which keys follow it
        assert f"line {stat.line}: cited {stat.count}×" in title(app)
        assert "t trace" in title(app)
        await pilot.press("e")  # editing: the lines move, the gutter goes
        await settle(app, pilot)
        assert not pane.editor.showing_usage
        assert "×" not in gutter(pane.editor).get(stat.line, "")


async def test_t_traces_the_line_to_its_turn_and_esc_walks_back(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        _, stat = await on_cited_line(app, pilot, demo_engine)
        await pilot.press("t")
        assert await wait_until(pilot, lambda: isinstance(app.screen, LineTraceScreen)
                                and bool(app.screen.steps))
        text = screen_text(app)
        for step in ("block", "summary", "raw", "session", "turn", "changed", "used by"):
            assert step in text, step
        assert f"MEMORY.md:{stat.line} of" in text
        screen = app.screen
        turn = next(i for i, s in enumerate(screen.steps) if "turn" in s.label.plain)
        assert "exact phrase" in screen.steps[turn].label.plain
        screen.query_one("#trace-steps").highlighted = turn
        await pilot.press("enter")  # the transcript, at the turn, the matched words marked
        view = app.query_one(TranscriptView)
        assert await wait_until(pilot, lambda: bool(view.query(".-target")))
        await settle(app, pilot)
        assert app.active_pane == "sessions" and "◀ exact phrase" in screen_text(app)
        await pilot.press("escape")  # back to the trace, on the same step
        assert await wait_until(pilot, lambda: isinstance(app.screen, LineTraceScreen)
                                and bool(app.screen.steps))
        assert app.screen.query_one("#trace-steps").highlighted == turn
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, LineTraceScreen)


async def test_u_lists_the_sessions_that_used_the_line_and_opens_one_at_its_citation(
        demo_engine, make_app) -> None:
    citing = None
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        _, stat = await on_cited_line(app, pilot, demo_engine)
        citing = demo_engine.citing_sessions("MEMORY.md", stat.line)
        assert citing
        await pilot.press("u")
        assert await wait_until(pilot, lambda: isinstance(app.screen, LineTraceScreen)
                                and bool(app.screen.steps))
        screen = app.screen
        lst = screen.query_one("#trace-steps")
        assert "used by" in screen.steps[lst.highlighted].label.plain  # `u` starts there
        assert f"{len(citing)} session" in screen_text(app)
        await pilot.press("down", "enter")
        view = app.query_one(TranscriptView)
        assert await wait_until(pilot, lambda: bool(view.query(".-target")))
        await settle(app, pilot)
        assert f"◀ cites MEMORY.md:{stat.line}" in screen_text(app)
        assert view.detail.session.rollout_path == citing[0].rollout_path


async def test_a_summary_step_opens_the_file_in_the_memory_pane(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await on_cited_line(app, pilot, demo_engine)
        await pilot.press("t")
        assert await wait_until(pilot, lambda: isinstance(app.screen, LineTraceScreen)
                                and bool(app.screen.steps))
        screen = app.screen
        i = next(i for i, s in enumerate(screen.steps) if s.go and s.go[0] == "file"
                 and s.go[1].startswith("rollout_summaries/"))
        path = screen.steps[i].go[1]
        screen.query_one("#trace-steps").highlighted = i
        await pilot.press("enter")
        pane = app.query_one(MemoryPane)
        assert await wait_until(pilot, lambda: pane.editor.base is not None
                                and pane.editor.base.path == path)
        assert app.active_pane == "memory"
        await pilot.press("escape")  # not editing: esc goes back to the trace
        assert await wait_until(pilot, lambda: isinstance(app.screen, LineTraceScreen))
