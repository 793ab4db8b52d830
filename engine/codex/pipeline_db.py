"""Writing the pipeline DB with Codex's job, lease and watermark rules
(docs/codex-format.md "Leases and watermarks", "Pruning").

Every change runs in `BEGIN IMMEDIATE`, so memdeck and a running Codex can share one
`memories_1.sqlite` without double work: whoever claims a job first owns it until its lease
ends, and each owner proves itself with a fresh ownership token. memdeck's own leases carry
`memdeck:<host>:<pid>`; one whose process on this host is gone is taken back at once.
Codex's database only ever gets DML here. When Codex has none yet, memdeck keeps a file of
the same shape, and copies its rows into Codex's the first time that appears.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import MemdeckError
from ..store import connect, describe_sqlite_error
from ..workers import dead_memdeck_worker as _dead_memdeck_worker
from ..workers import memdeck_worker_id
from .home import CodexHome
from .pipeline_snapshot import GLOBAL_KIND, STAGE1_KIND
from .schema import create_memories_db

JOB_LEASE_SECONDS = 3600
JOB_RETRY_DELAY_SECONDS = 3600
DEFAULT_RETRY_REMAINING = 3
PRUNE_BATCH_SIZE = 200
REQUIRED = {
    "stage1_outputs": {"thread_id", "source_updated_at", "raw_memory", "rollout_summary",
                       "rollout_slug", "generated_at", "usage_count", "last_usage",
                       "selected_for_phase2", "selected_for_phase2_source_updated_at"},
    "jobs": {"kind", "job_key", "status", "worker_id", "ownership_token", "started_at",
             "finished_at", "lease_until", "retry_at", "retry_remaining", "last_error",
             "input_watermark", "last_success_watermark"},
}


class PipelineDBError(MemdeckError):
    pass


@dataclass(frozen=True)
class Claim:
    thread_id: str
    token: str
    watermark: int


@dataclass(frozen=True)
class PrunedRow:
    """A stage-1 row pruning removed, as it was (without its text)."""

    thread_id: str
    source_updated_at: int
    generated_at: int
    usage_count: int | None
    last_usage: int | None


@dataclass(frozen=True)
class ClaimOutcome:
    claim: Claim | None
    skipped: str | None  # up_to_date | running | retry_backoff | retry_exhausted | cap


class PipelineDB:
    """A connection to the pipeline DB. Use it from one thread at a time (open one per
    worker thread); it may be closed from the thread that waited for the workers."""

    def __init__(self, path: Path, is_codex: bool) -> None:
        self.path = path
        self.is_codex = is_codex
        self.worker_id = memdeck_worker_id()
        try:
            self.conn = connect(path, same_thread=False)
            # Codex's own connection setting (docs/codex-format.md "Database files"): in WAL
            # mode a commit need not wait for the disk; a crash can lose the last commits, never
            # corrupt.
            self.conn.execute("PRAGMA synchronous=NORMAL")
        except MemdeckError as e:
            raise PipelineDBError(str(e)) from None
        except sqlite3.Error as e:
            raise PipelineDBError(describe_sqlite_error(path, e)) from None
        self._check_schema()

    @classmethod
    def open(cls, home: CodexHome) -> PipelineDB:
        codex = home.codex_pipeline_db
        own = home.own_pipeline_db
        if codex.exists():
            db = cls(codex, True)
            if own.exists():
                db._adopt(own)
            return db
        if not own.exists():
            home.ensure_memdeck_dir()
            create_memories_db(own, as_codex=False)
        return cls(own, False)

    def close(self) -> None:
        self.conn.close()

    def _check_schema(self) -> None:
        try:
            for table, cols in REQUIRED.items():
                have = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
                missing = cols - have
                if missing:
                    raise PipelineDBError(
                        f"{self.path.name} lacks {table}.{sorted(missing)[0]}: an unknown "
                        "schema; memdeck will not write to it")
        except sqlite3.Error as e:
            raise PipelineDBError(describe_sqlite_error(self.path, e)) from None

    def _adopt(self, own: Path) -> None:
        """Copy memdeck's own rows into Codex's DB once, then retire memdeck's file."""
        try:
            self.conn.execute("ATTACH DATABASE ? AS own", (f"file:{own}?mode=ro",))
        except sqlite3.Error:
            return
        try:
            with self.tx():
                self.conn.execute(
                    "INSERT INTO stage1_outputs SELECT * FROM own.stage1_outputs o WHERE NOT "
                    "EXISTS (SELECT 1 FROM stage1_outputs s WHERE s.thread_id = o.thread_id "
                    "AND s.source_updated_at >= o.source_updated_at) "
                    "ON CONFLICT(thread_id) DO UPDATE SET source_updated_at = "
                    "excluded.source_updated_at, raw_memory = excluded.raw_memory, "
                    "rollout_summary = excluded.rollout_summary, rollout_slug = "
                    "excluded.rollout_slug, generated_at = excluded.generated_at")
                self.conn.execute(
                    "INSERT OR IGNORE INTO jobs SELECT * FROM own.jobs WHERE status != 'running'")
        finally:
            self.conn.execute("DETACH DATABASE own")
        own.rename(own.with_name(own.name + ".adopted"))

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise PipelineDBError(describe_sqlite_error(self.path, e)) from None
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- stage 1 ----------------------------------------------------------------------
    def claim_stage1(self, thread_id: str, source_updated_at: int, now: int,
                     max_running: int) -> ClaimOutcome:
        c = self.conn
        with self.tx():
            out = c.execute("SELECT source_updated_at FROM stage1_outputs WHERE thread_id = ?",
                            (thread_id,)).fetchone()
            if out and out[0] >= source_updated_at:
                return ClaimOutcome(None, "up_to_date")
            job = c.execute(
                "SELECT status, lease_until, retry_at, retry_remaining, input_watermark, "
                "last_success_watermark, worker_id FROM jobs WHERE kind = ? AND job_key = ?",
                (STAGE1_KIND, thread_id)).fetchone()
            if job and (job[5] or 0) >= source_updated_at:
                return ClaimOutcome(None, "up_to_date")
            running = c.execute(
                "SELECT worker_id FROM jobs WHERE kind = ? AND status = 'running' AND "
                "lease_until > ? AND job_key != ?", (STAGE1_KIND, now, thread_id)).fetchall()
            live = [w for (w,) in running if not _dead_memdeck_worker(w)]
            if len(live) >= max_running:
                return ClaimOutcome(None, "cap")
            if (job and job[0] == "running" and (job[1] or 0) > now
                    and not _dead_memdeck_worker(job[6])):
                return ClaimOutcome(None, "running")
            advanced = job is None or source_updated_at > (job[4] or 0)
            retries = DEFAULT_RETRY_REMAINING if advanced else int(job[3] or 0)
            if not advanced:
                if job[2] is not None and job[2] > now:
                    return ClaimOutcome(None, "retry_backoff")
                if retries <= 0:
                    return ClaimOutcome(None, "retry_exhausted")
            token = str(uuid.uuid4())
            c.execute(
                "INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, "
                "started_at, finished_at, lease_until, retry_at, retry_remaining, last_error, "
                "input_watermark, last_success_watermark) "
                "VALUES (?, ?, 'running', ?, ?, ?, NULL, ?, NULL, ?, NULL, ?, NULL) "
                "ON CONFLICT(kind, job_key) DO UPDATE SET status = 'running', "
                "worker_id = excluded.worker_id, ownership_token = excluded.ownership_token, "
                "started_at = excluded.started_at, finished_at = NULL, "
                "lease_until = excluded.lease_until, retry_remaining = "
                "excluded.retry_remaining, input_watermark = excluded.input_watermark",
                (STAGE1_KIND, thread_id, self.worker_id, token, now, now + JOB_LEASE_SECONDS,
                 retries, source_updated_at))
            return ClaimOutcome(Claim(thread_id, token, source_updated_at), None)

    def _owned(self, claim: Claim) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM jobs WHERE kind = ? AND job_key = ? AND status = 'running' AND "
            "ownership_token = ?", (STAGE1_KIND, claim.thread_id, claim.token)).fetchone()
        return row is not None

    def stage1_succeeded(self, claim: Claim, now: int, raw_memory: str, rollout_summary: str,
                         rollout_slug: str | None) -> bool:
        with self.tx() as c:
            if not self._owned(claim):
                return False
            self._finish(claim, now)
            c.execute(
                "INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, "
                "rollout_summary, rollout_slug, generated_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(thread_id) DO UPDATE SET source_updated_at = "
                "excluded.source_updated_at, raw_memory = excluded.raw_memory, "
                "rollout_summary = excluded.rollout_summary, rollout_slug = "
                "excluded.rollout_slug, generated_at = excluded.generated_at "
                "WHERE excluded.source_updated_at >= stage1_outputs.source_updated_at",
                (claim.thread_id, claim.watermark, raw_memory, rollout_summary, rollout_slug,
                 now))
            self._enqueue_global(claim.watermark, now)
            return True

    def stage1_no_output(self, claim: Claim, now: int) -> bool:
        with self.tx() as c:
            if not self._owned(claim):
                return False
            self._finish(claim, now)
            deleted = c.execute("DELETE FROM stage1_outputs WHERE thread_id = ?",
                                (claim.thread_id,)).rowcount
            if deleted:
                self._enqueue_global(claim.watermark, now)
            return True

    def stage1_failed(self, claim: Claim, now: int, error: str) -> bool:
        """The job failed; `error` (often the endpoint's own words) is stored redacted."""
        from ..redact import redact  # here: every command opens the home through this module

        error = redact(error[:20000])[:2000]
        with self.tx() as c:
            return c.execute(
                "UPDATE jobs SET status = 'error', lease_until = NULL, finished_at = ?, "
                "retry_remaining = MAX(retry_remaining - 1, 0), retry_at = ?, last_error = ? "
                "WHERE kind = ? AND job_key = ? AND status = 'running' AND "
                "ownership_token = ?",
                (now, now + JOB_RETRY_DELAY_SECONDS, error, STAGE1_KIND,
                 claim.thread_id, claim.token)).rowcount == 1

    def _finish(self, claim: Claim, now: int) -> None:
        self.conn.execute(
            "UPDATE jobs SET status = 'done', finished_at = ?, lease_until = NULL, "
            "last_error = NULL, retry_at = NULL, last_success_watermark = input_watermark "
            "WHERE kind = ? AND job_key = ? AND ownership_token = ?",
            (now, STAGE1_KIND, claim.thread_id, claim.token))

    def _enqueue_global(self, watermark: int, now: int) -> None:
        self.conn.execute(
            "INSERT INTO jobs (kind, job_key, status, retry_remaining, input_watermark) "
            "VALUES (?, 'global', 'pending', ?, ?) ON CONFLICT(kind, job_key) DO UPDATE SET "
            "status = CASE WHEN status = 'running' THEN 'running' ELSE 'pending' END, "
            "retry_at = CASE WHEN status = 'running' THEN retry_at ELSE NULL END, "
            "retry_remaining = MAX(retry_remaining, excluded.retry_remaining), "
            "input_watermark = CASE WHEN excluded.input_watermark > "
            "COALESCE(input_watermark, 0) THEN excluded.input_watermark "
            "ELSE COALESCE(input_watermark, 0) + 1 END",
            (GLOBAL_KIND, DEFAULT_RETRY_REMAINING, watermark))

    def enqueue_global(self, watermark: int, now: int) -> None:
        with self.tx():
            self._enqueue_global(watermark, now)

    def forget_thread(self, thread_id: str, now: int) -> bool:
        """Codex's `delete_thread_memory`: row and job gone; phase 2 enqueued if it was used."""
        with self.tx() as c:
            row = c.execute("SELECT selected_for_phase2, source_updated_at FROM stage1_outputs "
                            "WHERE thread_id = ?", (thread_id,)).fetchone()
            c.execute("DELETE FROM stage1_outputs WHERE thread_id = ?", (thread_id,))
            c.execute("DELETE FROM jobs WHERE kind = ? AND job_key = ?",
                      (STAGE1_KIND, thread_id))
            if row and row[0]:
                self._enqueue_global(int(row[1] or 0), now)
            return row is not None

    # -- the phase-2 global lease, held while memdeck writes into the memory root ------
    def global_lease_live(self, now: int) -> bool:
        """Someone alive holds the global consolidation lease right now."""
        row = self.conn.execute("SELECT status, lease_until, worker_id FROM jobs WHERE kind = ? "
                                "AND job_key = 'global'", (GLOBAL_KIND,)).fetchone()
        return bool(row and row[0] == "running" and (row[1] or 0) > now
                    and not _dead_memdeck_worker(row[2]))

    @contextmanager
    def global_lease(self, now: int, purpose: str) -> Iterator[str]:
        """Hold the global consolidation lease (refused while someone else's is live); on
        release the job is left `pending`, so the next consolidation sees the change."""
        token = str(uuid.uuid4())
        with self.tx() as c:
            row = c.execute("SELECT worker_id FROM jobs WHERE kind = ? AND job_key = 'global'",
                            (GLOBAL_KIND,)).fetchone()
            if self.global_lease_live(now):
                raise PipelineDBError(
                    f"cannot {purpose}: a consolidation is running ({row[0] or 'unknown'}); "
                    "try again after it finishes")
            c.execute(
                "INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, "
                "started_at, lease_until, retry_remaining, input_watermark) VALUES "
                "(?, 'global', 'running', ?, ?, ?, ?, ?, 0) ON CONFLICT(kind, job_key) DO "
                "UPDATE SET status = 'running', worker_id = excluded.worker_id, "
                "ownership_token = excluded.ownership_token, lease_until = "
                "excluded.lease_until", (GLOBAL_KIND, self.worker_id, token, now,
                                         now + JOB_LEASE_SECONDS, DEFAULT_RETRY_REMAINING))
        try:
            yield token
        finally:
            with self.tx() as c:  # unless the holder finished the job itself (accept)
                c.execute("UPDATE jobs SET status = 'pending', lease_until = NULL, "
                          "retry_at = NULL WHERE kind = ? AND job_key = 'global' AND "
                          "ownership_token = ? AND status = 'running'", (GLOBAL_KIND, token))

    def phase2_succeeded(self, token: str, now: int, selected: list[tuple[str, int]]) -> None:
        """Codex's `mark_global_phase2_job_succeeded`, for the lease holder."""
        watermark = max((sua for _, sua in selected), default=0)
        with self.tx() as c:
            c.execute(
                "UPDATE jobs SET status = 'done', finished_at = ?, lease_until = NULL, "
                "last_error = NULL, retry_at = NULL, last_success_watermark = "
                "MAX(COALESCE(last_success_watermark, 0), COALESCE(input_watermark, 0), ?) "
                "WHERE kind = ? AND job_key = 'global' AND ownership_token = ?",
                (now, watermark, GLOBAL_KIND, token))
            c.execute("UPDATE stage1_outputs SET selected_for_phase2 = 0, "
                      "selected_for_phase2_source_updated_at = NULL")
            c.executemany(
                "UPDATE stage1_outputs SET selected_for_phase2 = 1, "
                "selected_for_phase2_source_updated_at = source_updated_at WHERE "
                "thread_id = ? AND source_updated_at = ?", selected)

    def set_phase2_selection(self, selected: list[tuple[str, int]]) -> None:
        """Exactly `selected` ((thread, source_updated_at)) counts as consolidated: the memory
        files were restored to a state that holds those raw memories; for the lease holder."""
        with self.tx() as c:
            c.execute("UPDATE stage1_outputs SET selected_for_phase2 = 0, "
                      "selected_for_phase2_source_updated_at = NULL")
            c.executemany(
                "UPDATE stage1_outputs SET selected_for_phase2 = 1, "
                "selected_for_phase2_source_updated_at = source_updated_at WHERE "
                "thread_id = ? AND source_updated_at = ?", selected)

    # -- pruning (docs/codex-format.md "Pruning") -------------------------------------
    def prune(self, max_unused_days: int, now: int) -> int:
        return len(self.prune_rows(max_unused_days, now))

    def prune_rows(self, max_unused_days: int, now: int) -> list[PrunedRow]:
        """Codex's pruning; returns what it removed (Codex keeps no record of it: the jobs
        stay, so a pruned row afterwards looks like "no output" unless memdeck notes it)."""
        cutoff = now - max_unused_days * 86400
        with self.tx() as c:
            rows = [PrunedRow(r[0], int(r[1] or 0), int(r[2] or 0), r[3], r[4]) for r in
                    c.execute(
                        "SELECT thread_id, source_updated_at, generated_at, usage_count, "
                        "last_usage FROM stage1_outputs WHERE selected_for_phase2 = 0 AND "
                        "COALESCE(last_usage, source_updated_at) < ? ORDER BY "
                        "COALESCE(last_usage, source_updated_at) ASC, source_updated_at ASC, "
                        "thread_id ASC LIMIT ?", (cutoff, PRUNE_BATCH_SIZE)).fetchall()]
            c.executemany("DELETE FROM stage1_outputs WHERE thread_id = ?",
                          [(r.thread_id,) for r in rows])
            return rows
