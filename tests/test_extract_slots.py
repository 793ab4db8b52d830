"""`memdeck extract` waits for a stage-1 slot instead of skipping (issue 12, item 11).

Real `memdeck` subprocesses against the local OpenAI-compatible server (tests/llm_server.py),
on a Codex home of many eligible sessions and a real `memories_v2_1.sqlite`, in which a fake
"other process" holds live stage-1 leases the way Codex writes them (docs/codex-format.md
"Leases and watermarks"). Every model request the server saw is counted per session.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from llm_server import json_reply
from suite_clock import now

from memdeck.engine import Engine
from memdeck.engine.codex.schema import create_memories_db

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "rollouts" / "cli-preferences.jsonl"
OLD_ID = "01a23054-a1fc-7969-acf0-6947af085e83"
PREFIX = "01a23054-a1fc-7969-acf0-"
OTHER = "codex:0199c0de-other-thread"  # the worker id of the fake other process
# the home has no memories/ folder: memory v2, as Codex 0.169 runs it, so two fields
REPLY = {"rollout_summary": "# Checkout tests\n\n## Task 1: fix rounding, success\n",
         "rollout_slug": "checkout_tests"}
PATH_ID = re.compile(r"rollout_path: \S*-(" + PREFIX + r"[0-9a-f]{12})\.jsonl")
CAP = 8  # memdeck's running cap: Phase1Runner's CONCURRENCY_LIMIT


def session_id(i: int) -> str:
    return str(uuid.UUID(f"{PREFIX}{i:012x}"))


@pytest.fixture
def make_home(tmp_path: Path, llm_server):
    """A v2 home with `n` eligible sessions (copies of a real rollout, new ids, idle 8 h) and
    Codex's pipeline DB, extracting against the test server; returns (home, ids)."""
    def make(n: int, latency: float = 0.2) -> tuple[Path, list[str]]:
        root = tmp_path / "codex-home"
        day = root / "sessions" / "2026" / "12" / "01"
        day.mkdir(parents=True)
        text = FIXTURE.read_text()
        idle = now() - 8 * 3600
        ids = [session_id(i) for i in range(n)]
        for tid in ids:
            p = day / f"rollout-2026-12-01T06-39-42-{tid}.jsonl"
            p.write_text(text.replace(OLD_ID, tid))
            os.utime(p, (idle, idle))
        (root / "config.toml").write_text("[features]\nmemories = true\n")
        create_memories_db(root / "memories_v2_1.sqlite")
        eng = Engine.open(root)
        eng.config_set("memdeck.base_url", llm_server.url)
        eng.config_set("memdeck.max_retries", "0")
        eng.config_set("memdeck.request_timeout", "60")
        assert sorted(s.id for s in eng.sessions() if s.status == "eligible") == ids
        llm_server.latency = latency
        llm_server.handler = lambda body: json_reply(REPLY)
        return root, ids
    return make


def plant_leases(home: Path, n: int, seconds: float, worker: str = OTHER,
                 keys: list[str] | None = None) -> int:
    """`n` stage-1 jobs running under a live lease held by another process, inserted as
    Codex's `try_claim_stage1_job` leaves them. Returns their `lease_until`."""
    until = int(now() + seconds)
    conn = sqlite3.connect(home / "memories_v2_1.sqlite")
    with conn:
        for key in keys or [f"0199c0de-0000-7000-8000-{i:012x}" for i in range(n)]:
            conn.execute(
                "INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, "
                "started_at, lease_until, retry_remaining, input_watermark) VALUES "
                "('memory_stage1', ?, 'running', ?, ?, ?, ?, 3, ?)",
                (key, worker, str(uuid.uuid4()), until - 3600, until, until - 7200))
    conn.close()
    return until


def release_leases(home: Path, worker: str = OTHER) -> None:
    """The other process finishes its jobs (Codex's `mark_stage1_job_succeeded_no_output`)."""
    conn = sqlite3.connect(home / "memories_v2_1.sqlite")
    with conn:
        conn.execute("UPDATE jobs SET status = 'done', lease_until = NULL, finished_at = ?, "
                     "last_success_watermark = input_watermark WHERE worker_id = ?",
                     (int(now()), worker))
    conn.close()


