"""engine/codex/schema.py builds Codex 0.169's databases exactly, and Codex takes them as its own.

Offline: a DB built by `create_state_db` / `create_memories_db` has the same pragmas, the same
`sqlite_master` entries in the same order, the same seed rows and the same `_sqlx_migrations`
versions and checksums as the ones the real binary created (engine/codex/schema_0171/, dumped
by tests/codex_oracle/capture_schema.py); memdeck's own copy (`as_codex=False`) has no
migration table, so Codex can never mistake it for its own.
With the binary: a V2 home whose three DBs memdeck built gets no DB warning from `codex exec`,
Codex leaves the migration rows as they are (it re-ran nothing) and indexes its new session.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from codex_oracle.capture_schema import dump_db
from codex_oracle.fake_responses import FakeResponses
from codex_oracle.runner import db_failures, run_exec, write_config

from memdeck.engine.codex.schema import (
    CODEX_SCHEMA_VERSION,
    codex_schema,
    create_memories_db,
    create_state_db,
    mark_backfill_complete,
)

BUILDERS = {"state_5": create_state_db, "memories_1": create_memories_db,
            "memories_v2_1": create_memories_db}


def _comparable(dump: dict) -> dict:
    return {"pragmas": dump["pragmas"], "schema": dump["schema"], "seed_rows": dump["seed_rows"],
            "migrations": [(m["version"], m["description"], m["success"], m["checksum"])
                           for m in dump["migrations"]]}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_built_database_equals_the_one_codex_created(tmp_path: Path, name: str) -> None:
    want = codex_schema(name)
    assert want["codex_version"] == CODEX_SCHEMA_VERSION
    db = tmp_path / f"{name}.sqlite"
    BUILDERS[name](db)
    assert _comparable(dump_db(db)) == _comparable(want)


def test_the_captured_schemas_are_codex_0171s() -> None:
    state = codex_schema("state_5")
    assert len(state["migrations"]) == 64  # 0.171 added 63 session model ids, 64 listing indexes
    assert [m["description"] for m in state["migrations"][62:]] == [
        "session model ids", "thread listing indexes"]
    assert state["migrations"][0]["description"] == "threads"
    assert {"threads", "backfill_state", "thread_sections"} <= {
        o["name"] for o in state["schema"] if o["type"] == "table"}
    # V1 and V2 pipeline DBs share one schema and one set of migrations
    v1, v2 = codex_schema("memories_1"), codex_schema("memories_v2_1")
    assert v1["schema"] == v2["schema"]
    assert [m["checksum"] for m in v1["migrations"]] == [m["checksum"] for m in v2["migrations"]]


def test_memdecks_own_pipeline_db_has_no_codex_migration_rows(tmp_path: Path) -> None:
    db = tmp_path / "memories.sqlite"
    create_memories_db(db, as_codex=False)
    tables = {o["name"] for o in dump_db(db)["schema"] if o["type"] == "table"}
    assert "_sqlx_migrations" not in tables
    assert {"stage1_outputs", "jobs", "consolidation_progress"} <= tables


def test_codex_takes_a_v2_home_built_by_memdeck_as_its_own(
        tmp_path: Path, codex_bin: Path, fake_responses: FakeResponses) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write_config(home, memories=True)  # a fresh home with no memories/: V2
    for name, build in BUILDERS.items():
        build(home / f"{name}.sqlite")
    mark_backfill_complete(home / "state_5.sqlite", None, 0)

    rc, _out, err = run_exec(home, fake_responses, "hello")

    assert rc == 0, err[-2000:]
    assert db_failures(err) == []
    for name in BUILDERS:
        got = dump_db(home / f"{name}.sqlite")["migrations"]
        assert [(m["version"], m["checksum"]) for m in got] == [
            (m["version"], m["checksum"]) for m in codex_schema(name)["migrations"]]
    conn = sqlite3.connect(home / "state_5.sqlite")
    assert conn.execute("SELECT source FROM threads").fetchall() == [("exec",)]
    conn.close()
    assert not (home / "memories").exists()
