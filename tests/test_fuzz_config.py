"""Fuzzing config editing (issue 12 "What must hold" and item 12).

Whatever config.toml holds — TOML-ish text built from the shapes real files have (tables,
dotted keys, arrays of tables, inline tables, aliases, comments, CRLF) or bytes that are not
UTF-8 — setting or unsetting a memory setting either refuses with one clear `ConfigError`
and leaves the file byte for byte as it was, or writes a file that still parses, holds the
new value, and keeps every other key unchanged.
"""

from __future__ import annotations

import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memdeck.engine.codex.settings import (
    FEATURE_KEY,
    MEMDECK_KEYS,
    MEMORIES_KEYS,
    KeySpec,
    SettingsFile,
)
from memdeck.engine.errors import ConfigError


def fuzz(n: int) -> settings:
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))

LINES = [
    "[memories]", "[features]", "[memories.sub]", "[[memories]]", "[other]", "[ memories ]",
    '["memories"]', "memories = true", "memory_tool = false", "max_unused_days = 7",
    "max_unused_days = 700", "no_memories_if_mcp_or_web_search = true",
    "disable_on_external_context = false", 'version = "v2"', "memories.max_unused_days = 3",
    "memories = 1", "features.memories = true", 'extract_model = "gpt"', "# a comment",
    "x = 1 # trailing", 'a = { b = 1, c = [1, 2] }', 'memories = { max_unused_days = 2 }',
    "arr = [\n  1,\n  2,\n]", 'ml = """\nmulti\n"""', "", "   ", "\t", "key = 'lit'",
    "dup = 1", "dup = 2", "= broken", "[", 'k = "\\u00e9"', "é = 1", '"quoted key" = 1',
    "backend = \"offline\"", "request_timeout = 30",
]
ending = st.sampled_from(["\n", "\r\n"])
tomlish = st.builds(lambda ls, e, bom: ("\ufeff" if bom else "") + e.join(ls) + e,
                    st.lists(st.sampled_from(LINES) | st.text(max_size=10), max_size=14),
                    ending, st.booleans())

TARGETS: list[tuple[str | None, KeySpec]] = [
    ("memories", MEMORIES_KEYS["max_unused_days"]),
    ("memories", MEMORIES_KEYS["disable_on_external_context"]),
    ("memories", MEMORIES_KEYS["version"]),
    ("memories", MEMORIES_KEYS["extract_model"]),
    ("features", FEATURE_KEY),
    (None, MEMDECK_KEYS["backend"]),
]
VALUES = {"int": st.integers(0, 365), "bool": st.booleans(), "str": st.text(max_size=10),
          "enum": st.sampled_from(["v1", "v2", "offline", "auto"])}


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


def _without(doc: dict[str, Any], table: str | None, spec: KeySpec) -> dict[str, Any]:
    """`doc` with the target key (and its aliases) taken out of its table."""
    out = dict(doc)
    names = (spec.name, *spec.aliases)
    if table is None:
        return {k: v for k, v in out.items() if k not in names}
    if isinstance(out.get(table), dict):
        out[table] = {k: v for k, v in out[table].items() if k not in names}
    return out


def _check(path: Path, before: bytes, table: str | None, spec: KeySpec,
           value: Any | None) -> None:
    f = SettingsFile(path)
    try:
        if value is None:
            f.unset(table, spec)
        else:
            f.set(table, spec, value)
    except ConfigError as e:
        assert str(e) and "\n" not in str(e)  # one line a person can act on
        assert path.read_bytes() == before  # a refused edit changes nothing
        return
    after = tomllib.loads(path.read_bytes().decode("utf-8"))  # still parses
    old = tomllib.loads(before.decode("utf-8")) if before else {}
    container = after if table is None else after.get(table, {})
    container = container if isinstance(container, dict) else {}  # `memories = true`
    if value is not None:
        stored = [container[k] for k in (spec.name, *spec.aliases) if k in container]
        assert stored == [value]
    else:
        assert not any(k in container for k in (spec.name, *spec.aliases))
    a, o = _without(after, table, spec), _without(old, table, spec)
    if table is not None and not a.get(table) and not o.get(table):
        a.pop(table, None)  # a new, empty table is no change to another key
        o.pop(table, None)
    assert a == o  # every other key unchanged


@fuzz(1500)
@example(text="[memories]\nmemories.max_unused_days = 3\n", target=0, raw_value=5)
@example(text="memories.max_unused_days = 3\n", target=0, raw_value=5)
@example(text="[[memories]]\n", target=0, raw_value=5)
@given(text=tomlish, target=st.integers(0, len(TARGETS) - 1), raw_value=st.data())
def test_set_on_any_toml_ish_text(workdir, text: str, target: int, raw_value) -> None:
    table, spec = TARGETS[target]
    value = raw_value.draw(VALUES[spec.kind]) if not isinstance(raw_value, int) else raw_value
    path = workdir / "config.toml"
    path.write_bytes(text.encode("utf-8"))
    _check(path, text.encode("utf-8"), table, spec, value)


@fuzz(800)
@given(text=tomlish, target=st.integers(0, len(TARGETS) - 1))
def test_unset_on_any_toml_ish_text(workdir, text: str, target: int) -> None:
    table, spec = TARGETS[target]
    path = workdir / "config.toml"
    path.write_bytes(text.encode("utf-8"))
    _check(path, text.encode("utf-8"), table, spec, None)


@fuzz(300)
@example(data=b"[memories]\nmax_unused_days = 3 # caf\xe9\n", unset=False)
@given(data=st.binary(max_size=200), unset=st.booleans())
def test_bytes_that_are_not_utf8_are_refused_with_what_to_do(workdir, data: bytes,
                                                            unset: bool) -> None:
    path = workdir / "config.toml"
    path.write_bytes(data)
    spec = MEMORIES_KEYS["max_unused_days"]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(ConfigError, match="not valid UTF-8 .*save it as UTF-8"):
            (SettingsFile(path).unset if unset else
             lambda t, s: SettingsFile(path).set(t, s, 5))("memories", spec)
        assert path.read_bytes() == data
        return
    _check(path, data, "memories", spec, None if unset else 5)


def test_config_set_on_a_non_utf8_file_says_what_to_do(tmp_path: Path, capsys) -> None:
    """`memdeck config set` said "internal error: UnicodeDecodeError" (issue 12 item 12)."""
    from memdeck.tui.cli import main

    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    (home / "config.toml").write_bytes(b"[memories]\n# caf\xe9\nmax_unused_days = 3\n")
    assert main(["config", "set", "max_unused_days", "7", "--home", str(home)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert "internal error" not in line
    assert line.startswith(f"memdeck: {home / 'config.toml'} is not valid UTF-8 (line 2, byte 17)")
    assert "save it as UTF-8" in line
    assert (home / "config.toml").read_bytes() == b"[memories]\n# caf\xe9\nmax_unused_days = 3\n"
