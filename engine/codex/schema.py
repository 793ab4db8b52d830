"""Codex's own databases, rebuilt exactly as Codex 0.171.0 creates them.

The schemas are not written by hand: `engine/codex/schema_0171/*.json` were dumped from
databases the real binary created (tests/codex_oracle/capture_schema.py regenerates them):
every `sqlite_master` entry in Codex's creation order, the pragmas, every `_sqlx_migrations`
row with Codex's checksums, and the rows the migrations seed. Codex applies its migrations
with sqlx, which refuses a database whose tables exist without those rows ("table threads
already exists") or whose checksums differ ("migration 1 was previously applied but has been
modified"), and then disables its whole state runtime. A database built here carries the
same rows, so Codex opens it as its own.

memdeck never runs this on a database Codex created. It creates memdeck's own pipeline
database when Codex has none yet (`as_codex=False`: same tables, no migration rows, so Codex
never mistakes it for its own), and builds the demo home and test homes.
"""

from __future__ import annotations

import json
import sqlite3
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

CODEX_SCHEMA_VERSION = "0.171.0"
SCHEMA_DIR = "schema_0171"
STATE_DB = "state_5"
MEMORIES_V1_DB = "memories_1"
MEMORIES_V2_DB = "memories_v2_1"
_SEQUENCE_MAKER = "_memdeck_sqlite_sequence_maker"


@cache
def codex_schema(name: str) -> dict[str, Any]:
    """The captured dump of one Codex DB: "state_5", "memories_1" or "memories_v2_1"."""
    text = (resources.files(__package__) / SCHEMA_DIR / f"{name}.json").read_text("utf-8")
    return json.loads(text)


def migration_checksums(name: str) -> dict[int, bytes]:
    """{version: sha384 checksum} of Codex's migrations for one DB."""
    return {m["version"]: bytes.fromhex(m["checksum"])
            for m in codex_schema(name)["migrations"]}


def _build(path: Path, name: str, *, migrations: bool) -> None:
    spec = codex_schema(name)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        pragmas = spec["pragmas"]
        # auto_vacuum and page_size only take effect before the first table exists
        conn.execute(f"PRAGMA page_size = {int(pragmas['page_size'])}")
        conn.execute(f"PRAGMA auto_vacuum = {int(pragmas['auto_vacuum'])}")
        conn.execute(f"PRAGMA journal_mode = {pragmas['journal_mode']}")
        conn.execute("BEGIN IMMEDIATE")
        for obj in spec["schema"]:
            if obj["name"] == "sqlite_sequence":
                # SQLite makes it for the first AUTOINCREMENT table; Codex's was dropped later
                conn.execute(f"CREATE TABLE {_SEQUENCE_MAKER} "
                             "(id INTEGER PRIMARY KEY AUTOINCREMENT)")
                conn.execute(f"DROP TABLE {_SEQUENCE_MAKER}")
            elif obj["sql"] is None:  # sqlite_autoindex_*: made with its table
                continue
            elif obj["name"] == "_sqlx_migrations" and not migrations:
                continue
            else:
                conn.execute(obj["sql"])
        for table, rows in spec.get("seed_rows", {}).items():
            for row in rows:
                conn.execute(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(row))})', row)
        if migrations:
            conn.executemany(
                "INSERT INTO _sqlx_migrations (version, description, success, checksum, "
                "execution_time) VALUES (?, ?, ?, ?, ?)",
                [(m["version"], m["description"], m["success"], bytes.fromhex(m["checksum"]),
                  m["execution_time"]) for m in spec["migrations"]])
        conn.execute("COMMIT")
    finally:
        conn.close()


def create_memories_db(path: Path, as_codex: bool = True) -> None:
    """A pipeline DB (`memories_1.sqlite` or `memories_v2_1.sqlite`: one schema) as Codex
    0.171 creates it; `as_codex=False` leaves out `_sqlx_migrations` (memdeck's own copy)."""
    _build(Path(path), MEMORIES_V1_DB, migrations=as_codex)


def create_state_db(path: Path) -> None:
    """`state_5.sqlite` as Codex 0.171 creates it, with all its migration rows."""
    _build(Path(path), STATE_DB, migrations=True)


def mark_backfill_complete(path: Path, last_watermark: str | None, at: int) -> None:
    """Record in `state_5.sqlite` that Codex's one-time rollout backfill has run.

    On its first start with an empty `backfill_state`, Codex re-indexes every rollout and
    upserts each thread row from the file, which resets state kept only in the DB (a thread
    `polluted` by web search goes back to `enabled`). A home whose rows were written by a
    Codex that has been running for a while has this row; `last_watermark` is the newest
    rollout's path relative to the home (`sessions/YYYY/MM/DD/rollout-….jsonl`), as Codex
    leaves it.
    """
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute("INSERT OR REPLACE INTO backfill_state (id, status, last_watermark, "
                         "last_success_at, updated_at) VALUES (1, 'complete', ?, ?, ?)",
                         (last_watermark, at, at))
    finally:
        conn.close()
