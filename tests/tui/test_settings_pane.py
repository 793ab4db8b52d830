"""The Settings pane: switches and numbers written to config.toml, memdeck's settings, keys,
reset with a typed confirmation, backups and restore."""

from __future__ import annotations

from typing import Any

from textual.widgets import Input, Select, Switch

from memdeck.tui.panes.settings import SettingsPane
from memdeck.tui.widgets.confirm import AskScreen, ConfirmScreen, TypedConfirmScreen
from memdeck.tui.widgets.settings.backup_list import BackupList
from memdeck.tui.widgets.settings.binding_list import BindingList
from memdeck.tui.widgets.settings.setting_row import SettingRow
from tests.tui.conftest import SIZE, settle

MEMORY_COMMENT = "# Wait this long after a session's last activity before extracting it."




def row(app: Any, key: str) -> SettingRow:
    return app.query_one(SettingsPane).row(key)


def source(app: Any, key: str) -> str:
    return str(row(app, key).query_one(".setting-source").render())


def messages(app: Any) -> list[str]:
    return [n.message for n in app._notifications]


async def replace_text(pilot: Any, field: Input, text: str) -> None:
    """Focus a field, Enter to edit it, delete what it holds, type `text` (as a user does)."""
    field.focus()
    await pilot.press("enter", "end", *["backspace"] * len(field.value), *text)


async def test_toggling_use_memories_writes_config_and_keeps_comments(demo_engine,
                                                                      make_app) -> None:
    config = demo_engine.home.config_path
    before = config.read_text()
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        switch = row(app, "use_memories").control
        assert isinstance(switch, Switch) and switch.has_focus and switch.value
        assert source(app, "use_memories") == "default"
        await pilot.press("space")
        await settle(app, pilot)
        after = config.read_text()
        assert "use_memories = false" in after
        assert after.replace("use_memories = false\n", "") == before  # nothing else moved
        assert MEMORY_COMMENT in after
        assert source(app, "use_memories") == "set"
        assert not switch.value
        assert any("use_memories = false" in m for m in messages(app))
        assert demo_engine.config_get("use_memories").value is False


async def test_number_out_of_range_is_refused_and_the_file_is_unchanged(demo_engine,
                                                                        make_app) -> None:
    config = demo_engine.home.config_path
    before = config.read_bytes()
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        field = row(app, "min_rollout_idle_hours").control
        assert field.value == "6"
        await replace_text(pilot, field, "500")
        await pilot.press("enter")
        await settle(app, pilot)
        assert config.read_bytes() == before
        assert "min_rollout_idle_hours must be an integer from 1 to 48; got 500" in \
            messages(app)
        assert field.value == "6"  # the stored value is back on screen


async def test_valid_numbers_are_written_on_enter_not_on_blur(demo_engine, make_app) -> None:
    config = demo_engine.home.config_path
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await replace_text(pilot, row(app, "min_rollout_idle_hours").control, "12")
        await pilot.press("enter")
        await settle(app, pilot)
        text = config.read_text()
        assert "min_rollout_idle_hours = 12" in text and MEMORY_COMMENT in text
        assert source(app, "max_unused_days") == "default"
        await replace_text(pilot, row(app, "max_unused_days").control, "45")
        await pilot.press("tab")  # leaving the field without Enter writes nothing
        await settle(app, pilot)
        assert "max_unused_days = " not in config.read_text()
        assert source(app, "max_unused_days") == "default"
        assert row(app, "max_unused_days").control.value == ""


async def test_backend_select_and_a_model_are_written_to_memdecks_config(demo_engine,
                                                                         make_app) -> None:
    path = demo_engine.home.memdeck_config_path
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        effect = app.query_one("#backend-effect")
        assert "offline (heuristic" in str(effect.render())
        select = row(app, "memdeck.backend").control
        assert isinstance(select, Select) and select.value == "auto"
        select.focus()
        await pilot.press("enter", "down", "down", "enter")  # auto → offline → openai
        await settle(app, pilot)
        assert 'backend = "openai"' in path.read_text()
        assert "Backend in effect: openai" in str(effect.render())

        model = row(app, "memdeck.extract_model").control
        await replace_text(pilot, model, "gpt-5.4-mini")
        await pilot.press("enter")
        await settle(app, pilot)
        assert 'extract_model = "gpt-5.4-mini"' in path.read_text()
        await replace_text(pilot, model, "")
        await pilot.press("enter")  # empty: the key goes, the default applies again
        await settle(app, pilot)
        assert "extract_model" not in path.read_text()
        assert 'backend = "openai"' in path.read_text()
        assert source(app, "memdeck.extract_model") == "default"


