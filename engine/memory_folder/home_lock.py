"""The home's writer lock: one change of the memory folder at a time, across threads and
processes (docs/architecture.md "Changing the memory folder").

Inside a process it is a re-entrant lock (the app runs engine calls on several worker
threads). Across processes it is `flock` on `memdeck/folder.lock`, taken when the process's
outermost holder enters and dropped when it leaves. The kernel drops an flock when its
process dies, however it dies, so whoever holds it knows that every journal, staging folder,
temp file and git lock a memdeck left behind belongs to a dead process and may be recovered:
that is what makes recovery safe to run from every command.

A home whose `memdeck/` does not exist has nothing to recover and nobody to exclude: the
cross-process part is skipped until a change creates the folder, so a read never creates it.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import TracebackType

from ..errors import HomeError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the in-process lock only
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "folder.lock"
WAIT_SECONDS = 30.0  # another memdeck's change (an accept, a reset) takes well under this

_LOCKS: dict[str, HomeLock] = {}
_LOCKS_GUARD = threading.Lock()


class HomeLock:
    """Re-entrant within the process, exclusive across processes (see the module doc)."""

    def __init__(self, memdeck_dir: Path) -> None:
        self.memdeck_dir = memdeck_dir
        self._rlock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def __enter__(self) -> HomeLock:
        self.acquire(wait=True)
        return self

    def acquire(self, *, wait: bool) -> bool:
        """Take the lock; `wait=False`: only if nobody holds it now (False: not taken)."""
        if not self._rlock.acquire(blocking=wait):
            return False
        try:
            if self._depth == 0 or self._fd is None:
                if not self._take_file_lock(wait) and not wait:
                    self._rlock.release()
                    return False
        except BaseException:
            self._rlock.release()
            raise
        self._depth += 1
        return True

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor drops the flock
        self._rlock.release()

    @property
    def across_processes(self) -> bool:
        """This process holds the cross-process lock (False only before `memdeck/` exists)."""
        return self._fd is not None

    def _take_file_lock(self, wait: bool = True) -> bool:
        """False only when `wait` is False and another process holds the lock."""
        if fcntl is None or not self.memdeck_dir.is_dir() or self.memdeck_dir.is_symlink():
            return True
        path = self.memdeck_dir / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as e:
            raise HomeError(f"cannot open {path}: {e.strerror}") from None
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    os.close(fd)
                    return False
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise HomeError("another memdeck has been changing the memory folder for "
                                    f"{WAIT_SECONDS:.0f} s; try again when it has finished"
                                    ) from None
                time.sleep(0.02)
            except OSError:  # a file system without flock: the in-process lock only
                os.close(fd)
                return True
        self._fd = fd
        return True

    def ensure_across_processes(self) -> None:
        """Take the cross-process lock now that `memdeck/` exists (a change created it)."""
        if self._depth > 0 and self._fd is None:
            self._take_file_lock()


def home_lock(memdeck_dir: Path) -> HomeLock:
    """The one lock of the home whose memdeck folder is `memdeck_dir`, in this process."""
    key = os.path.abspath(memdeck_dir)
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = HomeLock(Path(key))
        return lock
