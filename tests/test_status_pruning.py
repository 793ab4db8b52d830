"""Statuses that tell the truth about pruning and age (issue 9, requirement 4).

Real homes (HomeBuilder), real extracts with the offline backend, and the status and reason a
user reads in `memdeck sessions`, `--json` and `memdeck show`: a raw memory pruned by the next
extract reads `pruned` with the rule and the date, never "nothing durable"; a session phase 2
would never take because of its age says so before anyone extracts it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from suite_clock import now

from memdeck.engine import Engine
from memdeck.engine.clock import FixedClock
from memdeck.engine.codex.home import CodexHome
from memdeck.engine.codex.pipeline_db import PipelineDB
from memdeck.engine.codex.schema import create_memories_db
from memdeck.engine.index.status import local_date
from memdeck.tui.cli import main

CLI_ID = "01a23054-a1fc-7969-acf0-6947af085e83"  # cli-preferences.jsonl: yields a raw memory
DAY = 86400


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def listed(capsys, home: Path) -> dict[str, dict]:
    code, out, _ = run(capsys, "sessions", "--json", "--home", str(home))
    assert code == 0
    return {d["id"]: d for d in json.loads(out)}


def codex_db(home) -> Path:
    """Codex's pipeline DB, as a Codex that ran memories leaves it (v1)."""
    path = home.root / "memories_1.sqlite"
    create_memories_db(path)
    return path


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_too_old_to_keep_is_said_before_extracting_and_pruned_after(
        capsys, home, version: str) -> None:
    """max_rollout_age_days = 60 lets phase 1 take a session idle 40 days; phase 2 takes only
    memories of the last 30 (max_unused_days): the status says so first, the raw memory an
    extract made reads "never to be consolidated", and the next extract prunes it."""
    if version == "v1":
        home.v1()
    home.config("[memories]\nmax_rollout_age_days = 60\n")
    home.add("cli-preferences.jsonl", idle_hours=40 * 24)
    root = str(home.root)

    s = listed(capsys, home.root)[CLI_ID]
    assert s["status"] == "too_old_to_keep"
    assert s["reason"] == (
        "last active 40.0 d ago: extractable (max_rollout_age_days = 60), but phase 2 only "
        "takes memories used or active in the last 30 d (max_unused_days = 30): its raw "
        "memory would be pruned, never consolidated")
    code, out, _ = run(capsys, "sessions", "--home", root, "--status", "too_old_to_keep")
    assert code == 0 and "too_old_to_keep" in out and "1 too_old_to_keep" in out

    # a plain extract leaves it: its memory could never be consolidated
    code, out, _ = run(capsys, "extract", "--backend", "offline", "--json", "--home", root)
    assert code == 0 and json.loads(out)["results"] == []

    # named, it is extracted (as Codex's own phase 1 would), and the reason says its fate
    code, out, err = run(capsys, "extract", CLI_ID[:8], "--backend", "offline", "--json",
                         "--home", root)
    assert code == 0, err
    assert [r["outcome"] for r in json.loads(out)["results"]] == ["extracted"]
    s = listed(capsys, home.root)[CLI_ID]
    assert s["status"] == "extracted"
    assert ("never to be consolidated (unused for 40.0 d > max_unused_days = 30; the next "
            "extract prunes it)") in s["reason"]

    # the next extract prunes it: `pruned`, with the rule and the date
    code, out, err = run(capsys, "extract", "--backend", "offline", "--home", root)
    assert code == 0, err
    assert "pruned 1 raw memory unused for more than max_unused_days" in out
    db = CodexHome(home.root).pipeline_db
    assert db.name == ("memories_1.sqlite" if version == "v1" else "memories_v2_1.sqlite") \
        or db.parent.name == "memdeck"  # no Codex DB yet: memdeck's own copy of its shape
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM stage1_outputs").fetchone()[0] == 0
    job = conn.execute("SELECT status, last_success_watermark FROM jobs WHERE job_key = ?",
                       (CLI_ID,)).fetchone()
    conn.close()
    assert job[0] == "done" and job[1]  # what Codex keeps: exactly a "no output" job
    s = listed(capsys, home.root)[CLI_ID]
    assert s["status"] == "pruned"
    assert s["reason"] == (
        f"pruned {local_date(now())}: unused for 40.0 d > max_unused_days = 30 (never "
        "cited, not in the last consolidation); extracted again only if the session changes")
    assert "nothing durable" not in s["reason"]

    code, out, _ = run(capsys, "show", CLI_ID[:8], "--home", root)
    assert code == 0 and "pruned: pruned" in " ".join(out.split())
    # named again: skipped with the same reason, nothing re-extracted
    code, out, _ = run(capsys, "extract", CLI_ID[:8], "--backend", "offline", "--json",
                       "--home", root)
    [r] = json.loads(out)["results"]
    assert r["outcome"] == "skipped" and r["detail"] == f"up to date: {s['reason']}"


