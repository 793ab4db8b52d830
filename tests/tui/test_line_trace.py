"""Following one memory line both ways in the app (issue 11): the usage gutter beside
MEMORY.md, `t` for where a line came from, `u` for the sessions that used it, Enter to open a
step where it lives and `esc` to walk back."""

from __future__ import annotations

from typing import Any

from memdeck.tui.panes.memory import MemoryPane
from memdeck.tui.widgets.memory.line_trace import LineTraceScreen
from memdeck.tui.widgets.memory.memory_editor import MemoryEditor
from memdeck.tui.widgets.sessions.transcript import TranscriptView
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


async def trace_cited_line(app: Any, pilot: Any, engine: Any) -> Any:
    """`t` on the first cited line of MEMORY.md, once the trace has its steps; its gutter
    figures."""
    _, stat = await on_cited_line(app, pilot, engine)
    await pilot.press("t")
    assert await wait_until(pilot, lambda: isinstance(app.screen, LineTraceScreen)
                            and bool(app.screen.steps))
    return stat


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
        stat = await trace_cited_line(app, pilot, demo_engine)
        text = screen_text(app)
        for step in ("block", "summary", "raw", "session", "turn", "changed", "used by"):
            assert step in text, step
        assert f"MEMORY.md:{stat.line} of" in text
        screen = app.screen
        turn = next(i for i, s in enumerate(screen.steps) if "turn" in s.label.plain)
        assert "exact phrase" in screen.steps[turn].label.plain
        # the turn is named as `memdeck trace` and said vs remembered name it
        item = demo_engine.trace("MEMORY.md", stat.line).summaries[0].turn.item_index
        assert screen.steps[turn].label.plain.endswith(f"(item {item})")
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
        await trace_cited_line(app, pilot, demo_engine)
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


async def test_the_changed_step_opens_history_on_its_commit_and_esc_comes_back(
        demo_engine, make_app) -> None:
    """Issue 23, item 5: "changed" names a commit; enter shows History with that commit under
    the cursor (its diff beside it), and esc comes back to the trace on the same step."""
    from memdeck.tui.widgets.history.commit_list import CommitList

    demo_engine.record_outside_edits()
    memory = demo_engine.home.memory_root / "MEMORY.md"
    memory.write_text(memory.read_text() + "- a later change: the line's commit is older\n")
    demo_engine.record_outside_edits()
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await trace_cited_line(app, pilot, demo_engine)
        screen = app.screen
        i = next(i for i, s in enumerate(screen.steps) if s.go and s.go[0] == "commit")
        commit = screen.steps[i].go[1]
        screen.query_one("#trace-steps").highlighted = i
        await pilot.press("enter")
        commits = app.query_one(CommitList)
        assert await wait_until(pilot, lambda: app.active_pane == "history"
                                and commits.current is not None
                                and commits.current.commit == commit)
        assert commits.entries[0].commit != commit  # not simply the newest one
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, LineTraceScreen)
                                and bool(app.screen.steps))
        assert app.screen.query_one("#trace-steps").highlighted == i


async def test_lines_cited_since_removed_are_listed_in_the_trace(demo_engine, make_app) -> None:
    """A cited line deleted since: the gutter no longer has it, the trace lists it last as
    "cited, since removed", with its old text, and opens History."""
    memory = demo_engine.home.root / "memories" / "MEMORY.md"
    demo_engine.record_outside_edits()  # history's first state: the one the demo cited
    old = memory.read_text(encoding="utf-8")
    gone = "- The database backend is MySQL 8.4 [Task 1]"
    assert gone in old
    memory.write_text(old.replace(gone + "\n", ""), encoding="utf-8")
    assert demo_engine.record_outside_edits()
    [removed] = demo_engine.line_usage("MEMORY.md").removed
    assert removed.text == gone
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await trace_cited_line(app, pilot, demo_engine)
        labels = [s.label.plain for s in app.screen.steps]
        k = next(i for i, s in enumerate(labels) if s.startswith("removed"))
        assert labels[k].endswith("1 cited range of MEMORY.md no longer in it")
        assert k == len(labels) - 2 and gone in labels[-1]
        assert f"line {removed.line_start} of {removed.commit[:8]} · 1×" in labels[-1]
        assert app.screen.steps[-1].go[0] == "commit"  # History, on the commit that removed it
    # opened again without the pane's gutter (esc back from a step): read with the trace
    screen = LineTraceScreen("MEMORY.md", removed.line_start - 1)
    async with make_app(demo_engine).run_test(size=SIZE) as pilot:
        await pilot.app.push_screen(screen)
        assert await wait_until(pilot, lambda: bool(screen.steps))
        assert gone in screen.steps[-1].label.plain