async def test_api_key_is_saved_but_never_shown(demo_engine, make_app) -> None:
    secret = "sk-test-0123456789abcdef"
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        field = row(app, "memdeck.api_key").control
        assert field.password
        await replace_text(pilot, field, secret)
        await pilot.press("enter")
        await settle(app, pilot)
        assert secret in demo_engine.home.memdeck_config_path.read_text()
        assert field.value == "" and field.placeholder.startswith("set (hidden)")
        assert source(app, "memdeck.api_key") == "set"
        field.focus()
        await pilot.pause()
        assert secret not in app.export_screenshot()
        assert not any(secret in m for m in messages(app))


async def test_reset_needs_the_word_and_backs_up_first(demo_engine, make_app) -> None:
    root = demo_engine.home.memory_root
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not app.query_one(BackupList).display
        await pilot.press("R")
        assert isinstance(app.screen, TypedConfirmScreen)
        await pilot.press(*"nope", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TypedConfirmScreen)  # still asking
        assert "That is not reset" in str(app.screen.query_one("#hint").render())
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, TypedConfirmScreen)
        assert len(demo_engine.memories().rows) == 3 and (root / "MEMORY.md").exists()
        assert demo_engine.backups() == []

        await pilot.press("R", *"reset", "enter")
        await settle(app, pilot)
        assert demo_engine.memories().rows == []
        assert not (root / "MEMORY.md").exists()
        backups = demo_engine.backups()
        assert [b.id for b in backups] == ["20261120T120000Z"]
        assert any("Backup 20261120T120000Z" in m for m in messages(app))
        table = app.query_one(BackupList)
        assert table.display
        assert [str(c) for c in table.get_column("id")] == ["20261120T120000Z"]


async def test_restore_a_backup_brings_the_files_back(demo_engine, make_app) -> None:
    root = demo_engine.home.memory_root
    memory_md = (root / "MEMORY.md").read_bytes()
    backup = demo_engine.reset()
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("b")
        assert app.query_one(BackupList).has_focus
        await pilot.press("enter")
        assert isinstance(app.screen, ConfirmScreen)
        assert backup.id in str(app.screen.query_one("#question").render())
        await pilot.press("y")
        await settle(app, pilot)
        assert (root / "MEMORY.md").read_bytes() == memory_md
        assert len(demo_engine.memories().rows) == 3
        ids = [str(c) for c in app.query_one(BackupList).get_column("id")]
        assert len(ids) == 2 and backup.id in ids  # the state replaced was backed up too


async def test_remapped_key_is_written_and_works_at_once(demo_engine, make_app) -> None:
    path = demo_engine.home.memdeck_config_path
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("K")
        table = app.query_one(BindingList)
        assert table.has_focus
        ids = [i.id for i in table.bindings_info]
        assert {"app.consolidate", "app.pane.memories", "sessions.filter",
                "settings.reset", "confirm.yes"} <= set(ids)
        await pilot.press(*["down"] * ids.index("app.pane.memories"), "enter")
        assert isinstance(app.screen, AskScreen)
        await pilot.press("backspace", "m", "enter")
        await settle(app, pilot)
        text = path.read_text()
        assert "[keymap]" in text and '"app.pane.memories" = "m"' in text
        assert app.active_pane == "settings"
        await pilot.press("2")  # the old key no longer goes there
        await settle(app, pilot)
        assert app.active_pane == "settings"
        await pilot.press("m")
        await settle(app, pilot)
        assert app.active_pane == "memories"


async def test_an_unusable_key_is_one_error_line_and_nothing_changes(demo_engine,
                                                                     make_app) -> None:
    path = demo_engine.home.memdeck_config_path
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("K", "enter")  # the first binding: app.pane.sessions
        assert isinstance(app.screen, AskScreen)
        await pilot.press("backspace", "?", "enter")  # Textual calls it question_mark
        await settle(app, pilot)
        assert not path.exists() or "keymap" not in path.read_text()
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert len(errors) == 1 and "not a key list: '?'" in errors[0]
        await pilot.press("2")
        await settle(app, pilot)
        assert app.active_pane == "memories"  # the default keys still work


