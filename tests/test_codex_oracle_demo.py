"""The demo home is a home the real Codex 0.171 opens as its own.

`codex exec` on the demo home (run with RUST_LOG=warn, where Codex reports database failures)
prints no state-DB or memories-DB warning, keeps Codex's migration records and the demo's
thread index as they are (the `polluted` thread stays polluted) and indexes its own new
session; with memories on, Codex's own phase 1 claims exactly the sessions memdeck shows as
`eligible` or `too_old_to_keep`, its phase 1 and phase 2 jobs end `done`, and its phase 2
selects none of the `too_old_to_keep` rows. The last tests break the databases
the way memdeck used to build them and check that the same run then shows the failure: the
assertions above can fail.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from codex_oracle.fake_responses import FakeResponses
from codex_oracle.runner import db_failures, jobs, pipeline_finished, run_exec

from memdeck.engine import Engine, demo_home
from memdeck.engine.codex.schema import codex_schema


def thread_rows(home: Path) -> dict[str, dict]:
    conn = sqlite3.connect(f"file:{home / 'state_5.sqlite'}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return {r["id"]: dict(r) for r in conn.execute("SELECT * FROM threads")}
    finally:
        conn.close()


def migrations(db: Path) -> list[tuple[int, str]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [(v, c.hex()) for v, c in conn.execute(
            "SELECT version, checksum FROM _sqlx_migrations ORDER BY version")]
    finally:
        conn.close()


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return demo_home(tmp_path / "demo")


def test_codex_opens_the_demo_home_and_indexes_its_sessions(
        codex_bin: Path, demo: Path, fake_responses: FakeResponses) -> None:
    before = thread_rows(demo)
    rollouts = {p.name for p in demo.rglob("rollout-*.jsonl*")}

    rc, out, err = run_exec(demo, fake_responses, "hello demo")

    assert rc == 0, err[-2000:]
    assert "fake reply" in out
    assert db_failures(err) == []
    want = [(m["version"], m["checksum"]) for m in codex_schema("state_5")["migrations"]]
    assert migrations(demo / "state_5.sqlite") == want
    assert migrations(demo / "memories_1.sqlite") == [
        (m["version"], m["checksum"]) for m in codex_schema("memories_1")["migrations"]]
    after = thread_rows(demo)
    # every readable demo session is in Codex's index, as the demo wrote it
    assert len(before) == len(rollouts) - 1  # the all-zero rollout is unreadable, unindexed
    for tid, row in before.items():
        assert after[tid]["rollout_path"] == row["rollout_path"]
        assert after[tid]["memory_mode"] == row["memory_mode"]
        assert after[tid]["source"] == row["source"]
    assert {r["memory_mode"] for r in before.values()} >= {"polluted", "disabled", "enabled"}
    # and Codex's state runtime is on: it indexed its own new session
    new = [r for tid, r in after.items() if tid not in before]
    assert len(new) == 1 and new[0]["source"] == "exec"
    assert Path(new[0]["rollout_path"]).exists()


def test_codex_phase1_on_the_demo_home_claims_what_memdeck_calls_eligible(
        codex_bin: Path, demo: Path, fake_responses: FakeResponses) -> None:
    sessions = Engine.open(demo).sessions()
    # too_old_to_keep is extractable too (Codex claims it), but phase 2 never selects it
    too_old = {s.id for s in sessions if s.status == "too_old_to_keep"}
    eligible = {s.id for s in sessions if s.status == "eligible"} | too_old
    assert eligible and too_old

    # the demo holds one running stage-1 job; the default cap (2 running) would claim one
    rc, _out, err = run_exec(demo, fake_responses, "hello demo", keep_open=8.0,
                             until=pipeline_finished(demo, "v1"),
                             extra_config={"memories.max_rollouts_per_startup": 8})

    assert rc == 0, err[-2000:]
    assert db_failures(err) == []
    assert len(fake_responses.phase1()) == len(eligible)
    conn = sqlite3.connect(f"file:{demo / 'memories_1.sqlite'}?mode=ro", uri=True)
    claimed = {r[0] for r in conn.execute(
        "SELECT thread_id FROM stage1_outputs WHERE rollout_summary = 'fake summary'")}
    conn.close()
    assert claimed == eligible
    by_key = {(j["kind"], j["job_key"]): j for j in jobs(demo, "v1")}
    for tid in eligible:
        job = by_key[("memory_stage1", tid)]
        assert (job["status"], job["last_error"]) == ("done", None)
    assert fake_responses.phase2(), "Codex's phase 2 did not start"
    glob = by_key[("memory_consolidate_global", "global")]
    assert (glob["status"], glob["last_error"]) == ("done", None)
    conn = sqlite3.connect(f"file:{demo / 'memories_1.sqlite'}?mode=ro", uri=True)
    selected = {r[0] for r in conn.execute(
        "SELECT thread_id FROM stage1_outputs WHERE selected_for_phase2 = 1")}
    conn.close()
    assert selected >= eligible - too_old and not selected & too_old


@pytest.mark.parametrize("breakage, message", [
    ("state_5 without migration rows",
     "failed to migrate state DB at {home}/state_5.sqlite: while executing migration 1: "
     "error returned from database: (code: 1) table threads already exists"),
    ("memories_1 with another checksum",
     "failed to migrate memories DB at {home}/memories_1.sqlite: migration 1 was previously "
     "applied but has been modified"),
], ids=["state_5", "memories_1"])
def test_a_database_codex_refuses_shows_on_stderr_and_stops_its_index(
        codex_bin: Path, demo: Path, fake_responses: FakeResponses, breakage: str,
        message: str) -> None:
    db = demo / f"{breakage.split()[0]}.sqlite"
    conn = sqlite3.connect(db)
    with conn:  # what memdeck's hand-made DDL used to leave
        if breakage.startswith("state_5"):
            conn.execute("DROP TABLE _sqlx_migrations")
        else:
            conn.execute("UPDATE _sqlx_migrations SET checksum = ? WHERE version = 1",
                         (bytes(48),))
    conn.close()
    before = thread_rows(demo)

    rc, _out, err = run_exec(demo, fake_responses, "hello demo")

    assert rc == 0, err[-2000:]
    assert message.format(home=demo) in err
    assert db_failures(err)
    assert thread_rows(demo).keys() == before.keys()  # the runtime is off: no new row
    assert fake_responses.phase1() == []
