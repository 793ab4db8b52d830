"""The conflicts of a pull's proposal (sync/merge.py makes them, sync/push_pull.py resolves
them): the regions both machines changed, kept beside the proposal in `conflicts.json`. The
accept reads them to refuse a proposal with a conflict left (memory_folder/accept.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..codex.home import CodexHome
from ..errors import HomeError

CONFLICTS = "conflicts.json"


@dataclass
class Conflict:
    path: str
    at: int  # 0-based line where this machine's lines start in the merged file
    ours: list[str]
    theirs: list[str]
    base: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "at": self.at, "ours": self.ours, "theirs": self.theirs,
                "base": self.base}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Conflict:
        return cls(str(raw["path"]), int(raw["at"]), [str(x) for x in raw["ours"]],
                   [str(x) for x in raw["theirs"]], [str(x) for x in raw["base"]])


def conflicts(home: CodexHome, pid: str) -> list[Conflict]:
    path = home.proposals_dir / pid / CONFLICTS
    if not path.is_file():
        return []
    try:
        return [Conflict.from_json(x) for x in json.loads(path.read_text(encoding="utf-8"))]
    except (ValueError, KeyError, TypeError, OSError) as e:
        raise HomeError(f"{path} is damaged ({type(e).__name__}); reject proposal {pid} and "
                        "pull again") from None


def save_conflicts(home: CodexHome, pid: str, found: list[Conflict]) -> None:
    (home.proposals_dir / pid / CONFLICTS).write_text(
        json.dumps([c.to_json() for c in found], indent=1), encoding="utf-8")


def unresolved(home: CodexHome, pid: str) -> int:
    return len(conflicts(home, pid))
