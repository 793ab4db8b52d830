"""Codex's job, lease, retry and watermark rules on real pipeline databases
(docs/codex-format.md "Leases and watermarks", "Pruning")."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

import memdeck.engine.store as engine_store
from memdeck.engine.codex.home import CodexHome
from memdeck.engine.codex.pipeline_db import PipelineDB, PipelineDBError, memdeck_worker_id
from memdeck.engine.codex.schema import create_memories_db

T = "01a23054-a1fc-7969-acf0-6947af085e83"
NOW = 1_800_000_000


@pytest.fixture
def codex_db(home) -> PipelineDB:
    home.v1()
    create_memories_db(home.root / "memories_1.sqlite")
    db = PipelineDB.open(CodexHome(home.root))
    yield db
    db.close()


def job(db: PipelineDB, key: str = T) -> sqlite3.Row:
    return db.conn.execute("SELECT * FROM jobs WHERE job_key = ?", (key,)).fetchone()


def test_claim_then_success_then_up_to_date(codex_db: PipelineDB) -> None:
    c = codex_db.claim_stage1(T, 100, NOW, 8).claim
    assert c is not None
    j = job(codex_db)
    assert (j["status"], j["input_watermark"], j["lease_until"]) == ("running", 100, NOW + 3600)
    assert j["worker_id"] == memdeck_worker_id()
    assert codex_db.claim_stage1(T, 100, NOW, 8).skipped == "running"
    assert codex_db.stage1_succeeded(c, NOW + 5, "raw", "summary", "slug")
    j = job(codex_db)
    assert (j["status"], j["last_success_watermark"], j["lease_until"]) == ("done", 100, None)
    out = codex_db.conn.execute("SELECT * FROM stage1_outputs").fetchone()
    assert (out["source_updated_at"], out["raw_memory"], out["selected_for_phase2"]) == (
        100, "raw", 0)
    g = job(codex_db, "global")
    assert (g["kind"], g["status"], g["input_watermark"]) == (
        "memory_consolidate_global", "pending", 100)
    assert codex_db.claim_stage1(T, 100, NOW + 10, 8).skipped == "up_to_date"
    again = codex_db.claim_stage1(T, 200, NOW + 10, 8).claim
    assert again is not None and job(codex_db)["retry_remaining"] == 3


def test_wrong_token_writes_nothing(codex_db: PipelineDB) -> None:
    c = codex_db.claim_stage1(T, 100, NOW, 8).claim
    forged = type(c)(c.thread_id, "not-the-token", c.watermark)
    assert not codex_db.stage1_succeeded(forged, NOW, "raw", "s", None)
    assert not codex_db.stage1_failed(forged, NOW, "x")
    assert codex_db.conn.execute("SELECT COUNT(*) FROM stage1_outputs").fetchone()[0] == 0
    assert job(codex_db)["status"] == "running"


def test_failure_backoff_and_exhaustion(codex_db: PipelineDB) -> None:
    now = NOW
    for left in (2, 1, 0):
        c = codex_db.claim_stage1(T, 100, now, 8).claim
        assert c is not None
        assert codex_db.stage1_failed(c, now, "model endpoint timed out")
        j = job(codex_db)
        assert (j["status"], j["retry_remaining"], j["retry_at"]) == ("error", left, now + 3600)
        assert codex_db.claim_stage1(T, 100, now + 60, 8).skipped == "retry_backoff"
        now += 3601
    assert codex_db.claim_stage1(T, 100, now, 8).skipped == "retry_exhausted"
    # the session changed: retries are back
    assert codex_db.claim_stage1(T, 101, now, 8).claim is not None
    assert job(codex_db)["retry_remaining"] == 3


def test_leases_of_others_are_respected_until_they_expire(codex_db: PipelineDB) -> None:
    codex_db.conn.execute(
        "INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, lease_until, "
        "retry_remaining, input_watermark) VALUES ('memory_stage1', ?, 'running', "
        "'0199aaaa-codex-thread', 'tok', ?, 3, 50)", (T, NOW + 100))
    assert codex_db.claim_stage1(T, 100, NOW, 8).skipped == "running"
    assert codex_db.claim_stage1(T, 100, NOW + 101, 8).claim is not None


def test_a_dead_memdeck_process_lease_is_taken_back(codex_db: PipelineDB) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    worker = memdeck_worker_id().rsplit(":", 1)[0] + f":{dead}"
    codex_db.conn.execute(
        "INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, lease_until, "
        "retry_remaining, input_watermark) VALUES ('memory_stage1', ?, 'running', ?, 'tok', "
        "?, 3, 50)", (T, worker, NOW + 3000))
    assert codex_db.claim_stage1(T, 100, NOW, 8).claim is not None


def test_running_cap_counts_other_live_jobs(codex_db: PipelineDB) -> None:
    assert codex_db.claim_stage1("other-thread", 100, NOW, 8).claim is not None
    assert codex_db.claim_stage1(T, 100, NOW, 1).skipped == "cap"
    assert codex_db.claim_stage1(T, 100, NOW, 2).claim is not None


def test_no_output_deletes_the_old_row_and_enqueues_only_then(codex_db: PipelineDB) -> None:
    c = codex_db.claim_stage1(T, 100, NOW, 8).claim
    assert codex_db.stage1_no_output(c, NOW)
    assert job(codex_db, "global") is None  # nothing was deleted: no phase 2 needed
    c = codex_db.claim_stage1(T, 200, NOW, 8).claim
    codex_db.stage1_succeeded(c, NOW, "raw", "s", None)
    c = codex_db.claim_stage1(T, 300, NOW, 8).claim
    assert codex_db.stage1_no_output(c, NOW)
    assert codex_db.conn.execute("SELECT COUNT(*) FROM stage1_outputs").fetchone()[0] == 0
    assert job(codex_db)["last_success_watermark"] == 300


def test_global_enqueue_rules(codex_db: PipelineDB) -> None:
    codex_db.enqueue_global(500, NOW)
    codex_db.enqueue_global(400, NOW)  # not greater: old + 1
    assert job(codex_db, "global")["input_watermark"] == 501
    codex_db.conn.execute("UPDATE jobs SET status = 'running', retry_remaining = 7")
    codex_db.enqueue_global(900, NOW)
    g = job(codex_db, "global")
    assert (g["status"], g["retry_remaining"], g["input_watermark"]) == ("running", 7, 900)


def test_prune_keeps_selected_and_recently_used(codex_db: PipelineDB) -> None:
    day = 86400
    rows = [("old", NOW - 40 * day, None, 0), ("old-selected", NOW - 40 * day, None, 1),
            ("old-but-cited", NOW - 40 * day, NOW - 2 * day, 0), ("new", NOW - day, None, 0)]
    for tid, sua, last, sel in rows:
        codex_db.conn.execute(
            "INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, "
            "rollout_summary, generated_at, last_usage, selected_for_phase2) "
            "VALUES (?, ?, 'r', 's', ?, ?, ?)", (tid, sua, sua, last, sel))
    assert codex_db.prune(30, NOW) == 1
    left = {r[0] for r in codex_db.conn.execute("SELECT thread_id FROM stage1_outputs")}
    assert left == {"old-selected", "old-but-cited", "new"}


def test_codex_db_gets_no_ddl(codex_db: PipelineDB, home) -> None:
    before = codex_db.conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    c = codex_db.claim_stage1(T, 100, NOW, 8).claim
    codex_db.stage1_succeeded(c, NOW, "raw", "s", None)
    codex_db.prune(30, NOW)
    after = codex_db.conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    assert [tuple(r) for r in before] == [tuple(r) for r in after]
    assert not (home.root / "memdeck" / "memories.sqlite").exists()


def test_unknown_codex_schema_is_refused(home) -> None:
    home.v1()
    conn = sqlite3.connect(home.root / "memories_1.sqlite")
    conn.execute("CREATE TABLE stage1_outputs (thread_id TEXT PRIMARY KEY)")
    conn.execute("CREATE TABLE jobs (kind TEXT)")
    conn.close()
    with pytest.raises(PipelineDBError, match="unknown schema"):
        PipelineDB.open(CodexHome(home.root))


def test_own_db_is_created_then_adopted_by_codex(home) -> None:
    h = CodexHome(home.v1().root)
    db = PipelineDB.open(h)
    assert not db.is_codex and db.path == home.root / "memdeck" / "memories.sqlite"
    c = db.claim_stage1(T, 100, NOW, 8).claim
    db.stage1_succeeded(c, NOW, "raw from memdeck", "s", None)
    db.close()
    create_memories_db(home.root / "memories_1.sqlite")  # Codex starts using memories
    db = PipelineDB.open(h)
    assert db.is_codex
    out = db.conn.execute("SELECT raw_memory FROM stage1_outputs").fetchone()
    assert out[0] == "raw from memdeck"
    assert job(db)["status"] == "done"
    db.close()
    assert not (home.root / "memdeck" / "memories.sqlite").exists()
    assert (home.root / "memdeck" / "memories.sqlite.adopted").exists()


def test_locked_db_is_one_clear_error(codex_db: PipelineDB, home, monkeypatch) -> None:
    monkeypatch.setattr(engine_store, "BUSY_TIMEOUT_MS", 150)
    other = sqlite3.connect(home.root / "memories_1.sqlite", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        db = PipelineDB.open(CodexHome(home.root))
        with pytest.raises(PipelineDBError, match="locked") as e:
            db.claim_stage1(T, 100, NOW, 8)
        assert "\n" not in str(e.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert os.path.exists(home.root / "memories_1.sqlite")
