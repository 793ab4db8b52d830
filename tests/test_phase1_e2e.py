"""Phase 1 end to end on the demo home with the offline backend, through the command."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memdeck.engine import Engine, demo_home
from memdeck.tui.cli import main


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return demo_home(tmp_path / "demo")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def by_status(home: Path) -> dict[str, list]:
    out: dict[str, list] = {}
    for s in Engine.open(home).sessions():
        out.setdefault(s.status, []).append(s)
    return out


def test_extract_eligible_sessions(capsys, demo: Path) -> None:
    before = by_status(demo)
    eligible = {s.id for s in before["eligible"]}
    assert len(eligible) == 2
    code, out, err = run(capsys, "extract", "--backend", "offline", "--json", "--home", str(demo))
    report = json.loads(out)
    assert report["backend"] == "offline" and report["pipeline_db"].endswith("memories_1.sqlite")
    outcomes = {r["thread_id"]: r["outcome"] for r in report["results"]}
    assert {outcomes[t] for t in eligible} == {"extracted"}
    # the failed session is waiting for its retry time: skipped, not retried early
    failed = before["failed"][0].id
    assert outcomes[failed] == "skipped"
    assert code == 0, err

    after = by_status(demo)
    assert {s.id for s in after["extracted"]} >= eligible
    assert "eligible" not in after

    conn = sqlite3.connect(demo / "memories_1.sqlite")
    rows = dict(conn.execute("SELECT thread_id, raw_memory FROM stage1_outputs").fetchall())
    jobs = dict(conn.execute("SELECT job_key, status FROM jobs").fetchall())
    conn.close()
    assert all(jobs[t] == "done" for t in eligible) and jobs["global"] == "pending"
    django = next(rows[t] for t in eligible if "Django" in rows[t])
    assert "pytest -x -q" in django and "Never run migrations against prod" in django
    terraform = next(rows[t] for t in eligible if "terraform" in rows[t])
    assert "wJalrXUtnFEMI" not in terraform  # the secret in the tool output never lands


def test_second_run_finds_everything_up_to_date(capsys, demo: Path) -> None:
    run(capsys, "extract", "--backend", "offline", "--home", str(demo))
    code, out, _ = run(capsys, "extract", "--backend", "offline", "--json", "--home", str(demo))
    assert code == 0
    assert all(r["outcome"] == "skipped" for r in json.loads(out)["results"])


def test_named_sessions_waive_time_rules_but_not_the_rest(capsys, demo: Path) -> None:
    sessions = by_status(demo)
    recent = sessions["too_recent"][0].id
    disabled = sessions["disabled"][0].id
    code, out, err = run(capsys, "extract", recent[:8], disabled[:8], "--backend", "offline",
                         "--json", "--home", str(demo))
    results = {r["thread_id"]: r for r in json.loads(out)["results"]}
    assert results[recent]["outcome"] in ("extracted", "no_output")
    assert results[disabled]["outcome"] == "refused"
    assert "disabled" in results[disabled]["detail"]
    assert code == 1 and err.count("\n") == 1 and "refused" in err


def test_memories_lists_stage1_rows(capsys, demo: Path) -> None:
    run(capsys, "extract", "--backend", "offline", "--home", str(demo))
    code, out, _ = run(capsys, "memories", "--json", "--home", str(demo))
    rows = json.loads(out)
    assert code == 0 and len(rows) == 5
    assert set(rows[0]) == {"thread_id", "rollout_slug", "raw_memory", "rollout_summary",
                            "generated_at", "usage_count", "last_usage", "citation_note",
                            "selected_for_phase2"}
    assert sum(r["selected_for_phase2"] for r in rows) == 2
    code, out, _ = run(capsys, "memories", "--home", str(demo))
    assert "pending consolidation" in out and "in memory" in out


def test_text_output_names_the_backend(capsys, demo: Path) -> None:
    code, out, _ = run(capsys, "extract", "--backend", "offline", "--home", str(demo))
    assert out.startswith("backend: offline (heuristic, no model)")
    assert "2 extracted" in out
