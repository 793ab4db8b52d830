"""The user's key remapping: `[keymap]` in memdeck's config.toml, binding id → keys.

    [keymap]
    "app.consolidate" = "C"          # one key
    "review.accept" = "a,enter"      # several, comma-separated

The engine only stores and checks the text; the TUI applies it (`App.set_keymap`)."""

from __future__ import annotations

import re
from pathlib import Path

from ..atomic import write_atomic
from ..errors import ConfigError
from .settings import load_for_edit, read_toml

TABLE = "keymap"
BINDING_ID = re.compile(r"^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)+$")
KEY = re.compile(r"^[A-Za-z0-9_+\-]+$")


def check_keys(keys: str) -> str:
    parts = [k.strip() for k in keys.split(",")]
    if not parts or not all(parts) or not all(KEY.match(k) for k in parts):
        raise ConfigError(f"not a key list: {keys!r} (use Textual key names such as `c`, "
                          "`ctrl+r`, `f5`, separated by commas)")
    return ",".join(parts)


def read_keymap(path: Path) -> tuple[dict[str, str], list[str]]:
    """The remapping and one line for each entry that cannot be used (a file that cannot be
    read at all is one line too: the app still starts, with its default keys)."""
    try:
        table = read_toml(path).get(TABLE, {})
    except ConfigError as e:
        return {}, [f"{e}; keys are not remapped"]
    if not isinstance(table, dict):
        return {}, [f"{path}: [keymap] is not a table; keys are not remapped"]
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, keys in table.items():
        try:
            if not isinstance(keys, str):
                raise ConfigError(f"keys must be a string, not {type(keys).__name__}")
            keymap[binding_id] = check_keys(keys)
        except ConfigError as e:
            problems.append(f"{path}: [keymap] {binding_id}: {e}")
    return keymap, problems


def set_key(path: Path, binding_id: str, keys: str | None) -> None:
    """Remap one binding (keys None: back to its default), keeping the rest of the file."""
    import tomlkit

    if not BINDING_ID.match(binding_id):
        raise ConfigError(f"not a binding id: {binding_id!r}")
    doc = load_for_edit(path)
    table = doc.get(TABLE)
    if table is None:
        if keys is None:
            return
        table = tomlkit.table()
        doc[TABLE] = table
    elif not isinstance(table, dict):
        raise ConfigError(f"{path}: `{TABLE}` is not a table; fix it by hand first")
    if keys is None:
        table.pop(binding_id, None)
    else:
        table[binding_id] = check_keys(keys)
    write_atomic(path, tomlkit.dumps(doc))
