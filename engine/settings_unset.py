"""Remove a setting from its file so the default applies again (the Settings pane's "clear").

Kept out of `Engine` for now: the TUI calls `config_unset(engine, key)` from a worker. It keeps
every other byte of the file, as `config_set` does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .settings import SettingsFile, SettingValue, resolve_key

if TYPE_CHECKING:
    from . import Engine


def config_unset(engine: Engine, key: str) -> SettingValue:
    """Delete `key` (and its aliases) from config.toml or memdeck's config.toml."""
    which, table, spec = resolve_key(key)
    path = engine.home.config_path if which == "codex" else engine.home.memdeck_config_path
    SettingsFile(path).unset(table, spec)
    engine.home.__dict__.pop("config", None)  # re-read on next use, as config_set does
    return engine.config_get(key)
