"""What a killed memdeck leaves behind, dealt with by the next command that opens the home.

Run under the home's lock (home_lock.py), taken across processes: whoever holds it knows no
live memdeck is inside a change, so every journal, staging folder, temp file and git lock
found here belongs to a dead one. In order:

1. the change a crash interrupted: finished from its journal, or its staging forgotten
   (recovery.py), and an accept of a memdeck before the switch (accept.py);
2. git's own locks in the history repository (`index.lock`, `HEAD.lock`, …): removed when no
   running process has them open; one held by a live process (a `git` a person runs there)
   is named and left alone;
3. temp files of a backup cut short (`memdeck/backups/.*.tmp`).

Returns one line saying what was done, or None when there was nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..clock import kernel_now
from ..errors import HomeError
from .leftover_paths import change_left
from .writer import MemoryFolderWriter

GIT_LOCKS = ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock")
YOUNG_LOCK_SECONDS = 1.0  # a lock this new may belong to a git that is just starting


def recover(writer: MemoryFolderWriter) -> str | None:
    done: list[str] = []
    with writer.change(recover=False) as change:
        for gitdir in _history_dirs(writer):
            done += _clear_git_locks(gitdir)
        if change_left(writer.home):  # what finishes a change is imported only when needed
            from .recovery import finish_interrupted

            done += finish_interrupted(change)
        done += _clear_backup_temps(writer.home.backups_dir)
    return "; ".join(done) or None


def _history_dirs(writer: MemoryFolderWriter) -> list[Path]:
    d = writer.home.memdeck_dir
    return [p for p in d.glob("history*.git") if p.is_dir() and not p.is_symlink()]


def _clear_git_locks(gitdir: Path) -> list[str]:
    done = []
    locks = [gitdir / n for n in GIT_LOCKS] + list((gitdir / "refs").rglob("*.lock"))
    for lock in locks:
        if not lock.is_file():
            continue
        holder = _holder(lock)
        if holder is None and _age(lock) < YOUNG_LOCK_SECONDS:
            time.sleep(YOUNG_LOCK_SECONDS)
            holder = _holder(lock)
        if holder is not None:
            if not lock.exists():
                continue  # its git finished meanwhile
            raise HomeError(f"{lock} is held by a running process ({holder}); let it "
                            "finish, or stop it, and try again")
        lock.unlink(missing_ok=True)
        done.append(f"removed a stale git lock {lock.name} left by a killed memdeck")
    return done


def _age(p: Path) -> float:
    try:
        return kernel_now() - p.stat().st_mtime
    except OSError:
        return YOUNG_LOCK_SECONDS


def _holder(lock: Path) -> str | None:
    """The running process that has `lock` open ("pid 123: git commit"), if any. Git keeps
    its lock file open while it holds it; a process of another user that cannot be looked
    at counts as none (it could not write into this home's history anyway)."""
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - not Linux: trust the home lock alone
        return None
    target = str(lock)
    for pid_dir in proc.iterdir():
        if not pid_dir.name.isdigit() or int(pid_dir.name) == os.getpid():
            continue
        try:
            for fd in (pid_dir / "fd").iterdir():
                if os.readlink(fd) == target:
                    return f"pid {pid_dir.name}: {_cmdline(pid_dir)}"
        except OSError:
            continue
    return None


def _cmdline(pid_dir: Path) -> str:
    try:
        raw = (pid_dir / "cmdline").read_bytes()
    except OSError:
        return "?"
    return " ".join(raw.decode("utf-8", errors="replace").split("\0")).strip()[:80] or "?"


def _clear_backup_temps(backups: Path) -> list[str]:
    temps = [p for p in backups.glob(".*.tmp") if p.is_file()] if backups.is_dir() else []
    for p in temps:
        p.unlink(missing_ok=True)
    return [f"removed {len(temps)} unfinished backup file(s)"] if temps else []
