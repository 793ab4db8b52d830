"""The History pane: commits with who made them, the diff of the one selected, restore."""

from __future__ import annotations

from typing import Any

from memdeck.engine import Engine
from memdeck.engine.memory_folder.history import History
from memdeck.tui.panes.history import HistoryPane
from memdeck.tui.widgets.confirm import ConfirmScreen
from memdeck.tui.widgets.diff_view import DiffView, parse_diff, wrap
from memdeck.tui.widgets.history.commit_list import CommitList
from tests.tui import stable_demo
from tests.tui.conftest import SIZE, settle

USER_LINE = "- The database backend is MySQL 8.4 [Task 1]\n"
USER_EDIT = "- The database backend is MySQL 8.4; staging still runs 8.0 [Task 1]\n"

stable_engine = stable_demo.stable_engine  # fixtures: the demo home at a fixed path
fixed_proposal_ids = stable_demo.fixed_proposal_ids




def make_history(engine: Engine) -> dict[str, str]:
    """Four states, each made by someone else: outside, an accepted consolidation, a user
    edit, and outside again (recorded when the pane loads). Returns MEMORY.md at each."""
    memory = engine.home.memory_root / "MEMORY.md"
    engine.record_outside_edits()  # the demo's memory folder, as memdeck first finds it
    states = {"outside": memory.read_text()}
    engine.extract(backend="offline")
    engine.accept(engine.consolidate().id)
    states["consolidation"] = memory.read_text()
    memory.write_text(memory.read_text().replace(USER_LINE, USER_EDIT))
    History(engine.home, engine.clock).snapshot("user", "edit MEMORY.md: staging runs MySQL 8.0")
    states["user"] = memory.read_text()
    note = engine.home.memory_root / "extensions" / "ad_hoc" / "notes" / "outside.md"
    note.write_text("written by another tool\n")
    return states


def lines(widget: Any) -> list[str]:
    return [widget.render_line(y).text for y in range(widget.size.height)]


def diff_text(view: DiffView) -> str:
    return "\n".join(r.sign + r.body for r in view.rows)


async def test_lists_commits_with_origins_and_shows_the_selected_diff(
        demo_engine, make_app) -> None:
    make_history(demo_engine)
    app = make_app(demo_engine, initial="history")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        commits = app.query_one(CommitList)
        assert [e.origin for e in commits.entries] == ["external", "user", "consolidation",
                                                       "start"]
        shown = lines(commits)
        for row, label in zip(shown, ("outside", "user", "consolidation", "start"),
                              strict=False):
            assert f" {label} " in row
        assert all(" 2026-11-20 12:00 " in row for row in shown[:4])  # local time (UTC)
        assert commits.has_focus
        view = app.query_one(DiffView)
        assert "+written by another tool" in diff_text(view)  # the newest is selected
        await pilot.press("down")
        await settle(app, pilot)
        text = diff_text(view)
        assert f"-{USER_LINE.rstrip()}" in text and f"+{USER_EDIT.rstrip()}" in text
        assert {r.kind for r in view.rows} >= {"stat", "file", "hunk", "add", "del", "ctx"}
        entry = app.query_one("#history-entry").render().plain
        assert "edit MEMORY.md: staging runs MySQL 8.0" in entry and "user" in entry


async def test_restore_after_confirmation_makes_a_restore_commit(demo_engine,
                                                                make_app) -> None:
    states = make_history(demo_engine)
    memory = demo_engine.home.memory_root / "MEMORY.md"
    app = make_app(demo_engine, initial="history")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        commits = app.query_one(CommitList)
        await pilot.press("down", "down")  # the accepted consolidation
        await settle(app, pilot)
        target = commits.current
        assert target.origin == "consolidation"
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "new restore commit" in app.screen.detail and target.commit[:12] in \
            app.screen.detail
        await pilot.press("y")
        await settle(app, pilot)
        assert memory.read_text() == states["consolidation"]
        assert not (demo_engine.home.memory_root / "extensions" / "ad_hoc" / "notes" /
                    "outside.md").exists()
        assert [e.origin for e in commits.entries] == ["restore", "external", "user",
                                                       "consolidation", "start"]
        assert commits.cursor == 0 and commits.current.summary.startswith(
            f"restore {target.commit[:12]}")
        assert any("Restored" in n.message for n in app._notifications)
        demo_engine.record_outside_edits()
        assert demo_engine.history()[0].origin == "restore"  # nothing left unrecorded


async def test_cancelling_the_restore_changes_nothing(demo_engine, make_app) -> None:
    states = make_history(demo_engine)
    memory = demo_engine.home.memory_root / "MEMORY.md"
    app = make_app(demo_engine, initial="history")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        before = [e.commit for e in app.query_one(CommitList).entries]
        await pilot.press("end", "r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert memory.read_text() == states["user"]
        demo_engine.record_outside_edits()
        assert [e.commit for e in demo_engine.history()] == before


async def test_restoring_the_current_state_only_explains(demo_engine, make_app) -> None:
    make_history(demo_engine)
    app = make_app(demo_engine, initial="history")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert any("in this state now" in n.message for n in app._notifications)


async def test_enter_reads_the_diff_and_escape_goes_back(demo_engine, make_app) -> None:
    make_history(demo_engine)
    app = make_app(demo_engine, initial="history")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        assert app.query_one(DiffView).has_focus
        await pilot.press("escape")
        assert app.query_one(CommitList).has_focus
        assert isinstance(app.query_one("#history-pane"), HistoryPane)


def test_parse_diff_counts_hunk_lines_so_dashes_stay_content() -> None:
    text = (" a.md | 3 ++-\n 1 file changed\n\ndiff --git a/a.md b/a.md\nindex 1..2 100644\n"
            "--- a/a.md\n+++ b/a.md\n@@ -1,2 +1,3 @@\n--- not a header\n+++ nor this\n"
            " kept\n+\tadded\x1b[31m\n")
    rows = parse_diff(text)
    kinds = [r.kind for r in rows]
    assert kinds == ["stat", "stat", "stat", "file", "meta", "path", "path", "hunk", "del",
                     "add", "ctx", "add"]
    assert (rows[8].sign, rows[8].body) == ("-", "-- not a header")
    assert rows[11].body == "    added\ufffd[31m"  # tabs expanded, no raw escape codes


def test_wrap_breaks_long_lines_at_spaces() -> None:
    assert wrap("short", 10) == ["short"]
    assert wrap("aaaa bbbb cccc", 10) == ["aaaa bbbb ", "cccc"]
    assert wrap("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    assert "".join(wrap("日本語のテキスト " * 5, 9)) == "日本語のテキスト " * 5


async def test_a_big_diff_is_drawn_lazily(demo_engine, make_app) -> None:
    app = make_app(demo_engine, initial="history")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        view = app.query_one(DiffView)
        body = "".join(f"+line {i} " + "word " * (i % 40) + "\n" for i in range(60000))
        view.show_rows(parse_diff("--- a/x\n+++ b/x\n@@ -0,0 +1,60000 @@\n" + body))
        await pilot.pause()
        assert view.virtual_size.height > 60000  # long lines wrapped
        view.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert "line 59999" in "".join(lines(view))
        assert len(view._strips) < 200  # only what was on screen was drawn


def test_snapshot_history_with_a_diff(stable_engine, make_app, snap_compare,
                                      fixed_proposal_ids) -> None:
    make_history(stable_engine)

    async def run_before(pilot: Any) -> None:
        await settle(pilot.app, pilot)
        await pilot.press("down")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(stable_engine, initial="history"), terminal_size=SIZE,
                        run_before=run_before)
