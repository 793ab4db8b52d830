"""The oracle works: the real Codex (0.171.0) talks to the fake Responses server.

- One `codex exec` with a shell tool call on a fresh temp home writes a rollout under
  `sessions/` holding the prompt, the tool's output and the final reply; the server recorded
  streamed requests with the model and the prompt in `input`, and the tool's output came back
  in the second request.
- The tmux TUI driver runs two turns (the second with a shell call), quits, and leaves no
  Codex process behind.
- The recipe in tests/codex_oracle/runner.py's docstring makes Codex run its own phase 1 and
  phase 2 on a home (V1 and V2), both jobs ending `done`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from codex_oracle.fake_responses import VALID_SUMMARY, FakeResponses, call, text, valid_phase2_files
from codex_oracle.runner import (
    CODEX_VERSION,
    age_rollouts,
    codex_pids,
    codex_version,
    jobs,
    memory_version,
    pipeline_finished,
    run_exec,
    run_tui,
    write_config,
)


def test_codex_exec_writes_a_rollout_and_the_server_records_it(
        tmp_path: Path, codex_bin: Path, fake_responses: FakeResponses) -> None:
    assert codex_version(codex_bin) == CODEX_VERSION
    home = tmp_path / "home"
    fake_responses.push(call("exec_command", {"cmd": "echo oracle-$((40+2))"}),
                        text("the answer is in"))

    rc, out, err = run_exec(home, fake_responses, "say the magic word", timeout=60)

    assert rc == 0, err[-2000:]
    assert "the answer is in" in out
    turns = fake_responses.turns()
    assert len(turns) == 2, [r.kind for r in fake_responses.requests]
    first, second = turns
    assert first.body["stream"] is True and first.model
    assert first.headers.get("authorization") == "Bearer fake-key"
    assert "say the magic word" in first.input_texts("user")
    outputs = [i for i in second.input if i.get("type") == "function_call_output"]
    assert outputs and "oracle-42" in outputs[0]["output"]

    rollouts = list((home / "sessions").rglob("rollout-*.jsonl"))
    assert len(rollouts) == 1
    lines = [json.loads(x) for x in rollouts[0].read_text().splitlines()]
    assert lines[0]["type"] == "session_meta"
    assert lines[0]["payload"]["source"] == "exec"
    blob = json.dumps(lines)
    assert "say the magic word" in blob and "the answer is in" in blob and "oracle-42" in blob


def test_the_tui_driver_runs_two_turns_with_a_tool_call_and_leaves_nothing_running(
        tmp_path: Path, codex_bin: Path, fake_responses: FakeResponses) -> None:
    home = tmp_path / "home"
    fake_responses.push(text("first answer"), call("exec_command", {"cmd": "echo tui-$((6*7))"}),
                        text("second answer"))

    result = run_tui(home, fake_responses, ["first question", "run the command"],
                     expect=["first answer", "second answer"])

    assert result.exit_status == 0, result.final_screen[-1500:]
    assert "first question" in result.screens[0] and "first answer" in result.screens[0]
    assert "tui-42" in result.screens[1]
    assert fake_responses.pending() == 0
    assert [r.kind for r in fake_responses.requests].count("turn") == 3
    assert codex_pids(home) == []
    [rollout] = (home / "sessions").rglob("rollout-*.jsonl")
    meta = json.loads(rollout.read_text().splitlines()[0])["payload"]
    assert meta["originator"] == "codex-tui" and meta["source"] in ("cli", "vscode")


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_the_documented_recipe_makes_codex_run_phase1_and_phase2(
        tmp_path: Path, codex_bin: Path, version: str) -> None:
    home = tmp_path / "home"
    write_config(home, memories=False)
    with FakeResponses() as server:
        run_tui(home, server, ["remember that I like tabs"])
    write_config(home, memories=True, min_rollout_idle_hours=0, version=version)
    age_rollouts(home, 2)

    with FakeResponses(phase2_files=valid_phase2_files(version)) as server:
        rc, _out, err = run_exec(home, server, "next", keep_open=8,
                                 until=pipeline_finished(home, version))

    assert rc == 0, err[-2000:]
    [p1] = server.phase1()
    assert p1.model == "gpt-6-luna"
    fields = set(p1.schema()["properties"])
    assert fields == ({"rollout_summary", "rollout_slug"} if version == "v2"
                      else {"raw_memory", "rollout_summary", "rollout_slug"})
    assert server.phase2() and server.phase2()[0].model == "gpt-6.1-terra"
    assert {(j["kind"], j["status"], j["last_error"]) for j in jobs(home, version)} == {
        ("memory_stage1", "done", None), ("memory_consolidate_global", "done", None)}
    root = home / ("memories_v2" if version == "v2" else "memories")
    assert (root / "memory_summary.md").read_text() == VALID_SUMMARY
    assert memory_version(home) == ("v1" if version == "v1" else "v2")


def test_a_missing_binary_skips_with_one_line_locally_and_fails_in_ci(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from codex_oracle import runner

    monkeypatch.setattr(runner, "_checked", {})
    monkeypatch.setenv("MEMDECK_CODEX_BIN", str(tmp_path / "no-codex-here"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        runner.require_codex()
    assert f"codex {runner.CODEX_VERSION} not installed" in str(skipped.value)
    assert "\n" not in str(skipped.value)

    monkeypatch.setattr(runner, "_checked", {})
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as failed:
        runner.require_codex()
    assert "CI is set" in str(failed.value)