def rows(home: Path, sql: str, *args: object) -> list[tuple]:
    conn = sqlite3.connect(home / "memories_v2_1.sqlite")
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def start_extract(home: Path, *argv: str, wait: float = 120) -> subprocess.Popen:
    env = {**os.environ, "MEMDECK_SLOT_WAIT": str(wait)}
    return subprocess.Popen([sys.executable, "-m", "memdeck.tui.cli", "extract", "--json",
                             "--backend", "openai", "--home", str(home), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def finish(proc: subprocess.Popen) -> tuple[int, dict, str]:
    out, err = proc.communicate(timeout=300)  # a guard against a hang, not a speed limit
    return proc.returncode, json.loads(out), err


def extract(home: Path, *argv: str, wait: float = 120) -> tuple[int, dict, str]:
    return finish(start_extract(home, *argv, wait=wait))


def requested(llm_server) -> list[str]:
    """The session of every model request the server received, in order."""
    out = []
    for r in llm_server.chat_requests():
        user = next(m["content"] for m in r.body["messages"] if m["role"] == "user")
        out.append(PATH_ID.search(user).group(1))
    return out


def outcomes(report: dict, outcome: str) -> set[str]:
    return {r["thread_id"] for r in report["results"] if r["outcome"] == outcome}


def test_one_live_codex_lease_no_longer_stops_the_run(make_home, llm_server) -> None:
    home, ids = make_home(32)
    until = plant_leases(home, 1, 3600)
    code, report, err = extract(home)
    assert code == 0, err
    assert outcomes(report, "extracted") == set(ids) and report["remaining"] == 0
    assert sorted(requested(llm_server)) == sorted(ids)  # each session asked once
    # the other process's slot was never taken: at most 7 of memdeck's 8 at a time
    assert 1 < llm_server.max_in_flight <= CAP - 1
    assert rows(home, "SELECT status, worker_id, lease_until FROM jobs WHERE job_key LIKE "
                      "'0199c0de%'") == [("running", OTHER, until)]


def test_all_slots_held_then_the_leases_expire(make_home, llm_server) -> None:
    home, ids = make_home(32, latency=0.05)
    stamps: list[float] = []
    llm_server.handler = lambda body: (stamps.append(now()), json_reply(REPLY))[1]
    until = plant_leases(home, CAP, 3)
    code, report, err = extract(home)
    assert code == 0, err
    assert outcomes(report, "extracted") == set(ids) and report["remaining"] == 0
    assert sorted(requested(llm_server)) == sorted(ids)
    assert min(stamps) >= until  # no model call while the other process held every slot
    # an expired lease is left as it was: only its owner finishes its job
    assert rows(home, "SELECT COUNT(*) FROM jobs WHERE worker_id = ? AND status = 'running' "
                      "AND lease_until = ?", OTHER, until) == [(CAP,)]


OTHER_PROCESS = """
import sqlite3, sys, time, uuid
from memdeck.engine.clock import SystemClock
now = SystemClock().now  # the suite's clock, moved with MEMDECK_CLOCK_SHIFT
db, n, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
conn = sqlite3.connect(db)
with conn:
    for i in range(n):
        conn.execute("INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, "
                     "started_at, lease_until, retry_remaining, input_watermark) VALUES "
                     "('memory_stage1', ?, 'running', ?, ?, ?, ?, 3, 1)",
                     (f"0199c0de-other-{i}", sys.argv[4], str(uuid.uuid4()),
                      int(now()), int(now()) + 3600))
print("held", flush=True)
time.sleep(hold)
with conn:
    released = now()
    conn.execute("UPDATE jobs SET status = 'done', lease_until = NULL, finished_at = ?, "
                 "last_success_watermark = input_watermark WHERE worker_id = ?",
                 (int(released), sys.argv[4]))
print(released, flush=True)
"""


def test_all_slots_held_by_another_process_until_it_releases_them(make_home,
                                                                  llm_server) -> None:
    home, ids = make_home(32, latency=0.05)
    stamps: list[float] = []
    llm_server.handler = lambda body: (stamps.append(now()), json_reply(REPLY))[1]
    other = subprocess.Popen([sys.executable, "-c", OTHER_PROCESS,
                              str(home / "memories_v2_1.sqlite"), str(CAP), "3", OTHER],
                             stdout=subprocess.PIPE, text=True)
    assert other.stdout.readline().strip() == "held"
    proc = start_extract(home)
    released = float(other.stdout.readline())
    assert other.wait(30) == 0
    code, report, err = finish(proc)
    assert code == 0, err
    assert outcomes(report, "extracted") == set(ids) and report["remaining"] == 0
    assert sorted(requested(llm_server)) == sorted(ids)
    assert min(stamps) >= released  # it waited for the release, then did everything


def test_slots_held_too_long_leave_an_exact_count_and_exit_1(make_home, llm_server) -> None:
    home, ids = make_home(32)
    until = plant_leases(home, CAP, 3600)
    code, report, err = extract(home, wait=1)
    assert code == 1
    ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(until))
    why = (f"no extraction slot came free in 1 s: all {CAP} extractions that may run at once "
           f"are held by other processes ({OTHER} ×{CAP}), leases ending by {ends}")
    assert err.strip().splitlines()[-1] == (
        f"memdeck: 32 sessions remain: {why}; run `memdeck extract` again once those "
        "leases end")
    assert report["remaining"] == 32 and report["remaining_reason"] in err
    assert {r["thread_id"] for r in report["results"] if r["remains"]} == set(ids)
    assert all(r["outcome"] == "skipped" and r["detail"] == why for r in report["results"])
    assert llm_server.chat_requests() == []
    # waiting burned nothing: no job of memdeck's, no retry spent, no error recorded
    assert rows(home, "SELECT COUNT(*) FROM jobs WHERE worker_id != ?", OTHER) == [(0,)]

    release_leases(home)
    code, report, err = extract(home)
    assert code == 0, err
    assert outcomes(report, "extracted") == set(ids)
    assert sorted(requested(llm_server)) == sorted(ids)


def test_a_named_session_leased_elsewhere_remains_with_its_holder(make_home,
                                                                 llm_server) -> None:
    home, ids = make_home(3)
    until = plant_leases(home, 1, 3600, keys=[ids[0]])
    code, report, err = extract(home, ids[0], ids[1], wait=1)
    assert code == 1
    held = next(r for r in report["results"] if r["thread_id"] == ids[0])
    ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(until))
    assert held["remains"] and held["detail"] == (
        f"another process ({OTHER}) holds this session's lease until {ends}; nothing came "
        "free in 1 s")
    assert outcomes(report, "extracted") == {ids[1]} and report["remaining"] == 1
    assert err.strip().splitlines()[-1].startswith("memdeck: 1 session remains: ")
    assert requested(llm_server) == [ids[1]]
    assert rows(home, "SELECT status, worker_id, lease_until FROM jobs WHERE job_key = ?",
                ids[0]) == [("running", OTHER, until)]


