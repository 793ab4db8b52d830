"""Reading and changing settings for the facade: Codex's keys in `config.toml`, memdeck's in
its own file, one `SettingValue` per key (codex/settings.py holds the keys and the parsing).

Part of the facade (engine/__init__.py). After a change the home's cached `config` is dropped,
so the next use reads the file again.
"""

from __future__ import annotations

from typing import Any

from .codex.home import CodexHome
from .codex.settings import (
    SettingsFile,
    SettingValue,
    adjustment_note,
    all_keys,
    coerce_stored,
    parse_value,
    resolve_key,
)


class Settings:
    """The settings of one home; cheap to build, reads the files on every call."""

    def __init__(self, home: CodexHome) -> None:
        self.home = home

    def file(self, which: str) -> SettingsFile:
        """`codex` (config.toml) or `memdeck` (memdeck's own settings file)."""
        return SettingsFile(self.home.config_path if which == "codex"
                            else self.home.memdeck_config_path)

    def memdeck(self) -> dict[str, Any]:
        """memdeck's settings file as stored (what the backends resolve their config from)."""
        return self.file("memdeck").read()

    def get(self, key: str) -> SettingValue:
        which, table, spec = resolve_key(key)
        doc = self.file(which).read()
        container = doc.get(table, {}) if table else doc
        container = container if isinstance(container, dict) else {}
        raw = next((container[k] for k in (spec.name, *spec.aliases) if k in container), None)
        display_key = spec.name if which == "codex" else f"memdeck.{spec.name}"
        if which == "codex" and spec.name == "version":
            self.home.__dict__.pop("config", None)
            info = self.home.version_info  # Codex's resolution, not the bare default
            return SettingValue(display_key, info.name, raw is not None, spec.default,
                                spec.allowed(), spec.help, note=info.reason)
        adjusted = (adjustment_note(spec, raw, "config.toml") if which == "codex" else
                    adjustment_note(spec, raw, self.home.memdeck_config_path.name, "memdeck"))
        return SettingValue(display_key, coerce_stored(spec, raw), raw is not None,
                            spec.default, spec.allowed(), spec.help, adjusted=adjusted)

    def set(self, key: str, value: str) -> SettingValue:
        which, table, spec = resolve_key(key)
        parsed = parse_value(spec, value)
        self.file(which).set(table, spec, parsed)
        self.home.__dict__.pop("config", None)  # re-read on next use
        return self.get(key)

    def unset(self, key: str) -> SettingValue:
        """Remove a key from its file (every other byte kept) so the default applies again."""
        which, table, spec = resolve_key(key)
        self.file(which).unset(table, spec)
        self.home.__dict__.pop("config", None)
        return self.get(key)

    def all(self) -> list[SettingValue]:
        return [self.get(k) for k in all_keys()]
