"""What the user is shown about a Codex home: where it is, which memory Codex uses in it now
(and why), and which database holds that memory's pipeline.

Read fresh on every call (config.toml is read again: a settings change or a new `memories/`
folder switches the version while memdeck runs). A config.toml that cannot be read does not
hide where the home is: the version fields are None and `problem` says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import MemdeckError
from .home import CodexHome, MemoryVersion


@dataclass(frozen=True)
class HomeInfo:
    root: Path
    version: MemoryVersion | None  # the version Codex runs, as configured or as found
    memory_version: str | None  # "v1" or "v2": the memory memdeck reads and shows
    pipeline_db: Path | None  # the memory pipeline's database memdeck reads
    pipeline_db_is_codex: bool = False  # Codex's own (else memdeck's until Codex makes one)
    problem: str | None = None  # why the version fields are None


def home_info(home: CodexHome) -> HomeInfo:
    home.__dict__.pop("config", None)  # CodexHome caches config.toml: read it again
    try:
        version = home.version_info
        db = home.pipeline_db
        return HomeInfo(home.root, version, home.memory_version, db,
                        db == home.codex_pipeline_db)
    except MemdeckError as e:
        return HomeInfo(home.root, None, None, None, problem=str(e))