def test_limit_says_how_many_remain(make_home, llm_server) -> None:
    """What --limit leaves is what the user asked for: counted and said, exit 0."""
    home, ids = make_home(32, latency=0.0)
    code, report, err = extract(home, "--limit", "5")
    assert code == 0
    assert len(outcomes(report, "extracted")) == 5 and report["remaining"] == 27
    assert err.strip().splitlines()[-1] == (
        "memdeck: 27 sessions remain: --limit 5; run `memdeck extract` again")
    assert len(requested(llm_server)) == 5
    code, report, err = extract(home)
    assert code == 0, err
    assert len(outcomes(report, "extracted")) == 27 and report["remaining"] == 0


def test_two_extracts_at_once_do_every_session_exactly_once(make_home, llm_server) -> None:
    home, ids = make_home(42, latency=0.3)
    until = plant_leases(home, 1, 3600)
    procs = [start_extract(home), start_extract(home)]
    done = [finish(p) for p in procs]
    for code, report, err in done:
        assert code == 0, err
        assert report["remaining"] == 0
    a, b = (outcomes(report, "extracted") for _, report, _ in done)
    assert a | b == set(ids) and not a & b
    asked = requested(llm_server)
    assert len(asked) == 42 and sorted(asked) == sorted(ids)  # no doubled model call
    # one cap over both processes and the other one: never more than 7 of theirs at once
    assert llm_server.max_in_flight <= CAP - 1
    assert rows(home, "SELECT COUNT(*) FROM stage1_outputs") == [(42,)]
    assert rows(home, "SELECT status, lease_until FROM jobs WHERE worker_id = ?", OTHER) == [
        ("running", until)]


def test_a_run_that_waits_says_what_it_waits_for(make_home, llm_server) -> None:
    """Waiting for a slot must not look like a hang: the caller is told who holds the slots
    and until when (the CLI prints it on a terminal)."""
    home, ids = make_home(4, latency=0.0)
    until = plant_leases(home, CAP, 3600)
    told: list[str] = []
    report = Engine.open(home).extract(backend="openai", slot_wait=1, on_wait=told.append)
    ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(until))
    assert told and told[0] == (
        f"waiting for an extraction slot: all {CAP} extraction slots are held by other "
        f"processes ({OTHER} ×{CAP}), leases ending by {ends}; giving up after 1 s with none "
        "come free")
    assert report.remaining == 4 and llm_server.chat_requests() == []


def test_a_slot_wait_that_is_not_a_number_falls_back_to_the_default(monkeypatch) -> None:
    from memdeck.engine.phase1.slots import SLOT_WAIT_SECONDS, slot_wait_seconds

    for bad in ("soon", "", "nan?", "1e999x"):
        monkeypatch.setenv("MEMDECK_SLOT_WAIT", bad)
        assert slot_wait_seconds(None) == SLOT_WAIT_SECONDS
    monkeypatch.setenv("MEMDECK_SLOT_WAIT", "-5")
    assert slot_wait_seconds(None) == 0.0
