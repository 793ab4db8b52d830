"""The `memdeck` command: --json shapes, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdeck.tui.cli import main

SESSION_FIELDS = {"id", "rollout_path", "source", "source_label", "cwd", "started_at",
                  "updated_at", "memory_mode", "preview", "status", "reason", "bad_lines"}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def fixture_home(home):
    home.add("cli-preferences.jsonl", idle_hours=9)
    home.add("corrupt-and-truncated.jsonl", idle_hours=2)
    home.add("memory-mode-disabled-later.jsonl")
    home.add("subagent-review.jsonl")
    home.add("compressed.jsonl.zst", idle_hours=30)
    home.add("cites-memories.jsonl", idle_hours=300, archived=True)
    return home


def test_sessions_json_shape(capsys, fixture_home) -> None:
    code, out, err = run(capsys, "sessions", "--json", "--home", str(fixture_home.root))
    assert code == 0
    data = json.loads(out)
    assert isinstance(data, list) and len(data) == 6
    assert all(set(d) == SESSION_FIELDS for d in data)
    by_id = {d["id"]: d for d in data}
    s = by_id["01a23054-a1fc-7969-acf0-6947af085e83"]
    assert (s["status"], s["source"], s["memory_mode"]) == ("eligible", "cli", "enabled")
    assert s["updated_at"].endswith("Z") and s["started_at"] == "2026-12-01T06:39:42Z"
    assert s["preview"].startswith("The checkout tests fail.")
    assert by_id["01a22c09-fffc-7d28-989e-c997a9247459"]["bad_lines"] == 1
    assert by_id["01a22c09-fffc-7d28-989e-c997a9247459"]["status"] == "too_recent"
    assert "needs 6 h" in by_id["01a22c09-fffc-7d28-989e-c997a9247459"]["reason"]
    assert by_id["01a22e2f-50fc-7e24-b476-7db9a01a471c"]["status"] == "disabled"
    assert by_id["01a2301d-b37c-7fe9-8d12-55b17f94b213"]["status"] == "not_interactive"
    assert by_id["01a2301d-b37c-7fe9-8d12-55b17f94b213"]["source"] == '{"subagent":"review"}'
    assert by_id["01a23130-5bfc-7f67-aecc-1c0d25836e04"]["status"] == "archived"
    zst = next(d for d in data if d["rollout_path"].endswith(".zst"))
    assert zst["status"] == "eligible"


def test_options_anywhere_after_command(capsys, fixture_home) -> None:
    code, out, _ = run(capsys, "sessions", "--home", str(fixture_home.root), "--json",
                       "--status", "eligible")
    assert code == 0
    assert {d["status"] for d in json.loads(out)} == {"eligible"}


def test_show_json(capsys, fixture_home) -> None:
    fixture_home.add("cites-memories.jsonl", idle_hours=3)
    code, out, _ = run(capsys, "show", "01a23130", "--json", "--home", str(fixture_home.root))
    assert code == 0
    d = json.loads(out)
    assert SESSION_FIELDS <= set(d)
    kinds = [i["kind"] for i in d["items"]]
    assert kinds[:2] == ["user", "assistant"]
    assert d["citations"][0]["entries"][0] == {"path": "MEMORY.md", "line_start": 3,
                                               "line_end": 7, "note": "test command and database"}


def test_show_reports_bad_and_pending_lines(capsys, fixture_home) -> None:
    code, out, _ = run(capsys, "show", "01a22c09-fffc-7d28-989e-c997a9247459", "--json",
                       "--home", str(fixture_home.root))
    d = json.loads(out)
    assert code == 0 and d["bad_lines"] == 1 and d["problems"][0]["line"] == 5
    assert d["pending_bytes"] > 0


def test_show_text_output(capsys, fixture_home) -> None:
    code, out, _ = run(capsys, "show", "01a23054", "--home", str(fixture_home.root))
    assert code == 0
    assert "eligible" in out and "make check-quick" in out


def test_errors_are_one_line_exit_1(capsys, fixture_home, tmp_path: Path) -> None:
    code, out, err = run(capsys, "show", "ffffffff", "--home", str(fixture_home.root))
    assert (code, out) == (1, "") and err.count("\n") == 1 and "no session" in err
    code, _, err = run(capsys, "sessions", "--home", str(tmp_path / "missing"))
    assert code == 1 and err.startswith("memdeck: no Codex home at")
    code, _, err = run(capsys, "config", "set", "min_rollout_idle_hours", "99",
                       "--home", str(fixture_home.root))
    assert code == 1 and "from 1 to 48" in err and err.count("\n") == 1


def test_usage_errors_exit_2(capsys) -> None:
    assert run(capsys, "nope")[0] == 2
    assert run(capsys, "show")[0] == 2
    code, _, err = run(capsys, "sessions", "--status", "bogus")
    assert code == 2 and "unknown status" in err


def test_config_get_prints_toml_literals(capsys, fixture_home) -> None:
    h = str(fixture_home.root)
    assert run(capsys, "config", "get", "min_rollout_idle_hours", "--home", h)[1] == "6\n"
    assert run(capsys, "config", "set", "use_memories", "false", "--home", h)[1] == "false\n"
    assert run(capsys, "config", "get", "use_memories", "--home", h)[1] == "false\n"
    run(capsys, "config", "set", "extract_model", "gpt-5.4-mini", "--home", h)
    assert run(capsys, "config", "get", "extract_model", "--home", h)[1] == '"gpt-5.4-mini"\n'
    code, _, err = run(capsys, "config", "get", "consolidation_model", "--home", h)
    assert code == 1 and "not set" in err
    code, out, _ = run(capsys, "config", "get", "memories", "--json", "--home", h)
    assert json.loads(out)["value"] is True  # the home's [features] turns them on
    run(capsys, "config", "set", "memories", "false", "--home", h)
    code, out, _ = run(capsys, "config", "get", "memories", "--json", "--home", h)
    assert json.loads(out)["value"] is False


def test_config_changes_status_thresholds(capsys, fixture_home) -> None:
    h = str(fixture_home.root)
    run(capsys, "config", "set", "min_rollout_idle_hours", "12", "--home", h)
    _, out, _ = run(capsys, "sessions", "--json", "--home", h)
    s = next(d for d in json.loads(out) if d["id"].startswith("01a23054"))
    assert s["status"] == "too_recent" and "needs 12 h" in s["reason"]


def test_real_command_in_a_subprocess(fixture_home) -> None:
    env = {**os.environ, "CODEX_HOME": str(fixture_home.root)}
    r = subprocess.run([sys.executable, "-m", "memdeck.tui.cli", "sessions", "--json"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) == 6
    r = subprocess.run([sys.executable, "-m", "memdeck.tui.cli", "show", "zzzz"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
