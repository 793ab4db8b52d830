"""Every pane at 80×24, 100×30 and 160×48: columns shrink by priority, nothing important is
cut, the footer keeps `?` and `q`, toasts stay off the content.

Snapshots of each pane at the three sizes, then Pilot tests of what a user would check first
at a narrow terminal, which fail on the layouts that cut them."""

from __future__ import annotations

from typing import Any

import pytest

from memdeck.engine import Engine
from memdeck.tui.widgets.session_table import SessionTable
from tests.tui import stable_demo
from tests.tui.conftest import settle

stable_engine = stable_demo.stable_engine  # fixtures: the demo home at a fixed path
fixed_proposal_ids = stable_demo.fixed_proposal_ids

SIZES = [(80, 24), (100, 30), (160, 48)]
NARROW = [(80, 24), (100, 30)]
# what each view needs before it is opened: the view's name, the pane the app starts on
VIEWS = ["sessions", "transcript", "memories", "memory", "history", "review", "settings"]


def prepare(engine: Engine, view: str) -> str:
    """Make the home hold what `view` shows; returns the pane the app starts on."""
    if view == "history":
        engine.record_outside_edits()  # the first state, then an accepted consolidation
        engine.extract(backend="offline")
        engine.accept(engine.consolidate().id)
    if view == "review":
        engine.extract(backend="offline")
        engine.consolidate()
    return "sessions" if view == "transcript" else view


async def open_view(pilot: Any, view: str) -> None:
    await settle(pilot.app, pilot)
    if view == "transcript":
        table = pilot.app.query_one(SessionTable)
        table.cursor = next(i for i, s in enumerate(table.rows) if "Django" in s.preview)
        await pilot.press("enter")
        await settle(pilot.app, pilot)
    if view == "history":
        await pilot.press("down")  # the consolidation's diff
        await settle(pilot.app, pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", VIEWS)
def test_layout_snapshot(view, size, stable_engine, make_app, snap_compare,
                         fixed_proposal_ids) -> None:
    initial = prepare(stable_engine, view)

    async def run_before(pilot: Any) -> None:
        await open_view(pilot, view)

    assert snap_compare(make_app(stable_engine, initial=initial), terminal_size=size,
                        run_before=run_before)


# -- what a user checks first ------------------------------------------------------------
def footer_keys(app: Any) -> list[str]:
    """The footer's keys a user sees whole: `? Help`, `q Quit`, …"""
    from memdeck.tui.widgets.key_footer import KeyFooter

    return app.screen.query_one(KeyFooter).shown()


@pytest.mark.parametrize("size", [*NARROW, (120, 36), (160, 48)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", VIEWS)
async def test_the_footer_keeps_help_and_quit(view, size, demo_engine, make_app) -> None:
    app = make_app(demo_engine, initial=prepare(demo_engine, view))
    async with app.run_test(size=size) as pilot:
        await open_view(pilot, view)
        keys = footer_keys(app)
        assert keys[:2] == ["? Help", "q Quit"], keys
        if view == "transcript":
            assert "esc Back" in keys  # the way back out of it, too


@pytest.mark.parametrize("size", NARROW, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_session_rows_keep_status_whole_and_reason_readable(size, demo_engine,
                                                                  make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        header = app.query_one("#session-header").render().plain
        status_at = header.index("status")
        reason_at = header.index("reason")
        for y in range(min(table.size.height, len(table.rows))):
            s = table.rows[y]
            line = table.render_line(y).text
            assert line[status_at:status_at + len(s.status)] == s.status, line
            assert line[status_at + len(s.status)] == " "  # the whole word, under its title
            # at least 20 columns of reason at 80, 28 at 100 (it had 23 there)
            readable = 20 if size[0] == 80 else 28
            assert line[reason_at:].startswith(s.reason[:readable]), (line, s.reason)


async def test_long_memory_file_names_take_one_line_each(demo_engine, make_app) -> None:
    from memdeck.tui.widgets.memory.memory_files import MemoryFileList

    summaries = demo_engine.home.memory_root / "rollout_summaries"
    for i in range(6):
        (summaries / f"2026-11-1{i}T09-52-00-ab{i}d-a_very_long_slug_about_fixing_the_"
                     f"checkout_tests_number_{i}.md").write_text("# checkout tests\n")
    app = make_app(demo_engine, initial="memory")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        files = app.query_one(MemoryFileList)
        lines = [files.render_line(y).text.rstrip() for y in range(files.size.height)]
        start = next(i for i, line in enumerate(lines) if line.startswith("Rollout summaries"))
        count = int(lines[start].split("(")[1].rstrip(")"))
        assert count == 8
        names = lines[start + 1:start + 1 + count]
        assert all(n.startswith(" 2026-11-1") for n in names), names  # no wrapped halves
        long_ones = [n for n in names if "a_very_long" in n]
        assert len(long_ones) == 6 and all(n.endswith("…") for n in long_ones), long_ones


async def test_settings_descriptions_get_the_width_at_100(demo_engine, make_app) -> None:
    from memdeck.tui.widgets.settings.setting_row import SettingRow

    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        row = app.query_one("#setting-use_memories", SettingRow)
        name, help_ = row.query_one(".setting-label"), row.query_one(".setting-help")
        assert help_.region.y == name.region.y + 1  # under the name, not beside it
        assert help_.region.height == 1  # one line, not a strip of two words a line
        assert "off: kept, but not used" in help_.render().plain


@pytest.mark.parametrize("size", NARROW, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_raw_memories_phase_2_column_is_whole(size, demo_engine, make_app) -> None:
    from textual.widgets import DataTable

    app = make_app(demo_engine, initial="memories")
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        table = app.query_one("#memories-table", DataTable)
        header = table.render_line(0).text
        assert "phase 2" in header and header.rstrip().endswith("phase 2"), header
        assert "✓" in table.render_line(2).text  # the selected row's mark shows


@pytest.mark.parametrize("size", [(100, 30), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_toasts_cover_neither_the_diff_nor_the_bars(size, demo_engine,
                                                          make_app) -> None:
    prepare(demo_engine, "review")
    app = make_app(demo_engine, initial="review")
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(app, pilot)
        app.notify("Rejected proposal 20261120T120000Z-5eed: the deploy notes are wrong",
                   timeout=30)
        await pilot.pause(0.2)
        toast = app.screen.query_one("Toast")
        assert toast.region.height >= 1
        for covered in ("#review-hunks", "#review-status", "KeyFooter", "#pipeline-bar"):
            widget = app.query_one(covered)
            assert not toast.region.overlaps(widget.region), covered
        assert toast.region.bottom <= app.query_one("#review-pane").region.y


async def test_after_a_resize_the_footer_and_columns_fit_again(demo_engine, make_app) -> None:
    from textual.widgets import DataTable

    app = make_app(demo_engine, initial="memories")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert "c Extract+consolidate" in footer_keys(app)
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        assert footer_keys(app)[:2] == ["? Help", "q Quit"]
        header = app.query_one("#memories-table", DataTable).render_line(0).text
        assert header.rstrip().endswith("phase 2"), header
        await pilot.resize_terminal(160, 48)
        await settle(app, pilot)
        assert "c Extract+consolidate" in footer_keys(app)  # what was hidden comes back
