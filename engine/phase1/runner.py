"""Phase 1: one raw memory and one summary per session (docs/codex-format.md "Phase 1"), run by
memdeck.

Selection, claims, leases, retries and watermarks follow Codex's rules (codex/pipeline_db.py),
so a session Codex is extracting right now is left alone and nothing is extracted twice. The
model is a `Phase1Backend` (phase1/backend.py) the facade hands in. Its output is redacted
before it is stored; a failure is recorded with its retry time and never reaches memory.
Each run first prunes as Codex does; the rows pruned, and each extracted / no-output result,
are noted in memdeck's DB (index/extract_log.py), since Codex's tables keep no trace of a prune.

A claim refused because the running cap is full, or because another process holds that
session's lease, is not the end of it: the worker waits for a slot (`SlotWait`) and claims
again, so a run finishes every session it chose. It gives up only when nothing has come free
for `slot_wait` seconds while none of this run's own extractions is in flight; the sessions
left are then reported as remaining (`ExtractResult.remains`), with why. Waiting changes no
row: leases, retry counts and retry times stay exactly as Codex's rules leave them.

The home's memory version decides the shape (docs/codex-format.md "Phase 1 output"): V1 stores a
raw memory and a summary and gives "no output" when either is empty; V2 sends the tiered input,
stores only the summary (`raw_memory = ""`, summary cut to 9,000 bytes) and gives "no output" when
the summary is empty. The version is read once per run, with the pipeline DB it goes with.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..clock import Clock
from ..codex.home import CodexHome
from ..codex.pipeline_db import Claim, PipelineDB, PrunedRow
from ..codex.rollout import read_rollout
from ..errors import MemdeckError
from ..index.extract_log import ExtractOutcome, PrunedMemory, record_outcome, record_pruned
from ..index.sessions import Session
from ..redact import redact
from ..store import Store
from .backend import Phase1Backend, Phase1Output
from .input_v1 import DEFAULT_ROLLOUT_TOKEN_LIMIT, build_input, truncate_bytes
from .input_v2 import build_input_v2
from .slots import SlotWait, slot_wait_seconds

CONCURRENCY_LIMIT = 8  # also the running cap memdeck claims under (docs/codex-format.md)
V2_SUMMARY_BYTES = 9_000  # Codex cuts a V2 rollout_summary to this after redaction
NOT_EXTRACTABLE = ("disabled", "polluted", "not_interactive", "archived", "empty",
                   "unreadable")


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExtractResult:
    thread_id: str
    rollout_path: str
    outcome: str  # extracted | no_output | failed | skipped | refused
    detail: str
    remains: bool = False  # skipped only because no slot came free in time: still to do


@dataclass(frozen=True)
class ExtractReport:
    backend: str
    model: str
    pipeline_db: str
    pruned: int
    results: tuple[ExtractResult, ...]
    cancelled: bool = False
    version: str = "v1"  # the memory version extracted for (its DB is `pipeline_db`)
    warnings: tuple[str, ...] = ()  # about the home, found listing the sessions (the facade's)
    pruned_threads: tuple[str, ...] = ()  # whose raw memory this run's pruning removed
    gave_up: str = ""  # why the run stopped waiting for a slot ("" when it never did)
    past_limit: int = 0  # eligible sessions the caller's limit left out (the facade's)

    def count(self, outcome: str) -> int:
        return sum(1 for r in self.results if r.outcome == outcome)

    @property
    def remaining(self) -> int:
        """Sessions this run chose but could not start: no slot came free in time."""
        return sum(1 for r in self.results if r.remains)


Progress = Callable[[int, int, ExtractResult | None], None]  # None: the start


def select(sessions: list[Session], ids: list[str] | None,
           find: Callable[[list[Session], str], Session]) -> tuple[list[Session],
                                                                   list[ExtractResult]]:
    """Eligible sessions (newest first), or the named ones with the time rules waived.
    A `too_old_to_keep` session is extracted only when named: phase 2 would never take its
    memory and the next run's pruning would remove it (index/status.py)."""
    if not ids:
        chosen = [s for s in sessions if s.status in ("eligible", "failed") and s.id]
        return chosen, []
    chosen, refused = [], []
    for key in ids:
        s = find(sessions, key)
        if s.status in NOT_EXTRACTABLE or not s.id:
            refused.append(ExtractResult(s.id or key, s.rollout_path, "refused",
                                         f"{s.status}: {s.reason}"))
        elif s not in chosen:
            chosen.append(s)
    return chosen, refused


