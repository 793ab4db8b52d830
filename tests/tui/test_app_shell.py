"""The shell around the panes: keys 1–6, help, the command palette, remapped keys, quitting."""

from __future__ import annotations

from textual.widgets import TabbedContent

from memdeck.tui.widgets.help import HelpScreen
from tests.tui.conftest import SIZE, settle

PANES = ["sessions", "memories", "memory", "history", "review", "settings"]


async def test_number_keys_switch_panes(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for key, pid in zip("234561", [*PANES[1:], PANES[0]], strict=True):
            await pilot.press(key)
            await pilot.pause()
            assert app.query_one(TabbedContent).active == pid
            # focus moved into the pane shown, so its keys work and the Footer shows them
            assert app.focused is not None and app.pane(pid) in app.focused.ancestors_with_self


async def test_help_lists_the_keys_of_the_pane_in_view(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = {(k, d) for k, d, _ in app.screen.rows}
        assert ("/", "Filter") in rows and ("f", "Forget") in rows
        assert ("c", "Extract+consolidate") in rows and ("q", "Quit") in rows
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_palette_offers_every_pane_and_the_run(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        # titles name their key, "Go to Review (5)" (tests/tui/test_keys.py): match the rest
        commands = {c.title.rsplit(" (", 1)[0]: c for c in app.get_system_commands(app.screen)}
        for title in ("Go to Sessions", "Go to Raw memories", "Go to Memory", "Go to History",
                      "Go to Review", "Go to Settings", "Extract and consolidate", "Help",
                      "Forget this session", "Filter sessions"):
            assert title in commands, title
        commands["Go to History"].callback()
        await pilot.pause()
        assert app.active_pane == "history"
        commands["Filter sessions"].callback()
        await settle(app, pilot)
        assert app.active_pane == "sessions"
        assert app.focused is not None and app.focused.id == "session-filter"


async def test_palette_opens_and_runs_a_command_by_name(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"go to settings")
        await pilot.pause(0.3)  # the palette searches on a timer
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.active_pane == "settings"


async def test_keys_remapped_in_memdeck_config(demo_engine, make_app) -> None:
    demo_engine.keymap_set("app.pane.history", "h")
    cfg = demo_engine.home.memdeck_config_path
    cfg.write_text(cfg.read_text() + '"app.help" = 42\n')
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("h")
        await pilot.pause()
        assert app.active_pane == "history"
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
        assert any("app.help" in w and "string" in w for w in warnings)


async def test_q_quits(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_a_broken_memdeck_config_is_one_line_and_the_app_runs(demo_engine,
                                                                    make_app) -> None:
    cfg = demo_engine.home.memdeck_config_path
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_bytes(b'[keymap\n"app.help" = \xff\xfe')  # truncated and not UTF-8
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.is_running and len(app.query_one("#session-table").rows) == 19
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
        assert any("config.toml" in w and "keys are not remapped" in w for w in warnings)
        assert all("\n" not in w for w in warnings)
        await pilot.press("4")  # default keys still work
        await pilot.pause()
        assert app.active_pane == "history"
    assert cfg.read_bytes() == b'[keymap\n"app.help" = \xff\xfe'  # untouched


async def test_opening_a_home_a_killed_memdeck_left_says_what_was_recovered(
        tmp_path, make_app) -> None:
    from crash_run import KILLED, run_memdeck

    from memdeck.engine import Engine, demo_home

    home = demo_home(tmp_path / "demo")
    eng = Engine.open(home)
    eng.extract(backend="offline")
    pid = eng.consolidate().id
    assert run_memdeck(home, "accept", pid, crash_at="switch.swapped").returncode == KILLED
    said: list[str] = []
    Engine.announce = said.append  # what run_app does
    try:
        engine = Engine.open(home)
    finally:
        Engine.announce = None
    assert said == [f"finished an interrupted accept proposal {pid}"]
    app = make_app(engine, notices=tuple(f"recovered: {d}" for d in said))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert any(n.message.startswith("recovered: finished an interrupted accept")
                   for n in app._notifications)
        assert [p.status for p in engine.proposals()] == ["accepted"]
