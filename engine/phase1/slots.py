"""Waiting for a phase-1 slot (issue 12 item 11): an extraction refused because the running
cap is full, or because another process holds the session's lease, waits for a slot and claims
again, instead of being skipped; the run gives up, saying why, only when nothing outside has
let go for `slot_wait` seconds."""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable

from ..codex.pipeline_db import PipelineDB
from ..codex.pipeline_snapshot import STAGE1_KIND
from ..formatting import iso_utc
from ..workers import dead_memdeck_worker

SLOT_WAIT_SECONDS = 300.0  # give up after this long with nothing come free (MEMDECK_SLOT_WAIT)
SLOT_POLL_SECONDS = 0.5  # how often a waiting worker looks at other processes' leases


def slot_wait_seconds(given: float | None) -> float:
    """How long a run waits with nothing come free: `given`, else $MEMDECK_SLOT_WAIT, else
    `SLOT_WAIT_SECONDS`."""
    if given is not None:
        return max(0.0, float(given))
    try:
        return max(0.0, float(os.environ.get("MEMDECK_SLOT_WAIT", SLOT_WAIT_SECONDS)))
    except ValueError:
        return SLOT_WAIT_SECONDS


Lease = tuple[str, str, str, int]  # job_key, ownership_token, worker_id, lease_until


def live_stage1_leases(db: PipelineDB, now: int) -> frozenset[Lease]:
    """Every stage-1 job running under a live lease, by anyone, read without a write lock;
    a dead memdeck process's lease is left out, as claims take it back."""
    rows = db.conn.execute(
        "SELECT job_key, COALESCE(ownership_token, ''), COALESCE(worker_id, ''), lease_until "
        "FROM jobs WHERE kind = ? AND status = 'running' AND lease_until > ?",
        (STAGE1_KIND, now)).fetchall()
    return frozenset((k, t, w, int(u)) for k, t, w, u in rows if not dead_memdeck_worker(w))


class SlotWait:
    """Waiting for a stage-1 slot, or for a session's lease held elsewhere, to come free.

    A worker whose claim found the cap full (or the session leased) waits here and claims
    again. It wakes at once when one of this run's own extractions ends, and every
    `SLOT_POLL_SECONDS` to look at the leases of other processes. The run gives up once the
    live leases have stayed the same for `limit` seconds while none of its own extractions
    was in flight: something outside holds the slots, and nothing says when it will let go.
    """

    def __init__(self, cap: int, limit: float, cancel: threading.Event,
                 on_wait: Callable[[str], None] | None = None) -> None:
        self.cap = cap
        self.limit = limit
        self.cancel = cancel
        self.on_wait = on_wait  # told, in one line, whenever what the run waits for changes
        self.gave_up = ""  # why, once the run stopped waiting
        self._cond = threading.Condition()
        self._active = 0  # this run's extractions in flight
        self._seen: frozenset[Lease] | None = None
        self._changed = time.monotonic()  # when a lease was last seen to come or go

    def started(self) -> None:
        with self._cond:
            self._active += 1
            self._changed = time.monotonic()

    def released(self) -> None:
        with self._cond:
            self._active -= 1
            self._changed = time.monotonic()
            self._cond.notify_all()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def wait(self, db: PipelineDB, now: Callable[[], int]) -> bool:
        """Wait a little; True: claim again, False: cancelled, or the run gave up."""
        with self._cond:
            if self.gave_up or self.cancel.is_set():
                return False
            self._cond.wait(SLOT_POLL_SECONDS * random.uniform(0.6, 1.0))
            if self.cancel.is_set():
                return False
        leases = live_stage1_leases(db, now())
        told = ""
        with self._cond:
            if self.gave_up:
                return False
            if leases != self._seen:
                self._seen = leases
                self._changed = time.monotonic()
                told = self._waiting(leases, db.worker_id)
            elif self._active == 0 and time.monotonic() - self._changed >= self.limit:
                self.gave_up = self._describe(leases, db.worker_id)
                self._cond.notify_all()
                return False
        if told and self.on_wait is not None:
            self.on_wait(told)
        return True

    def _holders(self, leases: frozenset[Lease], mine: str) -> tuple[int, str, str]:
        """How many leases others hold, who ("codex:… ×8"), and when the last one ends."""
        others = [lease for lease in leases if lease[2] != mine]
        who = ", ".join(f"{w or 'unknown'} ×{n}" if n > 1 else (w or "unknown")
                        for w, n in Counter(lease[2] for lease in others).most_common())
        return len(others), who, iso_utc(max((lease[3] for lease in others), default=0)) or "?"

    def _waiting(self, leases: frozenset[Lease], mine: str) -> str:
        n, who, ends = self._holders(leases, mine)
        if not n:
            return ""  # only this run's own extractions: a slot comes free as one ends
        held = (f"all {self.cap} extraction slots are held" if n >= self.cap
                else f"{n} extraction lease(s) are held")
        return (f"waiting for an extraction slot: {held} by other processes ({who}), leases "
                f"ending by {ends}; giving up after {self.limit:g} s with none come free")

    def _describe(self, leases: frozenset[Lease], mine: str) -> str:
        n, who, ends = self._holders(leases, mine)
        if n >= self.cap:
            return (f"no extraction slot came free in {self.limit:g} s: all {self.cap} "
                    f"extractions that may run at once are held by other processes ({who}), "
                    f"leases ending by {ends}")
        return (f"nothing came free in {self.limit:g} s: other processes ({who or 'none'}) "
                f"hold the leases of the sessions left, ending by {ends}")

    def why(self, db: PipelineDB, now: int, thread_id: str, skipped: str | None) -> str:
        """One remaining session's detail: the run's reason, or the lease on the session."""
        if skipped == "running":
            held = [lease for lease in live_stage1_leases(db, now) if lease[0] == thread_id]
            if held:
                return (f"another process ({held[0][2] or 'unknown'}) holds this session's "
                        f"lease until {iso_utc(held[0][3])}; nothing came free in "
                        f"{self.limit:g} s")
        return self.gave_up or f"no extraction slot came free in {self.limit:g} s"
