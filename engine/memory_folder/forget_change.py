"""Forget a session as one journaled change (switch.py, with no folder to switch): the
append that disables its memory and the deletion of its rows (phase1/forget.py) are
decided together, so a forget killed between them is finished by the next command."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..errors import MemdeckError
from ..index.sessions import Session
from ..phase1.forget import ForgetResult, check_forgettable, forget_now
from .switch import Switch
from .writer import Change, Lease, MemoryFolderWriter


def forget(writer: MemoryFolderWriter, session: Session) -> ForgetResult:
    if not session.id:
        raise MemdeckError(f"{session.rollout_path} has no thread id; nothing to forget")
    if session.memory_mode != "disabled":
        check_forgettable(Path(session.rollout_path))  # refused before anything is journaled
    now = writer.now()
    plan: dict[str, Any] = {
        "thread": session.id, "path": session.rollout_path, "now": int(now),
        "already": session.memory_mode == "disabled",
        "stamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now))}
    with writer.change() as change:
        Switch(change, "forget").commit(origin="user", message=f"forget session {session.id}",
                                        finish=plan, what=f"forget session {session.id}")
    r = plan["result"]
    return ForgetResult(session.id, r["path"], r["had"], r["enqueued"], plan["already"],
                        r["line_no"])


def finish_rows(change: Change, plan: dict[str, Any], lease: Lease | None) -> None:
    plan["result"] = forget_now(change.writer.home, plan)
