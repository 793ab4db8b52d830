"""A home where Codex 0.171 ran memory v2 stays v2 through every memdeck command (real binary).

Codex picks v1 as soon as `$CODEX_HOME/memories` exists
(docs/codex-format.md "Memory versions"), so one stray `mkdir` by a read-only command would make
the user's next session start an empty v1 memory. Here the real Codex runs its v2 phase 1 on a
home, memdeck then reads what Codex wrote (the session is `extracted`, `memdeck memories` lists
Codex's v2 row), every memdeck command runs, and the next real Codex session still uses v2: it
is shown memdeck's v2 summary and writes no v1 folder and no v1 job.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from codex_oracle.fake_responses import FakeResponses
from codex_oracle.runner import age_rollouts, jobs, run_exec, wait_for_job, write_config

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "rollouts"
CLI_THREAD = "01a23054-a1fc-7969-acf0-6947af085e83"


def memdeck(home: Path, *argv: str) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "memdeck.tui.cli", *argv, "--home", str(home)],
                       capture_output=True, text=True, timeout=180,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, (argv, r.stderr)
    return r


def developer_text(req) -> str:
    return "\n".join(req.input_texts("developer"))


def test_a_v2_home_stays_v2_through_every_memdeck_command(
        tmp_path: Path, codex_bin: Path, fake_responses: FakeResponses) -> None:
    home = tmp_path / "home"
    day = home / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "cli-preferences.jsonl",
                    day / f"rollout-2026-12-01T10-00-00-{CLI_THREAD}.jsonl")
    write_config(home, memories=True)  # no version: a fresh home is v2
    age_rollouts(home, 30)

    # 1. Codex runs its own v2 phase 1 on the idle session
    rc, _, err = run_exec(home, fake_responses, "first session", keep_open=8)
    assert rc == 0, err[-2000:]
    assert wait_for_job(home, "memory_stage1", version="v2"), jobs(home, "v2")
    assert (home / "memories_v2_1.sqlite").exists() and not (home / "memories").exists()
    [p1] = fake_responses.phase1()
    assert set(p1.schema()["properties"]) == {"rollout_summary", "rollout_slug"}  # v2 schema

    # 2. memdeck reads Codex's v2 state: extracted, not eligible; the row is listed
    sessions = json.loads(memdeck(home, "sessions", "--json").stdout)
    mine = next(s for s in sessions if s["id"] == CLI_THREAD)
    assert mine["status"] == "extracted", mine
    [row] = [m for m in json.loads(memdeck(home, "memories", "--json").stdout)
             if m["thread_id"] == CLI_THREAD]
    assert row["raw_memory"] == "" and row["rollout_summary"]
    version = json.loads(memdeck(home, "config", "get", "version", "--json").stdout)
    assert version["value"] == "v2" and "no memories/ folder" in version["reason"]

    # 3. every command, read-only or not
    for argv in (["history"], ["proposals"], ["backups"], ["citations"], ["show", CLI_THREAD],
                 ["config", "list"], ["extract", "--backend", "offline"]):
        memdeck(home, *argv)
        assert not (home / "memories").exists(), f"memdeck {argv[0]} created memories/"
    proposal = json.loads(memdeck(home, "consolidate", "--backend", "offline", "--json").stdout)
    memdeck(home, "accept", proposal["id"])
    assert not (home / "memories").exists()
    assert jobs(home, "v1") == []  # Codex makes memories_1.sqlite on every start; it stays empty
    summary = (home / "memories_v2" / "memory_summary.md").read_text()
    assert summary.startswith("v1\n")

    # 4. the next real session still runs v2 and is shown memdeck's summary
    before = len(fake_responses.requests)
    rc, _, err = run_exec(home, fake_responses, "second session")
    assert rc == 0, err[-2000:]
    turn = next(r for r in fake_responses.requests[before:] if r.kind == "turn")
    assert summary.strip() in developer_text(turn)
    assert not (home / "memories").exists() and jobs(home, "v1") == []
