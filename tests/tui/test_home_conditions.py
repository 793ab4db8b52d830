"""Issue 23, items 2 and 3: what holds for the whole home is said for as long as it holds.

- Memories off (`[features] memories = false`): every status says Codex does nothing, and the
  banner under the header says why, `[features]` and all (not a toast, not read as markup).
- A broken config.toml: one lasting line naming the file and the line; the sessions and the
  memory files are still shown (not "the memory folder is empty"); every change refuses; and
  once the file is fixed, the app recovers by itself (the watcher sees config.toml change).
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from memdeck.tui.panes.memory import MemoryPane
from memdeck.tui.widgets.home_banner import HomeBanner
from memdeck.tui.widgets.session_table import SessionTable
from tests.tui.conftest import SIZE, settle
from tests.tui.test_live_updates import wait_until

BROKEN = "[features]\nmemories = true\n[memories\nmax_unused_days = 5\n"


def banner(app: Any) -> str:
    b = app.query_one(HomeBanner)
    return str(b.render()) if b.display else ""


async def test_memories_off_is_said_by_every_status_and_by_the_banner(demo_engine,
                                                                     make_app) -> None:
    cfg = demo_engine.home.config_path
    cfg.write_text(cfg.read_text().replace("memories = true", "memories = false"))
    demo_engine.home.__dict__.pop("config", None)  # as the app finds it at start
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        text = banner(app)
        assert "[features] memories = true" in text  # as written, not eaten as markup
        table = app.query_one(SessionTable)
        eligible = [s for s in table.rows if s.status == "eligible"]
        assert eligible and all(s.reason.startswith("memories are off") for s in eligible)
        table.cursor = table.rows.index(eligible[0])
        await pilot.pause()
        assert "Codex extracts, consolidates and uses nothing" in str(
            app.query_one("#session-detail", Static).render())


async def test_a_broken_config_is_one_lasting_line_and_the_app_recovers_when_it_is_fixed(
        demo_engine, make_app) -> None:
    cfg = demo_engine.home.config_path
    good = cfg.read_text()
    cfg.write_text(BROKEN)
    demo_engine.home.__dict__.pop("config", None)  # as the app finds it at start
    app = make_app(demo_engine, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(SessionTable)
        assert await wait_until(pilot, lambda: len(table.rows) == 19)  # still listed
        text = banner(app)
        assert "config.toml" in text and "line 3" in text, text
        await pilot.press("3")
        await settle(app, pilot)
        memory = app.query_one(MemoryPane)  # the files are there, not "the folder is empty"
        assert "MEMORY.md" in [f.path for f in memory.files]
        await pilot.press("1")
        await settle(app, pilot)
        cfg.write_text(good)  # fixed in an editor: nothing to press
        assert await wait_until(pilot, lambda: banner(app) == ""), banner(app)
        assert all(not s.reason.startswith("memories are off") for s in table.rows)


async def test_every_message_can_be_read_again_in_the_log(demo_engine, make_app) -> None:
    """Issue 23, item 8: a toast that flashed by is in the message log (`@`, or "Messages"
    in the palette), with its time and level, its text as written."""
    from textual.widgets import RichLog

    from memdeck.tui.widgets.message_log import MessageLogScreen

    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.notify("memories are off ([features] memories = false)", severity="warning")
        app.notify("extract failed: model endpoint timed out", severity="error")
        await pilot.pause()
        assert any("[features]" in n.message for n in app._notifications)
        await pilot.press("@")
        await settle(app, pilot)
        assert isinstance(app.screen, MessageLogScreen)
        log = app.screen.query_one(RichLog)
        text = "\n".join(line.text for line in log.lines)
        assert "warning" in text and "[features] memories = false" in text
        assert "error" in text and "model endpoint timed out" in text
        assert text.index("[features]") < text.index("timed out")  # oldest first
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, MessageLogScreen)