def test_a_fresh_memory_pruned_by_an_extract_a_month_later(home) -> None:
    """The issue's case: extracted while fresh, never consolidated, and the extract run 31 days
    later prunes it (memdeck's clock moved on, the session unchanged)."""
    home.v1()
    home.add("cli-preferences.jsonl", idle_hours=8)
    report = Engine.open(home.root).extract(backend="offline")
    assert [r.outcome for r in report.results] == ["extracted"]
    [s] = Engine.open(home.root).sessions()
    assert s.reason.startswith("raw memory extracted") and "waiting for consolidation" in s.reason

    later = FixedClock(now() + 31 * DAY)
    eng = Engine.open(home.root, clock=later)
    [s] = eng.sessions()
    assert s.status == "extracted" and "never to be consolidated" in s.reason
    report = eng.extract(backend="offline")
    assert (report.pruned, report.pruned_threads, report.results) == (1, (CLI_ID,), ())
    [s] = eng.sessions()
    assert s.status == "pruned"
    assert s.reason.startswith(f"pruned {local_date(later.now())}: unused for 31.3 d > "
                               "max_unused_days = 30 (never cited")


def test_pruned_by_codex_after_memdeck_extracted_it(home) -> None:
    """Codex prunes at the start of its own pipeline and records nothing. memdeck saw its own
    extraction produce a raw memory at the job's watermark and finish time: the row gone and
    the job kept can only be pruning, not "nothing durable"."""
    home.v1()
    db = codex_db(home)
    home.add("cli-preferences.jsonl", idle_hours=8)
    Engine.open(home.root).extract(backend="offline")
    later = now() + 40 * DAY
    conn = sqlite3.connect(db)  # Codex's own statement, not memdeck's prune
    with conn:
        conn.execute("DELETE FROM stage1_outputs WHERE selected_for_phase2 = 0 AND "
                     "COALESCE(last_usage, source_updated_at) < ?", (int(later) - 30 * DAY,))
    conn.close()
    [s] = Engine.open(home.root, clock=FixedClock(later)).sessions()
    wm = int((home.root / "sessions" / "2026" / "12" / "01").glob("*.jsonl").__next__()
             .stat().st_mtime)
    assert s.status == "pruned"
    assert s.reason.startswith(f"pruned by Codex on or after {local_date(wm + 30 * DAY)} "
                               "(Codex keeps no date): memdeck extracted a raw memory 40.0 d ago")


def _codex_extracted_nothing(home, idle_days: float, finished_days_ago: float) -> str:
    """A job Codex finished at the session's watermark with no row left: what both "no
    output" and a prune leave behind. memdeck has no record of it."""
    path = home.add("cli-preferences.jsonl", idle_hours=idle_days * 24)
    home.v1()
    codex_db(home)
    db = PipelineDB.open(CodexHome(home.root))
    wm = int(path.stat().st_mtime)
    done = int(now() - finished_days_ago * DAY)
    db.conn.execute(
        "INSERT INTO jobs (kind, job_key, status, worker_id, started_at, finished_at, "
        "retry_remaining, input_watermark, last_success_watermark) VALUES "
        "('memory_stage1', ?, 'done', 'codex-thread', ?, ?, 3, ?, ?)",
        (CLI_ID, done - 60, done, wm, wm))
    db.close()
    [s] = Engine.open(home.root).sessions()
    assert s.status == "no_output"
    return s.reason


def test_an_old_result_memdeck_did_not_see_says_it_cannot_tell(home) -> None:
    home.config("[memories]\nmax_rollout_age_days = 60\n")
    reason = _codex_extracted_nothing(home, idle_days=45, finished_days_ago=44)
    assert reason == ("extracted 44.0 d ago, no raw memory left: nothing durable, or pruned "
                      "after 30 d unused (max_unused_days); Codex's tables do not say which")


def test_a_recent_result_cannot_have_been_pruned_yet(home) -> None:
    reason = _codex_extracted_nothing(home, idle_days=5, finished_days_ago=4)
    assert reason == "extracted 4.0 d ago: nothing durable to remember"


