"""Memory on or off for one project (issue 26, item 3), the way Codex allows it: Codex reads
`<project>/.codex/config.toml` as a config layer above the home's `config.toml` when the
project is trusted (`[projects."<path>"] trust_level = "trusted"` in the home's config, for the
folder or its git root), so `[memories] use_memories = false` there keeps the memory summary
out of that project's sessions and `generate_memories = false` makes its new sessions start
`disabled` (proved on the binary: tests/test_codex_oracle_project.py). An untrusted project's
file is ignored by Codex, so memdeck refuses to write it and names the nearest thing it can do
instead: forget the sessions already taught there (docs/codex-format.md "Per-project memory").

Only the `[memories]` keys memdeck is asked to change are written; every other byte of the
file stays (tomlkit, atomic write)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .settings import MEMORIES_KEYS, SettingsFile, read_toml

KEYS = {"use": "use_memories", "generate": "generate_memories"}


@dataclass(frozen=True)
class ProjectMemory:
    folder: Path  # the project: the git root of the folder asked about, else that folder
    config: Path  # <folder>/.codex/config.toml
    trust: str | None  # trust_level in the home's [projects], None when the project has none
    project_keys: dict[str, bool]  # use_memories / generate_memories as the project file sets
    home_keys: dict[str, bool]  # the same keys as the home's config.toml gives them

    @property
    def trusted(self) -> bool:
        return self.trust == "trusted"

    def effective(self, key: str) -> bool:
        """What Codex uses in this project (the project layer wins when Codex reads it)."""
        if self.trusted and key in self.project_keys:
            return self.project_keys[key]
        return self.home_keys[key]

    def to_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "config": str(self.config), "trust": self.trust,
                "project": self.project_keys,
                "effective": {k: self.effective(k) for k in KEYS.values()}}


def project_folder(path: Path) -> Path:
    """The project a folder belongs to, as Codex trusts it: its git root, else itself."""
    path = path.resolve()
    for p in (path, *path.parents):
        if (p / ".git").exists():
            return p
    return path


def _trust(home_config: dict[str, Any], path: Path, folder: Path) -> str | None:
    projects = home_config.get("projects")
    if not isinstance(projects, dict):
        return None
    for p in (path, folder):  # Codex: the folder's own entry, else its git root's
        entry = projects.get(str(p))
        if isinstance(entry, dict) and isinstance(entry.get("trust_level"), str):
            return str(entry["trust_level"])
    return None


def _keys(doc: dict[str, Any]) -> dict[str, bool]:
    table = doc.get("memories")
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if k in KEYS.values() and isinstance(v, bool)}


def read_project(home_config_path: Path, path: Path) -> ProjectMemory:
    folder = project_folder(path)
    config = folder / ".codex" / "config.toml"
    home_doc = read_toml(home_config_path)
    defaults = {k: bool(MEMORIES_KEYS[k].default) for k in KEYS.values()}
    return ProjectMemory(folder, config, _trust(home_doc, path.resolve(), folder),
                         _keys(read_toml(config)), {**defaults, **_keys(home_doc)})


def set_project(home_config_path: Path, path: Path, values: dict[str, bool]) -> ProjectMemory:
    """Write `values` ({"use_memories": False, ...}) into the project's `.codex/config.toml`;
    refused in one line when Codex would not read that file."""
    current = read_project(home_config_path, path)
    if not current.trusted:
        state = ("not trusted" if current.trust is None
                 else f"trust_level = {current.trust!r}")
        raise ConfigError(
            f"{current.folder} is {state} in {home_config_path}, so Codex ignores "
            f"{current.config}; trust it in Codex first (start codex there and trust it), "
            f"or use `memdeck project {current.folder} --forget-sessions` to forget what its "
            "sessions taught")
    if current.config.parent.is_symlink() or current.config.is_symlink():
        raise ConfigError(f"{current.config} is a symbolic link; change it by hand")
    current.config.parent.mkdir(exist_ok=True)
    settings = SettingsFile(current.config)
    for key, value in values.items():
        settings.set("memories", MEMORIES_KEYS[key], value)
    return read_project(home_config_path, path)
