"""The real Codex 0.171 prunes a raw memory memdeck extracted, and memdeck says `pruned`.

On the demo home (max_rollout_age_days = 45): memdeck extracts the `too_old_to_keep` session
by name (offline backend), then Codex's own pipeline starts with a session. Codex prunes that
row (unused for more than max_unused_days = 30, never selected) and keeps its job, as
docs/codex-format.md "Pruning" says, and records nothing else; memdeck still tells the pruned
memory from "nothing durable", by its own record of the extraction. Skips with one line when
the binary is missing (tests/codex_oracle/runner.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from codex_oracle.fake_responses import FakeResponses
from codex_oracle.runner import db_failures, jobs, pipeline_finished, run_exec

from memdeck.engine import Engine, demo_home


def test_codex_prunes_what_memdeck_extracted_and_memdeck_says_pruned(
        codex_bin: Path, tmp_path: Path, fake_responses: FakeResponses) -> None:
    demo = demo_home(tmp_path / "demo")
    eng = Engine.open(demo)
    [old] = [s for s in eng.sessions() if s.status == "too_old_to_keep"]
    report = eng.extract([old.id or ""], backend="offline")
    assert [r.outcome for r in report.results] == ["extracted"]
    [s] = [x for x in eng.sessions() if x.id == old.id]
    assert s.status == "extracted" and "never to be consolidated" in s.reason

    rc, _out, err = run_exec(demo, fake_responses, "hello demo", keep_open=8.0,
                             until=pipeline_finished(demo, "v1"),
                             extra_config={"memories.max_rollouts_per_startup": 8})

    assert rc == 0, err[-2000:]
    assert db_failures(err) == []
    conn = sqlite3.connect(f"file:{demo / 'memories_1.sqlite'}?mode=ro", uri=True)
    row = conn.execute("SELECT 1 FROM stage1_outputs WHERE thread_id = ?", (old.id,)).fetchone()
    conn.close()
    assert row is None  # Codex pruned it
    job = next(j for j in jobs(demo, "v1") if j["job_key"] == old.id)
    assert job["status"] == "done"  # and kept the job, as after a "no output"
    assert not [r for r in fake_responses.phase1() if old.id in str(r.body)]  # not re-extracted

    [s] = [x for x in Engine.open(demo).sessions() if x.id == old.id]
    assert s.status == "pruned"
    assert s.reason.startswith("pruned by Codex on or after ")
    assert "unused for more than max_unused_days = 30" in s.reason
