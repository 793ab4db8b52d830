"""The memory pipeline database: `stage1_outputs` and `jobs`
(docs/codex-format.md "The stage1_outputs table", "The jobs table").

This module reads it. Codex's own `memories_1.sqlite` is used when it exists and is never
given DDL; otherwise memdeck keeps a file of the same shape in `memdeck/`. A locked, damaged
or newer database degrades to "pipeline state unknown" with one line saying why; listing
sessions never fails because of it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..store import connect, describe_sqlite_error

STAGE1_KIND = "memory_stage1"
GLOBAL_KIND = "memory_consolidate_global"
KNOWN_CODEX_MIGRATION = 2  # 0001_memories, 0002_consolidation_progress


@dataclass(frozen=True)
class Stage1Output:
    thread_id: str
    source_updated_at: int
    raw_memory: str
    rollout_summary: str
    rollout_slug: str | None
    generated_at: int
    usage_count: int | None
    last_usage: int | None
    selected_for_phase2: bool
    selected_for_phase2_source_updated_at: int | None
    # why the sessions cite it more often than usage_count says (read_path/usage_notes.py);
    # filled in by `Engine.memories`, "" otherwise
    citation_note: str = ""


@dataclass(frozen=True)
class Job:
    kind: str
    job_key: str
    status: str
    worker_id: str | None
    ownership_token: str | None
    started_at: int | None
    finished_at: int | None
    lease_until: int | None
    retry_at: int | None
    retry_remaining: int
    last_error: str | None
    input_watermark: int | None
    last_success_watermark: int | None


@dataclass(frozen=True)
class PipelineSnapshot:
    path: Path | None
    outputs: dict[str, Stage1Output]
    stage1_jobs: dict[str, Job]
    global_job: Job | None
    warning: str | None = None


STAGE1_COLUMNS = (
    "thread_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, generated_at, "
    "usage_count, last_usage, selected_for_phase2, selected_for_phase2_source_updated_at"
)
JOB_COLUMNS = (
    "kind, job_key, status, worker_id, ownership_token, started_at, finished_at, lease_until, "
    "retry_at, retry_remaining, last_error, input_watermark, last_success_watermark"
)


def row_to_output(r: sqlite3.Row | tuple) -> Stage1Output:
    return Stage1Output(
        r[0], int(r[1] or 0), r[2] or "", r[3] or "", r[4], int(r[5] or 0), r[6], r[7],
        bool(r[8]), r[9],
    )


def row_to_job(r: sqlite3.Row | tuple) -> Job:
    return Job(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], int(r[9] or 0), r[10],
               r[11], r[12])


def read_snapshot(path: Path, with_memories: bool = False) -> PipelineSnapshot:
    """Everything the status column needs, in one read-only transaction."""
    if not path.exists():
        return PipelineSnapshot(None, {}, {}, None)
    try:
        conn = connect(path, readonly=True)
    except Exception as e:  # noqa: BLE001 - reported, never raised
        return PipelineSnapshot(path, {}, {}, None, f"{path.name}: {e}")
    warning = None
    try:
        conn.execute("BEGIN")
        newer = _newer_schema(conn)
        if newer:
            warning = (f"{path.name} has schema {newer}, newer than memdeck knows "
                       f"({KNOWN_CODEX_MIGRATION}); reading the columns memdeck knows")
        cols = STAGE1_COLUMNS if with_memories else STAGE1_COLUMNS.replace(
            "raw_memory, rollout_summary", "'', ''")
        outputs = {
            r[0]: row_to_output(r)
            for r in conn.execute(f"SELECT {cols} FROM stage1_outputs")
        }
        jobs = {}
        global_job = None
        for r in conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE kind IN (?, ?)",
                              (STAGE1_KIND, GLOBAL_KIND)):
            job = row_to_job(r)
            if job.kind == STAGE1_KIND:
                jobs[job.job_key] = job
            else:
                global_job = job
        conn.execute("COMMIT")
        return PipelineSnapshot(path, outputs, jobs, global_job, warning)
    except sqlite3.Error as e:
        return PipelineSnapshot(path, {}, {}, None,
                                describe_sqlite_error(path, e) + "; pipeline states not shown")
    finally:
        conn.close()


def _newer_schema(conn: sqlite3.Connection) -> int | None:
    try:
        row = conn.execute(
            "SELECT MAX(version) FROM _sqlx_migrations WHERE success = 1").fetchone()
    except sqlite3.Error:
        return None
    if row and row[0] is not None and int(row[0]) > KNOWN_CODEX_MIGRATION:
        return int(row[0])
    return None