async def test_memories_feature_switch_writes_the_features_table(demo_engine,
                                                                 make_app) -> None:
    config = demo_engine.home.config_path
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.query_one(SettingsPane).run_action("toggle('memories')")  # as the palette does
        await settle(app, pilot)
        text = config.read_text()
        assert "[features]\n# Memories are off by default in Codex; this home has them on.\n" \
               "memories = false\n" in text
        assert str(row(app, "memories").query_one(".setting-range").render()) == "off"


async def test_a_broken_config_toml_is_reported_and_never_written(demo_engine,
                                                                   make_app) -> None:
    config = demo_engine.home.config_path
    config.write_text("[memories\nuse_memories = true\n")
    before = config.read_bytes()
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert len(errors) == 1 and "is not valid TOML" in errors[0]
        assert row(app, "use_memories").disabled
        assert not row(app, "memdeck.backend").disabled  # memdeck's own file is fine
        await pilot.press("space")
        await replace_text(pilot, row(app, "memdeck.max_retries").control, "5")
        await pilot.press("enter")
        await settle(app, pilot)
        assert config.read_bytes() == before
        assert "max_retries = 5" in demo_engine.home.memdeck_config_path.read_text()


def test_snapshot_settings_top(demo_engine, make_app, snap_compare) -> None:
    async def loaded(pilot: Any) -> None:
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(demo_engine, initial="settings"), terminal_size=SIZE,
                        run_before=loaded)


def test_snapshot_reset_confirmation(demo_engine, make_app, snap_compare) -> None:
    async def ask(pilot: Any) -> None:
        await settle(pilot.app, pilot)
        await pilot.press("R", *"res")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(demo_engine, initial="settings"), terminal_size=SIZE,
                        run_before=ask)


def test_snapshot_keys_and_backups_after_a_reset(demo_engine, make_app,
                                                 snap_compare) -> None:
    demo_engine.reset()

    async def to_backups(pilot: Any) -> None:
        await settle(pilot.app, pilot)
        await pilot.press("b")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(demo_engine, initial="settings"), terminal_size=SIZE,
                        run_before=to_backups)


async def test_switching_the_memory_version_explains_and_asks_first(demo_engine,
                                                                     make_app) -> None:
    config = demo_engine.home.config_path
    before = config.read_text()
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        version = row(app, "version")
        help_text = str(version.query_one(".setting-help").render())
        assert "Now v1: memories/ exists, no version set" in help_text
        version.control.focus()
        await pilot.press("enter", "down", "enter")  # v1 → v2
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        text = " ".join(str(w.render()) for w in dialog.query("Static, Label"))
        assert "memories_v2/" in text and "memories/ and its raw memories are kept" in text
        await pilot.press("escape")  # no: nothing written, the row shows v1 again
        await settle(app, pilot)
        assert config.read_text() == before
        assert version.control.value == "v1"
        version.control.focus()
        await pilot.press("enter", "down", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(app, pilot)
        assert 'version = "v2"' in config.read_text()
        assert demo_engine.home.memory_version == "v2"
        assert (demo_engine.home.root / "memories").is_dir()  # the v1 root is kept


async def test_descriptions_move_when_the_width_crosses_the_narrow_threshold(
        demo_engine, make_app) -> None:
    """Built wide, a description sits beside its name; made narrow it goes under the name, and
    wide again back beside it (the layout is chosen at compose and on each crossing)."""
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)

        def help_under_name() -> bool:
            r = row(app, "use_memories")
            name, help_ = r.query_one(".setting-label"), r.query_one(".setting-help")
            return help_.region.y > name.region.y

        assert not help_under_name()
        await pilot.resize_terminal(100, 30)
        await settle(app, pilot)
        assert help_under_name()
        await pilot.resize_terminal(160, 48)
        await settle(app, pilot)
        assert not help_under_name()


async def test_k_and_b_at_once_on_the_first_visit_reach_the_keys_and_the_backups(
        demo_engine, make_app) -> None:
    """The part below the first screen is built after the first paint: `k` or `b` typed as the
    pane opens lands on the keys table / the backups, which show what was loaded before they
    existed (the bindings, the backend in effect)."""
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("6", "K")
        await settle(app, pilot)
        assert isinstance(app.focused, BindingList)
        assert app.query_one(BindingList).row_count > 0  # filled from the Loaded data
        assert str(app.query_one("#backend-effect").render()).startswith("Backend in effect")
        await pilot.press("b")
        await settle(app, pilot)
        backups, empty = app.query_one(BackupList), app.query_one("#backups-empty")
        assert isinstance(app.focused, BackupList) if backups.display else empty.display
