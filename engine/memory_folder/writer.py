"""The one writer of the live memory folder: every change of it goes through here.

Accepting a proposal, a person's edit or note, reset, restoring a backup and restoring a
history commit all change what Codex reads in its next session. Each runs inside
`MemoryFolderWriter.change()`, which gives it, in this order:

1. the home's one in-process lock (re-entrant): the app runs engine calls on several worker
   threads, and a recovery must never clear the folder an accept is building;
2. crash recovery: an accept a crash interrupted is finished or undone first
   (`accept.recover`), before anything else touches the root;
3. `Change.lease(purpose)`: the global consolidation lease in Codex's pipeline DB, across
   processes, so no consolidation (memdeck's or Codex's own phase 2) runs meanwhile. Taken
   after the change's own checks, so a refused change leaves the job row as it was. Reset
   and a backup restore take none: they check every pipeline DB themselves and rewrite
   its rows;
4. history: `Change.before()` records the state found, if history does not hold it yet (an
   outside change stays `external`); `Change.after(origin, message)` commits the result as
   the one who made it.

The writer is handed what it needs (the home, memdeck's store, the clock), never the facade.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..clock import Clock
from ..codex.home import CodexHome
from ..codex.pipeline_db import PipelineDB
from ..store import Store
from .history import History

_LOCKS: dict[str, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _home_lock(home: CodexHome) -> threading.RLock:
    """One lock per Codex home in this process: its memory roots (v1, v2, extensions), the
    journals and the history all live under it."""
    key = os.path.abspath(home.root)
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = threading.RLock()
        return lock


@dataclass(frozen=True)
class Lease:
    """The global consolidation lease, held: the pipeline DB it is held in and its token."""

    db: PipelineDB
    token: str


class Change:
    """One change of the memory folder in progress (inside `MemoryFolderWriter.change`)."""

    def __init__(self, writer: MemoryFolderWriter) -> None:
        self.writer = writer
        self.history = History(writer.home)

    @contextmanager
    def lease(self, purpose: str) -> Iterator[Lease]:
        """Hold the global lease for the rest of the change; refused with "cannot <purpose>:
        a consolidation is running …" while someone else's is live."""
        db = PipelineDB.open(self.writer.home)
        try:
            with db.global_lease(int(self.writer.now()), purpose) as token:
                yield Lease(db, token)
        finally:
            db.close()

    def before(self) -> str | None:
        """Record the state about to be replaced; the new commit, or None if history held it."""
        return self.history.snapshot()

    def after(self, origin: str, message: str,
              trailers: dict[str, str] | None = None) -> str | None:
        """Commit the changed folder as `origin`'s; None if the folder did not change."""
        return self.history.snapshot(origin, message, trailers)


class MemoryFolderWriter:
    """Changes one Codex home's live memory folder. Cheap to build; build one per call.

    `store` is called only when the change needs memdeck's database (an accept), so a
    change that does not never creates it."""

    def __init__(self, home: CodexHome, clock: Clock, store: Callable[[], Store]) -> None:
        self.home = home
        self.clock = clock
        self._store = store
        self._lock = _home_lock(home)

    @property
    def store(self) -> Store:
        return self._store()

    def now(self) -> float:
        return self.clock.now()

    def recover(self) -> str | None:
        """Finish or undo an accept a crash interrupted: "finished", "undone" or None."""
        from .accept import recover

        with self._lock:
            return recover(self)

    @contextmanager
    def change(self, *, recover: bool = True) -> Iterator[Change]:
        """Hold the home's lock and, after recovery (`recover=False` only for the recovery
        itself), yield the change: its lease, its before and after snapshots."""
        with self._lock:
            if recover:
                self.recover()
            yield Change(self)
