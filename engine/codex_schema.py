"""Codex's table definitions, reconstructed from codex-format §2.1–2.2.

memdeck never runs this DDL on a database Codex created. It is used to create memdeck's own
pipeline database when Codex has none yet (same two tables, so rows copy across unchanged),
and to build the demo home and test homes that look exactly like Codex's.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

MEMORIES_0001 = """
CREATE TABLE stage1_outputs (
    thread_id TEXT PRIMARY KEY,
    source_updated_at INTEGER NOT NULL,
    raw_memory TEXT NOT NULL,
    rollout_summary TEXT NOT NULL,
    rollout_slug TEXT,
    generated_at INTEGER NOT NULL,
    usage_count INTEGER,
    last_usage INTEGER,
    selected_for_phase2 INTEGER NOT NULL DEFAULT 0,
    selected_for_phase2_source_updated_at INTEGER
);
CREATE INDEX idx_stage1_outputs_source_updated_at
    ON stage1_outputs(source_updated_at DESC, thread_id DESC);
CREATE TABLE jobs (
    kind TEXT NOT NULL,
    job_key TEXT NOT NULL,
    status TEXT NOT NULL,
    worker_id TEXT,
    ownership_token TEXT,
    started_at INTEGER,
    finished_at INTEGER,
    lease_until INTEGER,
    retry_at INTEGER,
    retry_remaining INTEGER NOT NULL,
    last_error TEXT,
    input_watermark INTEGER,
    last_success_watermark INTEGER,
    PRIMARY KEY (kind, job_key)
);
CREATE INDEX idx_jobs_kind_status_retry_lease ON jobs(kind, status, retry_at, lease_until);
"""

SQLX_MIGRATIONS = """
CREATE TABLE IF NOT EXISTS _sqlx_migrations (
    version BIGINT PRIMARY KEY,
    description TEXT NOT NULL,
    installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    success BOOLEAN NOT NULL,
    checksum BLOB NOT NULL,
    execution_time BIGINT NOT NULL
);
"""

THREADS_COLUMNS = (
    "id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, created_at INTEGER NOT NULL, "
    "updated_at INTEGER NOT NULL, source TEXT NOT NULL, model_provider TEXT NOT NULL, "
    "cwd TEXT NOT NULL, title TEXT NOT NULL, sandbox_policy TEXT NOT NULL, "
    "approval_mode TEXT NOT NULL, tokens_used INTEGER NOT NULL DEFAULT 0, "
    "has_user_event INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0, "
    "archived_at INTEGER, git_sha TEXT, git_branch TEXT, git_origin_url TEXT, "
    "cli_version TEXT NOT NULL DEFAULT '', first_user_message TEXT NOT NULL DEFAULT '', "
    "agent_nickname TEXT, agent_role TEXT, memory_mode TEXT NOT NULL DEFAULT 'enabled', "
    "model TEXT, reasoning_effort TEXT, agent_path TEXT, created_at_ms INTEGER, "
    "updated_at_ms INTEGER, thread_source TEXT, preview TEXT NOT NULL DEFAULT '', "
    "recency_at INTEGER NOT NULL DEFAULT 0, recency_at_ms INTEGER NOT NULL DEFAULT 0, "
    "history_mode TEXT NOT NULL DEFAULT 'legacy', name TEXT, "
    "is_pinned INTEGER NOT NULL DEFAULT 0, thread_section_id TEXT, section_position INTEGER, "
    "section_entered_at_ms INTEGER, project_id TEXT"
)


def create_memories_db(path: Path, as_codex: bool = True) -> None:
    """A pipeline DB with Codex's schema; `as_codex` also records sqlx's migration row."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(MEMORIES_0001)
        if as_codex:
            conn.executescript(SQLX_MIGRATIONS)
            conn.execute(
                "INSERT INTO _sqlx_migrations (version, description, success, checksum, "
                "execution_time) VALUES (1, 'memories', 1, ?, 1000000)",
                (hashlib.sha384(MEMORIES_0001.encode()).digest(),),
            )
        conn.commit()
    finally:
        conn.close()


def create_state_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"CREATE TABLE threads ({THREADS_COLUMNS})")
        conn.commit()
    finally:
        conn.close()
