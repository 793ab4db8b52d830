"""Forget a session as one journaled change (switch.py, with no folder to switch): the
append that disables its memory and the deletion of its rows (phase1/forget.py) are
decided together, so a forget killed between them is finished by the next command."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MemdeckError
from ..index.sessions import Session
from ..phase1.forget import ForgetResult, check_forgettable, forget_now
from .journal import JournalPaths, RowStep, row_step
from .switch import Switch
from .writer import Change, Lease, MemoryFolderWriter


@row_step
@dataclass
class ForgetRows(RowStep):
    """The line that disables the session's memory, appended to its rollout, and its rows
    deleted (phase1/forget.py `forget_now`)."""

    op = "forget"
    thread: str
    path: Path  # the rollout, inside the home's sessions
    now: int
    already: bool  # the session was disabled already: no line to append
    stamp: str  # the appended line's timestamp, as Codex writes it
    result: ForgetResult | None = field(default=None, compare=False)  # once written

    def to_json(self) -> dict[str, Any]:
        return {"thread": self.thread, "path": str(self.path), "now": self.now,
                "already": self.already, "stamp": self.stamp}

    @classmethod
    def from_json(cls, raw: dict[str, Any], paths: JournalPaths) -> ForgetRows:
        return cls(str(raw["thread"]), paths.rollout(str(raw["path"])), int(raw["now"]),
                   bool(raw["already"]), str(raw["stamp"]))

    def write(self, change: Change, lease: Lease | None) -> None:
        self.result = forget_now(change.writer.home, self.thread, self.path,
                                 already=self.already, stamp=self.stamp, now=self.now)


def forget(writer: MemoryFolderWriter, session: Session) -> ForgetResult:
    if not session.id:
        raise MemdeckError(f"{session.rollout_path} has no thread id; nothing to forget")
    if session.memory_mode != "disabled":
        check_forgettable(Path(session.rollout_path))  # refused before anything is journaled
    now = writer.now()
    rows = ForgetRows(session.id, Path(session.rollout_path), int(now),
                      session.memory_mode == "disabled",
                      time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now)))
    with writer.change() as change:
        Switch(change).commit(rows, origin="user", message=f"forget session {session.id}",
                              what=f"forget session {session.id}")
    assert rows.result is not None  # written by the switch's rows step
    return rows.result
