"""The one writer of the live memory folder: every change of it goes through here.

Accepting a proposal, a person's edit or note, reset, restoring a backup and restoring a
history commit all change what Codex reads in its next session. Each runs inside
`MemoryFolderWriter.change()`, which gives it, in this order:

1. the home's lock (home_lock.py): re-entrant across the app's worker threads, exclusive
   across processes, so a recovery never clears what a live memdeck is building;
2. crash recovery (`recover`, handed in by whoever builds the writer: the facade gives it
   leftovers.py `recover`): a change a crash interrupted is finished or undone first
   (recovery.py), stale git locks and temp files of a dead memdeck are removed, before
   anything else touches the root;
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

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..clock import Clock
from ..codex.home import CodexHome
from ..codex.pipeline_db import PipelineDB
from ..errors import HomeError
from ..store import Store
from .history import History
from .home_lock import HomeLock, home_lock
from .origins import Origin


@dataclass(frozen=True)
class Lease:
    """The global consolidation lease, held: the pipeline DB it is held in and its token."""

    db: PipelineDB
    token: str


class Change:
    """One change of the memory folder in progress (inside `MemoryFolderWriter.change`)."""

    def __init__(self, writer: MemoryFolderWriter) -> None:
        self.writer = writer
        self.history = History(writer.home, writer.clock)

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

    def after(self, origin: Origin, message: str,
              trailers: dict[str, str] | None = None) -> str | None:
        """Commit the changed folder as `origin`'s; None if the folder did not change."""
        return self.history.snapshot(origin, message, trailers)


class MemoryFolderWriter:
    """Changes one Codex home's live memory folder. Cheap to build; build one per call.

    `store` is called only when the change needs memdeck's database (an accept), so a
    change that does not never creates it. `recover` finishes what a killed memdeck left
    (leftovers.py `recover`); the writer runs it under its lock and knows nothing of it."""

    def __init__(self, home: CodexHome, clock: Clock, store: Callable[[], Store],
                 recover: Recovery) -> None:
        self.home = home
        self.clock = clock
        self._store = store
        self._recover = recover
        self.lock: HomeLock = home_lock(home.memdeck_dir)

    @property
    def store(self) -> Store:
        return self._store()

    def now(self) -> float:
        return self.clock.now()

    def recover(self, *, wait: bool = True) -> str | None:
        """Finish or undo a change a crash interrupted, and clear what a dead memdeck left
        (git locks, temp files); one line saying what was done, or None. `wait=False` (a
        command opening the home): when another memdeck is changing the folder right now,
        nothing is left over to recover, so do not wait for it."""
        if not self.home.memdeck_dir.is_dir() or self.home.memdeck_dir.is_symlink():
            return None  # memdeck never changed this home: nothing to recover, nothing made
        if not self.lock.acquire(wait=wait):
            return None
        try:
            return self._recover(self)
        finally:
            self.lock.__exit__(None, None, None)

    @contextmanager
    def change(self, *, recover: bool = True) -> Iterator[Change]:
        """Hold the home's lock and, after recovery (`recover=False` only for the recovery
        itself), yield the change: its lease, its before and after snapshots."""
        if self.home.config_problem:  # which memory Codex uses is not known: write none
            raise HomeError(f"{self.home.config_problem}; memdeck changes nothing until it is "
                            "fixed (Codex does not start with it either)")
        with self.lock:
            if recover:
                self.recover()
            yield Change(self)


# what recovers a home before a change: one line saying what was done, or None
Recovery = Callable[[MemoryFolderWriter], str | None]