def test_memdecks_own_no_output_stays_nothing_durable_however_old(home) -> None:
    home.v1()
    home.config("[memories]\nmax_rollout_age_days = 60\n")
    home.write("rollout-2026-12-01T10-00-00-thanks.jsonl", _thanks_rollout(),
               idle_hours=45 * 24)
    eng = Engine.open(home.root)
    [s] = eng.sessions()
    report = eng.extract([s.id or ""], backend="offline")
    assert [r.outcome for r in report.results] == ["no_output"]
    [s] = Engine.open(home.root, clock=FixedClock(now() + DAY)).sessions()
    assert s.status == "no_output" and s.reason.endswith(": nothing durable to remember")


def test_a_prune_record_from_before_a_reset_is_not_evidence(home) -> None:
    """Pruned, then Codex's reset (rows and jobs gone), then Codex extracts the unchanged
    session again and finds nothing: the old prune record must not speak for the new job."""
    home.v1()
    home.config("[memories]\nmax_rollout_age_days = 60\n")
    codex_db(home)
    home.add("cli-preferences.jsonl", idle_hours=40 * 24)
    eng = Engine.open(home.root)
    eng.extract([CLI_ID], backend="offline")
    eng.extract(backend="offline")
    assert eng.sessions()[0].status == "pruned"
    db = PipelineDB.open(CodexHome(home.root))
    db.conn.execute("DELETE FROM jobs")  # Codex's reset
    s = eng.sessions()[0]
    assert s.status == "too_old_to_keep"
    later = int(now()) + 60
    claim = db.claim_stage1(CLI_ID, s.updated_at, later, 2).claim
    assert claim is not None
    db.stage1_no_output(claim, later)
    db.close()
    [s] = Engine.open(home.root, clock=FixedClock(later + 60)).sessions()
    assert s.status == "no_output" and "pruned" not in s.reason.split(":")[0]


def test_a_memory_ranked_past_the_consolidation_limit_says_so(home) -> None:
    """max_raw_memories_for_consolidation = 1: of two fresh memories, phase 2 takes the newer
    (no citations either way); the other says it is left out, and a real consolidation agrees."""
    home.v1()
    home.config("[memories]\nmax_raw_memories_for_consolidation = 1\n")
    home.add("cli-preferences.jsonl", idle_hours=30)
    home.add("codex-0.169-tui.jsonl", idle_hours=8)
    eng = Engine.open(home.root)
    assert {r.outcome for r in eng.extract(backend="offline").results} == {"extracted"}
    by_id = {s.id: s for s in eng.sessions()}
    older = by_id.pop(CLI_ID)
    [newer] = by_id.values()
    assert "waiting for consolidation" in newer.reason
    assert ("left out of consolidation (it ranks 2 by citations and recency; phase 2 takes the "
            "first 1, max_raw_memories_for_consolidation)") in older.reason
    proposal = eng.consolidate(backend="offline")
    assert proposal is not None and list(proposal.threads) == [newer.id]


def test_too_old_also_says_when_phase_2_would_not_take_it(home) -> None:
    home.add("cli-preferences.jsonl", idle_hours=40 * 24)
    home.add("codex-0.169-tui.jsonl", idle_hours=20 * 24)
    reasons = {s.id: s.reason for s in Engine.open(home.root).sessions()}
    assert reasons[CLI_ID] == ("last active 40.0 d ago, older than max_rollout_age_days = 10; "
                               "phase 2 would not take it either (max_unused_days = 30)")
    [other] = [r for t, r in reasons.items() if t != CLI_ID]
    assert other == "last active 20.0 d ago, older than max_rollout_age_days = 10"


def _thanks_rollout() -> bytes:
    tid = "01a23054-a1fc-7969-acf0-6947af0855aa"
    lines = [
        {"timestamp": "2026-12-01T06:39:42.588Z", "type": "session_meta", "payload": {
            "session_id": tid, "id": tid, "timestamp": "2026-12-01T06:39:42.588Z",
            "cwd": "/home/dev/src/widget", "originator": "codex_cli_rs",
            "cli_version": "0.150.0", "source": "cli", "model_provider": "openai"}},
        {"timestamp": "2026-12-01T06:40:04.488Z", "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "thanks"}]}},
        {"timestamp": "2026-12-01T06:40:09.488Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "You're welcome."}]}},
    ]
    return ("\n".join(json.dumps(x) for x in lines) + "\n").encode()