class Phase1Runner:
    """One run over the chosen sessions: the home's pipeline DB for claims and results,
    memdeck's store for the model-call log, the clock for leases and retry times."""

    def __init__(self, home: CodexHome, store: Store, clock: Clock, backend: Phase1Backend,
                 *, concurrency: int = CONCURRENCY_LIMIT,
                 cancel: threading.Event | None = None,
                 progress: Progress | None = None,
                 slot_wait: float | None = None,
                 on_wait: Callable[[str], None] | None = None,
                 token_limit: int = DEFAULT_ROLLOUT_TOKEN_LIMIT) -> None:
        self.home = home
        self.token_limit = token_limit  # of a rollout sent to the model (backends/server_context)
        self.store = store
        self.clock = clock
        self.backend = backend
        self.concurrency = max(1, concurrency)
        self.cancel = cancel or threading.Event()
        self.progress = progress
        self.slots = SlotWait(self.concurrency, slot_wait_seconds(slot_wait), self.cancel,
                              on_wait)
        self._done = 0
        self._lock = threading.Lock()
        self._local = threading.local()
        self._dbs: list[PipelineDB] = []
        self.version = home.memory_version  # one version for the whole run

    def _db(self) -> PipelineDB:
        """One pipeline-DB connection per worker thread, closed when the run ends."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = PipelineDB.open(self.home)
            with self._lock:
                self._dbs.append(db)
        return db

    def run(self, sessions: list[Session], refused: list[ExtractResult]) -> ExtractReport:
        cfg = self.home.config
        db = PipelineDB.open(self.home)
        try:
            pruned_at = int(self.clock.now())
            pruned = db.prune_rows(cfg.max_unused_days, pruned_at)
            db_path = str(db.path)
        finally:
            db.close()
        self._note_pruned(pruned, pruned_at, cfg.max_unused_days)
        total = len(sessions)
        if self.progress:
            self.progress(0, total, None)  # the count is known: bars can show 0/N at once
        try:
            if total <= 1 or self.concurrency == 1:
                results = [self._one(s, total) for s in sessions]
            else:
                pool = ThreadPoolExecutor(min(self.concurrency, total),
                                          thread_name_prefix="memdeck-phase1")
                try:
                    results = list(pool.map(lambda s: self._one(s, total), sessions))
                except BaseException:  # Ctrl-C: start nothing more, do not wait for calls
                    self.cancel.set()
                    self.slots.wake()
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
                pool.shutdown()
        finally:
            for db in self._dbs:
                db.close()
        return ExtractReport(self.backend.name, self.backend.model, db_path, len(pruned),
                             tuple(refused) + tuple(results), self.cancel.is_set(),
                             self.version, pruned_threads=tuple(r.thread_id for r in pruned),
                             gave_up=self.slots.gave_up)

    def _note_pruned(self, rows: list[PrunedRow], at: int, days: int) -> None:
        """Codex keeps no trace of pruning; memdeck's DB does, so the status can say
        `pruned` rather than "nothing durable" (index/extract_log.py)."""
        if not rows:
            return
        try:
            with self.store.transaction() as c:
                record_pruned(c, self.version, [
                    PrunedMemory(r.thread_id, r.source_updated_at, r.generated_at,
                                 r.usage_count, r.last_usage, at, days) for r in rows])
        except Exception as e:  # noqa: BLE001 - the bookkeeping must never fail a run
            log.warning("memdeck could not note %d pruned raw memories: %s", len(rows), e)

    def _note_outcome(self, claim: Claim, outcome: str, finished_at: int,
                      detail: str = "") -> None:
        try:
            record_outcome(self.store.conn(), self.version, ExtractOutcome(
                claim.thread_id, claim.watermark, outcome, finished_at, detail))
        except Exception as e:  # noqa: BLE001 - the bookkeeping must never fail an extraction
            log.warning("memdeck could not note the outcome of %s: %s", claim.thread_id, e)

    def _one(self, session: Session, total: int) -> ExtractResult:
        result = self._extract(session)
        with self._lock:
            self._done += 1
            done = self._done
        if self.progress:
            self.progress(done, total, result)
        return result

    def _extract(self, s: Session) -> ExtractResult:
        tid = s.id or ""
        if self.cancel.is_set():
            return ExtractResult(tid, s.rollout_path, "skipped", "cancelled")
        now = lambda: int(self.clock.now())  # noqa: E731
        db = self._db()
        outcome = db.claim_stage1(tid, s.updated_at, now(), self.concurrency)
        waited = False
        while outcome.skipped in ("cap", "running"):  # wait for a slot, then claim again
            waited = True
            if not self.slots.wait(db, now):
                if self.cancel.is_set():
                    return ExtractResult(tid, s.rollout_path, "skipped", "cancelled")
                return ExtractResult(tid, s.rollout_path, "skipped",
                                     self.slots.why(db, now(), tid, outcome.skipped), True)
            outcome = db.claim_stage1(tid, s.updated_at, now(), self.concurrency)
        if outcome.claim is None:
            detail = _SKIPS[outcome.skipped]
            if outcome.skipped == "up_to_date" and s.status == "pruned":
                detail = f"up to date: {s.reason}"
            elif outcome.skipped == "up_to_date" and (waited or s.status in ("eligible",
                                                                             "failed")):
                detail = "up to date: another process extracted it during this run"
            return ExtractResult(tid, s.rollout_path, "skipped", detail)
        self.slots.started()
        try:
            return self._run_claimed(s, db, outcome.claim)
        finally:
            self.slots.released()

    def _run_claimed(self, s: Session, db: PipelineDB, claim: Claim) -> ExtractResult:
        tid = claim.thread_id
        now = lambda: int(self.clock.now())  # noqa: E731
        started = time.perf_counter()
        started_at = self.clock.now()
        try:
            build = build_input_v2 if self.version == "v2" else build_input
            out = self.backend.extract(build(read_rollout(s.rollout_path), self.token_limit), s)
        except Exception as e:  # noqa: BLE001 - recorded on the job, shown as one line
            failure = e if isinstance(e, MemdeckError) else None
            # redacted here, so what is printed is what is stored (it may quote the model)
            error = redact(str(e) if failure is not None else f"{type(e).__name__}: {e}")
            self._log(s, started, started_at, None, error, failure)
            db.stage1_failed(claim, now(), error)
            return ExtractResult(tid, s.rollout_path, "failed", error)
        self._log(s, started, started_at, out, None)
        raw, summary = redact(out.raw_memory), redact(out.rollout_summary)
        slug = redact(out.rollout_slug) if out.rollout_slug else None
        if self.version == "v2":
            raw = ""  # V2 keeps no raw memory
            empty = out.rollout_summary == ""
            summary = truncate_bytes(summary, V2_SUMMARY_BYTES)[0]
        else:
            empty = raw == "" or summary == ""
        finished = now()
        if empty:
            why = redact(out.empty_reason) or "nothing durable to remember"
            if db.stage1_no_output(claim, finished):
                self._note_outcome(claim, "no_output", finished, why)
            return ExtractResult(tid, s.rollout_path, "no_output", why)
        if not db.stage1_succeeded(claim, finished, raw, summary, slug):
            return ExtractResult(tid, s.rollout_path, "skipped",
                                 "lost the lease before finishing")
        self._note_outcome(claim, "extracted", finished)
        detail = (f"{len(summary)} bytes of summary" if self.version == "v2"
                  else f"{len(raw)} bytes of raw memory")
        return ExtractResult(tid, s.rollout_path, "extracted", detail)

    def _log(self, s: Session, started: float, started_at: float, out: Phase1Output | None,
             error: str | None, failure: Exception | None = None) -> None:
        from memdeck import prompts

        from ..call_log import log_call, prompt_hash

        try:
            name = "stage_one_system_v2" if self.version == "v2" else "stage_one_system"
            log_call(self.store.conn(), backend=self.backend.name, purpose="phase1",
                     prompt_name=name, prompt_hash=prompt_hash(prompts.load(name)),
                     model=out.model if out else self.backend.model, thread_id=s.id,
                     input_tokens=out.input_tokens if out else
                     getattr(failure, "input_tokens", 0),
                     output_tokens=out.output_tokens if out else
                     getattr(failure, "output_tokens", 0),
                     duration_ms=int((time.perf_counter() - started) * 1000), error=error,
                     started_at=started_at)
        except Exception:  # noqa: BLE001 - the log must never fail an extraction
            pass


_SKIPS = {
    "up_to_date": "up to date: already extracted at this version",
    "running": "another worker holds this session's lease",
    "retry_backoff": "failed recently; waiting for its retry time",
    "retry_exhausted": "no retries left until the session changes",
    "cap": "too many extractions running at once",
    None: "skipped",
}
