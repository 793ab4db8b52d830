"""CodexHome: every path memdeck reads or writes, decided in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..errors import ConfigError, HomeError
from .settings import MemoriesConfig, read_toml

SESSIONS_SUBDIR = "sessions"
ARCHIVED_SESSIONS_SUBDIR = "archived_sessions"
KNOWN_VERSIONS = ("v1", "v2")
# the newest Codex release memdeck is proved against (docs/codex-compat.md)
TESTED_CODEX = "0.171.0"
ROOT_NAMES = {"v1": "memories", "v2": "memories_v2"}
DB_NAMES = {"v1": "memories_1.sqlite", "v2": "memories_v2_1.sqlite"}


@dataclass(frozen=True)
class MemoryVersion:
    """Which memory pipeline Codex runs on this home, and why
    (docs/codex-format.md "Memory versions").

    Codex 0.169: `[memories] version` when set; otherwise v1 when `$CODEX_HOME/memories`
    exists at all (an empty folder or even a plain file), else v2. `known` is False for a
    configured version memdeck does not know (a newer Codex): memdeck then reads what it
    can and writes no memory."""

    name: str
    reason: str
    known: bool = True

    def describe(self) -> str:
        return f"{self.name}: {self.reason}"


def version_key(text: str) -> tuple[int, ...]:
    """`0.169.0` → (0, 169, 0); pre-release and build suffixes are ignored."""
    out = []
    for part in text.split("-")[0].split("+")[0].split("."):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)


def newer_than_tested(versions: list[str]) -> str | None:
    """The newest of `versions` when it is newer than the Codex memdeck is tested against."""
    known = [v for v in versions if version_key(v)]
    newest = max(known, key=version_key, default=None)
    return newest if newest and version_key(newest) > version_key(TESTED_CODEX) else None


def resolve_memory_version(root: Path, configured: str | None) -> MemoryVersion:
    if configured is not None:
        if configured in KNOWN_VERSIONS:
            return MemoryVersion(configured, 'set by [memories] version in config.toml')
        return MemoryVersion(configured, f'[memories] version = "{configured}" is not a '
                             'version memdeck knows (a newer Codex?); memdeck writes no memory',
                             known=False)
    if os.path.lexists(root / ROOT_NAMES["v1"]):
        return MemoryVersion("v1", "memories/ exists, no version set")
    return MemoryVersion("v2", "no memories/ folder, no version set")


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
        """config.toml's memory settings. A file that cannot be read gives Codex's defaults
        and `config_problem` says why, in one line naming the file and line: reads go on,
        every change refuses (`require_writable_version`) until it is fixed."""
        problem: str | None = None
        self.__dict__["_config_seen"] = self.config_signature()
        try:
            cfg = MemoriesConfig.from_document(read_toml(self.config_path))
        except ConfigError as e:
            cfg = MemoriesConfig.from_document({})
            problem = str(e)
        self.__dict__["_config_problem"] = problem  # frozen: kept beside the cached value
        return cfg

    def config_signature(self) -> tuple[int, int] | None:
        """config.toml's (mtime_ns, size), None when it is missing."""
        try:
            st = self.config_path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def config_is_stale(self) -> bool:
        """config.toml changed since `config` was read (or it was never read)."""
        return "config" not in self.__dict__ or \
            self.__dict__.get("_config_seen") != self.config_signature()

    @property
    def config_problem(self) -> str | None:
        """Why config.toml could not be read (None when it could); read with `config`."""
        self.config  # noqa: B018 - reading it decides the problem
        problem: str | None = self.__dict__.get("_config_problem")
        return problem

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
    def version_info(self) -> MemoryVersion:
        """Resolved on every call: `memories/` may appear while memdeck runs."""
        return resolve_memory_version(self.root, self.config.version_raw)

    @property
    def memory_version(self) -> str:
        """"v1" or "v2". An unknown configured version reads as the version the folders
        suggest; writers check `version_info.known` first (`require_writable_version`)."""
        info = self.version_info
        if info.known:
            return info.name
        return resolve_memory_version(self.root, None).name

    def require_writable_version(self) -> None:
        if self.config_problem:
            raise HomeError(f"{self.config_problem}; memdeck changes nothing until it is "
                            "fixed (Codex does not start with it either)")
        info = self.version_info
        if not info.known:
            raise HomeError(f"{info.reason}; change it with `memdeck config set version v2`")

    @property
    def memory_root(self) -> Path:
        return self.root / ROOT_NAMES[self.memory_version]

    @property
    def memory_roots_for_reset(self) -> list[Path]:
        """Folders Codex's reset empties (docs/codex-format.md "Reset")."""
        return [self.root / name for name in ("memories", "memories_extensions", "memories_v2")]

    @property
    def codex_pipeline_db(self) -> Path:
        return self.sqlite_home / DB_NAMES[self.memory_version]

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
        """One history per root: switching version never mixes two roots' states."""
        return self.memdeck_dir / ("history.git" if self.memory_version == "v1"
                                   else f"history_{self.memory_version}.git")

    @property
    def proposals_dir(self) -> Path:
        return self.memdeck_dir / "proposals"

    @property
    def backups_dir(self) -> Path:
        return self.memdeck_dir / "backups"

    def read_only(self) -> bool:
        """memdeck cannot write its own folder here (a read-only mount, another user's home)."""
        target = self.memdeck_dir if self.memdeck_dir.is_dir() else self.root
        return not os.access(target, os.W_OK)

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
