"""Codex's thread catalogue, `state_5.sqlite` `threads`
(docs/codex-format.md "The threads table"). Read only.

memdeck takes two things from it: a `polluted` memory mode (Codex records it only here), and
Codex's own `updated_at` and `archived` flags as a cross-check. A missing, locked or odd
database simply contributes nothing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..store import connect, describe_sqlite_error


@dataclass(frozen=True)
class ThreadRow:
    id: str
    rollout_path: str
    updated_at: int
    memory_mode: str
    archived: bool
    source: str


@dataclass(frozen=True)
class StateSnapshot:
    threads: dict[str, ThreadRow]
    warning: str | None = None


def read_threads(path: Path) -> StateSnapshot:
    if not path.exists():
        return StateSnapshot({})
    try:
        conn = connect(path, readonly=True)
    except Exception as e:  # noqa: BLE001
        return StateSnapshot({}, f"{path.name}: {e}")
    try:
        rows = conn.execute(
            "SELECT id, rollout_path, updated_at, memory_mode, archived, source FROM threads"
        ).fetchall()
        return StateSnapshot({
            str(r[0]).lower(): ThreadRow(str(r[0]).lower(), r[1] or "", int(r[2] or 0),
                                         r[3] or "enabled", bool(r[4]), r[5] or "")
            for r in rows
        })
    except sqlite3.Error as e:
        return StateSnapshot({}, describe_sqlite_error(path, e) + "; thread catalogue ignored")
    finally:
        conn.close()
