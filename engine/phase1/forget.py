"""Forget a session with Codex's semantics (docs/codex-format.md "Forgetting a thread").

1. Its memory mode becomes `disabled` the way Codex changes it: a copy of the first
   `session_meta` with `memory_mode` set and `git` removed is appended to the rollout (a
   compressed rollout is first re-materialised as plain `.jsonl`, as Codex does).
2. Its stage-1 row and job are deleted; phase 2 is enqueued when the row had been used, so
   the next consolidation removes what only this session supported.

Both run as one journaled change (memory_folder/forget_change.py, a switch with no folder to
switch): a forget killed after the append is finished by the next command, never left
"disabled" with its raw memory kept.

The append is one `write` on an O_APPEND descriptor. It is refused while the rollout's last
line is unfinished (Codex is writing it) rather than risk joining two lines. The rollout keeps
its modification time: a forget is not activity in the session, and Codex (its resume list,
phase 1's idle rule) and memdeck's listing order sessions by that time.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..atomic import write_atomic
from ..codex import jsonfast
from ..codex.home import CodexHome
from ..codex.linestream import NotRegularFile, is_compressed, open_regular_file
from ..codex.pipeline_db import PipelineDB
from ..codex.rollout import SessionMeta, read_rollout
from ..crash_points import crash_point
from ..errors import MemdeckError


@dataclass(frozen=True)
class ForgetResult:
    thread_id: str
    rollout_path: str
    had_memory: bool
    phase2_enqueued: bool
    already_disabled: bool
    line_no: int = 0  # the session_meta line appended (1-based); 0 when none was


def _materialise(path: Path) -> Path:
    """`x.jsonl.zst` -> `x.jsonl` (atomically), the compressed file removed afterwards."""
    import zstandard

    plain = path.with_name(path.name[: -len(".zst")])
    with open_regular_file(path) as src:
        data = zstandard.ZstdDecompressor().stream_reader(src).read()
    st = path.stat()  # the plain file keeps the compressed one's times and permissions
    write_atomic(plain, data, mode=st.st_mode & 0o7777,
                 times_ns=(st.st_atime_ns, st.st_mtime_ns))
    path.unlink()
    return plain


def disabled_meta_line(first: SessionMeta, timestamp: str) -> bytes:
    payload = {k: v for k, v in first.raw.items() if k != "git"}
    payload["memory_mode"] = "disabled"
    line = {"timestamp": timestamp, "type": "session_meta", "payload": payload}
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _count_lines(path: Path) -> int:
    n = 0
    with open_regular_file(path) as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
    return n


def check_forgettable(path: Path) -> SessionMeta:
    """Refuse, before anything changes, a rollout whose mode cannot be changed now: not a
    regular file, no session_meta, a last line still being written. Returns its meta."""
    try:
        open_regular_file(path).close()
    except NotRegularFile as e:
        raise MemdeckError(f"{path.name} is {e.kind}, not a regular file: memdeck never opens "
                           "one; nothing was changed") from None
    except OSError as e:
        raise MemdeckError(f"cannot read {path.name}: {e.strerror or e}") from None
    meta = read_rollout(path).meta
    if meta is None:
        raise MemdeckError(f"{path.name} has no session_meta line; cannot change its mode")
    if not is_compressed(path):
        with open_regular_file(path) as f:
            f.seek(max(0, path.stat().st_size - 1))
            if f.read(1) not in (b"\n", b""):
                raise MemdeckError(f"{path.name} is being written right now (its last line "
                                   "is unfinished); try again in a moment")
    return meta


def append_disabled_meta(path: Path, timestamp: str) -> tuple[Path, int]:
    """Append the line; returns the (plain) rollout and the appended line's number."""
    if is_compressed(path):
        path = _materialise(path)
    meta = check_forgettable(path)
    line = disabled_meta_line(meta, timestamp)
    assert jsonfast.line_type(line.rstrip(b"\n")) == "session_meta"
    before = path.stat()
    line_no = _count_lines(path) + 1
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    except OSError:  # not ours to re-date: the forget stands, the session only moves up
        pass
    return path, line_no


def forget_now(home: CodexHome, thread: str, rollout: Path, *, already: bool, stamp: str,
               now: int) -> ForgetResult:
    """The forget itself, as `memory_folder/forget_change.py` journals it; runs again
    safely: a rollout already disabled gets no second line, rows already deleted stay
    deleted. Returns what it did."""
    path, line_no = rollout, 0
    if not path.exists() and is_compressed(path):
        path = path.with_name(path.name[: -len(".zst")])  # re-materialised before a crash
    # a rollout gone since (deleted by the user) has no mode left to change: the rows go
    if (not already and path.exists()
            and read_rollout(path).memory_mode != "disabled"):
        path, line_no = append_disabled_meta(path, stamp)
    crash_point("forget.appended")
    db = PipelineDB.open(home)
    try:
        row = db.conn.execute("SELECT selected_for_phase2 FROM stage1_outputs "
                              "WHERE thread_id = ?", (thread,)).fetchone()
        had = db.forget_thread(thread, now)
    finally:
        db.close()
    return ForgetResult(thread, str(path), had, bool(row and row[0]), already, line_no)
