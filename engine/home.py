"""CodexHome: every path memdeck reads or writes, decided in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .errors import HomeError
from .settings import MemoriesConfig, read_toml

SESSIONS_SUBDIR = "sessions"
ARCHIVED_SESSIONS_SUBDIR = "archived_sessions"


def default_home_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--home PATH` > `$CODEX_HOME` > `~/.codex`."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("CODEX_HOME")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".codex"


@dataclass(frozen=True)
class CodexHome:
    root: Path

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> CodexHome:
        root = default_home_path(path)
        if not root.exists():
            raise HomeError(f"no Codex home at {root} (set --home or $CODEX_HOME)")
        if not root.is_dir():
            raise HomeError(f"{root} is not a folder")
        return cls(root.absolute())

    # -- Codex's files ------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.root / "config.toml"

    @cached_property
    def config(self) -> MemoriesConfig:
        return MemoriesConfig.from_document(read_toml(self.config_path))

    @property
    def sessions_dir(self) -> Path:
        return self.root / SESSIONS_SUBDIR

    @property
    def archived_dir(self) -> Path:
        return self.root / ARCHIVED_SESSIONS_SUBDIR

    @property
    def sqlite_home(self) -> Path:
        """Where Codex keeps its databases: `sqlite_home` in config, `$CODEX_SQLITE_HOME`, home."""
        env = os.environ.get("CODEX_SQLITE_HOME")
        if env:
            return Path(env).expanduser()
        if self.config.sqlite_home:
            return Path(self.config.sqlite_home).expanduser()
        return self.root

    @property
    def memory_version(self) -> str:
        return self.config.version

    @property
    def memory_root(self) -> Path:
        return self.root / ("memories_v2" if self.memory_version == "v2" else "memories")

    @property
    def memory_roots_for_reset(self) -> list[Path]:
        """Folders Codex's reset empties (codex-format §6.3)."""
        return [self.root / name for name in ("memories", "memories_extensions", "memories_v2")]

    @property
    def codex_pipeline_db(self) -> Path:
        name = "memories_v2_1.sqlite" if self.memory_version == "v2" else "memories_1.sqlite"
        return self.sqlite_home / name

    @property
    def state_db(self) -> Path:
        return self.sqlite_home / "state_5.sqlite"

    # -- memdeck's files ----------------------------------------------------------------
    @property
    def memdeck_dir(self) -> Path:
        return self.root / "memdeck"

    @property
    def memdeck_db(self) -> Path:
        return self.memdeck_dir / "memdeck.sqlite"

    @property
    def own_pipeline_db(self) -> Path:
        name = "memories_v2.sqlite" if self.memory_version == "v2" else "memories.sqlite"
        return self.memdeck_dir / name

    @property
    def pipeline_db(self) -> Path:
        """Codex's memories DB when it exists (DML only), otherwise memdeck's own copy."""
        return self.codex_pipeline_db if self.codex_pipeline_db.exists() else self.own_pipeline_db

    @property
    def memdeck_config_path(self) -> Path:
        return self.memdeck_dir / "config.toml"

    @property
    def history_git(self) -> Path:
        return self.memdeck_dir / "history.git"

    @property
    def proposals_dir(self) -> Path:
        return self.memdeck_dir / "proposals"

    @property
    def backups_dir(self) -> Path:
        return self.memdeck_dir / "backups"

    def ensure_memdeck_dir(self) -> Path:
        d = self.memdeck_dir
        if d.is_symlink():
            raise HomeError(f"{d} is a symlink; memdeck keeps its data only in a real folder")
        try:
            d.mkdir(exist_ok=True)
        except OSError as e:
            raise HomeError(f"cannot create {d}: {e.strerror}") from None
        return d

    def rollout_dirs(self) -> list[tuple[Path, bool]]:
        """(folder, archived) pairs to index."""
        return [(self.sessions_dir, False), (self.archived_dir, True)]
