"""config get / set on real config.toml files: types, clamps, comments kept, nothing lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdeck.engine import ConfigError, Engine
from memdeck.engine.codex.settings import MemoriesConfig, read_toml

ORIGINAL = """\
# my Codex config — keep this comment
model = "gpt-5.4"   # trailing comment

[features]
memories = false

[memories]
# idle hours: I like 12
min_rollout_idle_hours = 12

[profiles.work]
model = "o3"
"""


@pytest.fixture
def eng(home) -> Engine:
    home.config(ORIGINAL)
    return Engine.open(home.root)


def test_get_reads_value_and_default(eng: Engine) -> None:
    assert eng.config_get("min_rollout_idle_hours").value == 12
    v = eng.config_get("max_rollout_age_days")
    assert (v.value, v.is_set, v.default) == (10, False, 10)
    assert eng.config_get("memories").value is False


def test_set_keeps_every_comment_and_other_table(eng: Engine, home) -> None:
    eng.config_set("memories", "true")
    eng.config_set("generate_memories", "false")
    text = (home.root / "config.toml").read_text()
    assert "# my Codex config — keep this comment" in text
    assert 'model = "gpt-5.4"   # trailing comment' in text
    assert "# idle hours: I like 12" in text
    assert '[profiles.work]\nmodel = "o3"' in text
    doc = read_toml(home.root / "config.toml")
    assert doc["features"]["memories"] is True
    assert doc["memories"]["generate_memories"] is False
    # only the two lines changed
    before = ORIGINAL.splitlines()
    after = text.splitlines()
    assert len(set(after) - set(before)) == 2


@pytest.mark.parametrize(("key", "value", "needle"), [
    ("min_rollout_idle_hours", "0", "from 1 to 48"),
    ("min_rollout_idle_hours", "49", "from 1 to 48"),
    ("max_rollouts_per_startup", "abc", "integer from 1 to 128"),
    ("use_memories", "maybe", "true or false"),
    ("version", "v3", '"v1", "v2"'),
    ("no_such_key", "1", "unknown key"),
    ("memdeck.nope", "1", "unknown memdeck setting"),
])
def test_bad_values_are_refused_and_file_untouched(eng: Engine, home, key, value, needle):
    before = (home.root / "config.toml").read_bytes()
    with pytest.raises(ConfigError) as e:
        eng.config_set(key, value)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)
    assert (home.root / "config.toml").read_bytes() == before


def test_alias_is_updated_in_place(home) -> None:
    home.config("[memories]\nno_memories_if_mcp_or_web_search = false\n")
    eng = Engine.open(home.root)
    eng.config_set("disable_on_external_context", "true")
    doc = read_toml(home.root / "config.toml")
    assert doc["memories"] == {"no_memories_if_mcp_or_web_search": True}


def test_symlinked_config_is_written_through_the_link(home, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "codex.toml"
    real.parent.mkdir()
    real.write_text("[memories]\nuse_memories = true\n")
    (home.root / "config.toml").unlink()
    (home.root / "config.toml").symlink_to(real)
    Engine.open(home.root).config_set("use_memories", "false")
    assert (home.root / "config.toml").is_symlink()
    assert "use_memories = false" in real.read_text()


def test_broken_toml_is_refused_not_overwritten(home) -> None:
    broken = home.config("[memories\nuse_memories = true\n").read_text()
    eng = Engine.open(home.root)
    with pytest.raises(ConfigError, match="not valid TOML"):
        eng.config_set("use_memories", "false")
    assert (home.root / "config.toml").read_text() == broken


def test_no_temp_files_left_behind(eng: Engine, home) -> None:
    eng.config_set("max_unused_days", "45")
    assert sorted(os.listdir(home.root)) == ["config.toml", "sessions"]


def test_memdeck_settings_live_in_their_own_file(eng: Engine, home) -> None:
    eng.config_set("memdeck.backend", "offline")
    assert eng.config_get("memdeck.backend").value == "offline"
    assert "backend" not in (home.root / "config.toml").read_text()
    assert 'backend = "offline"' in (home.root / "memdeck" / "config.toml").read_text()


def test_stored_values_are_clamped_like_codex() -> None:
    cfg = MemoriesConfig.from_document(
        {"memories": {"min_rollout_idle_hours": 500, "max_rollout_age_days": -3,
                      "use_memories": "yes"}})
    assert cfg.min_rollout_idle_hours == 48
    assert cfg.max_rollout_age_days == 0
    assert cfg.use_memories is True  # wrong type: Codex's default
