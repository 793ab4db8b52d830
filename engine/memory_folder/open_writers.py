"""Processes that hold a file of a memory folder open for writing (`tee -a MEMORY.md`, a
logger, an editor that keeps its file open).

A change switches the whole folder (switch.py): a writer that opened `MEMORY.md` before the
switch keeps writing into the file it opened, which is then in the folder switched away, and
what it wrote after memdeck's last look would be lost with that folder. So a change waits
(bounded) for such writers to close their files: before the switch, and once more after it
for one that opened its file in between (its lines then show as an outside change and the
switch is undone, as for any other writer).

Linux only (`/proc/<pid>/fd` and `fdinfo`); elsewhere, and for processes of other users that
cannot be looked into, nothing is found and nothing waits.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

WAIT_ENV = "MEMDECK_WRITER_WAIT"  # seconds a change waits for writers (default 10)
DEFAULT_WAIT = 10.0
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR


def _proc() -> Path | None:
    p = Path("/proc")
    return p if (p / "self" / "fd").is_dir() else None


def open_writers(folders: Iterable[Path]) -> list[tuple[int, str, str]]:
    """(pid, command, path) for every file under `folders` another process has open for
    writing."""
    proc = _proc()
    prefixes = [os.path.realpath(f) + os.sep for f in folders]
    if proc is None or not prefixes:
        return []
    me = os.getpid()
    found: list[tuple[int, str, str]] = []
    for entry in os.scandir(proc):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        fd_dir = os.path.join(entry.path, "fd")
        try:
            fds = os.listdir(fd_dir)
        except OSError:  # gone, or another user's
            continue
        for fd in fds:
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if not any(target.startswith(p) for p in prefixes):
                continue
            if _writing(entry.path, fd):
                found.append((int(entry.name), _command(entry.path), target))
    return found


def _writing(pid_dir: str, fd: str) -> bool:
    try:
        with open(os.path.join(pid_dir, "fdinfo", fd), encoding="ascii") as f:
            for line in f:
                if line.startswith("flags:"):
                    return bool(int(line.split()[1], 8) & _WRITE_FLAGS)
    except (OSError, ValueError, IndexError):
        pass
    return False


def _command(pid_dir: str) -> str:
    try:
        with open(os.path.join(pid_dir, "comm"), encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "?"
    except OSError:
        return "?"


def _wait_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get(WAIT_ENV, DEFAULT_WAIT)))
    except ValueError:
        return DEFAULT_WAIT


def wait_for_writers(folders: list[Path], seconds: float | None = None) -> str | None:
    """Wait until no other process holds a file under `folders` open for writing, at most
    `seconds` (`MEMDECK_WRITER_WAIT`, default 10). Returns None when there is none (any
    more), else one line naming who still holds what."""
    limit = _wait_seconds() if seconds is None else seconds
    deadline = time.monotonic() + limit
    pause = 0.02
    while True:
        writers = open_writers(folders)
        if not writers:
            return None
        if time.monotonic() >= deadline:
            pid, command, path = writers[0]
            more = f" (and {len(writers) - 1} more)" if len(writers) > 1 else ""
            return (f"{Path(path).name} is held open for writing by pid {pid} ({command})"
                    f"{more} for more than {limit:g} s")
        time.sleep(pause)
        pause = min(0.2, pause * 2)
