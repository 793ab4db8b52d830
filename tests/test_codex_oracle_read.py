"""memdeck reads what the real Codex (0.171.0) writes, proved against the binary.

One Codex home is built for the module: two `codex exec` sessions (a shell call that exits 3,
then a plain one) and an interactive TUI session in tmux (two turns, the first with a shell
call that exits 1), plus older rollouts beside them (a 0.34 one without `source`, a sub-agent
one, one whose memory mode is switched off). Then, running the real `memdeck` command:
- (a, b) `memdeck sessions --json` lists every session with the source label of what the user
  ran, the preview Codex itself stored in `threads.preview`, no bad lines; `memdeck show ID
  --json` has each user and assistant turn exactly once and the tool call with its exit code;
- (c) the sessions memdeck calls `eligible` are exactly the threads Codex's own phase 1 then
  claims (its jobs rows) — exec threads `not_interactive` and never claimed, the 0.34 session
  without `source` claimed like any interactive one;
- (d) a home of legacy-mode rollouts migrated by `codex migrate-rollouts --apply` keeps the
  same sessions (ids, previews, labels) and statuses.
The TUI runs with its settings in config.toml, as a user starts it (with `-c` flags 0.171's
TUI records `source: "cli"`; without, `"vscode"`, what users' homes hold).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from codex_oracle.fake_responses import FakeResponses, call, text
from codex_oracle.runner import (
    age_rollouts,
    codex_env,
    jobs,
    memory_version,
    require_codex,
    run_exec,
    run_tui,
)
from fixtures.capture_codex_rollouts import settings_in_config_toml

REPO = Path(__file__).resolve().parent.parent
MEMDECK = Path(sys.executable).parent / "memdeck"
BUNDLED = REPO / "tests" / "fixtures" / "rollouts"
SHARED = Path(os.environ.get("MEMDECK_FIXTURES", REPO.parent / "shared" / "fixtures" /
                             "rollouts"))
if not SHARED.is_dir():
    SHARED = BUNDLED

EXEC_PROMPTS = ("Run the smoke check and report how it ends.", "Say hello once.")
EXEC_CMD = "printf 'alpha\\nbeta\\n'; exit 3"
TUI_PROMPTS = ("Check whether the importer test passes: run it.",
               "Thanks. Tell me which file to look at first.")
TUI_CMD = "echo 'FAILED test_import'; false"
TUI_ANSWERS = ("The importer test fails (exit code 1).", "Start with ledger/import.py.")
OLD_ID = "5b8c2f4e-91d3-4a7b-b6e2-3c4d5e6f7a81"  # codex-0.34-no-source.jsonl
SUBAGENT_ID = "01a2301d-b37c-7fe9-8d12-55b17f94b213"
DISABLED_ID = "01a22e2f-50fc-7e24-b476-7db9a01a471c"
CLI_ID = "01a23054-a1fc-7969-acf0-6947af085e83"
CITES_ID = "01a23130-5bfc-7f67-aecc-1c0d25836e04"
MEMORIES = {"features": {"memories": True},
            "memories": {"min_rollout_idle_hours": 1, "max_rollouts_per_startup": 20}}


def memdeck(home: Path, *args: str) -> Any:
    """The real command, `--home` after the subcommand, JSON out; memdeck's own settings
    folders kept inside the test's tmp."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(home.parent / "xdg-config"),
           "XDG_DATA_HOME": str(home.parent / "xdg-data"),
           "XDG_CACHE_HOME": str(home.parent / "xdg-cache")}
    env.pop("OPENAI_API_KEY", None)
    p = subprocess.run([str(MEMDECK), *args, "--home", str(home), "--json"], env=env,
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def codex(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(require_codex()), *args], env=codex_env(home), cwd=home,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def place(home: Path, src: Path, tid: str, day: str = "2026/12/01") -> Path:
    dest = home / "sessions" / day / f"rollout-2026-12-01T10-00-00-{tid}.jsonl"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    return dest


def set_idle(home: Path, tid: str, hours: float) -> None:
    """One thread idle `hours`: its rollout's mtime and Codex's row (what phase 1 judges)."""
    t = time.time() - hours * 3600
    [path] = (home / "sessions").rglob(f"rollout-*{tid}.jsonl")
    os.utime(path, (t, t))
    conn = sqlite3.connect(home / "state_5.sqlite", timeout=10)
    with conn:
        conn.execute("UPDATE threads SET updated_at = ?, updated_at_ms = ? WHERE id = ?",
                     (int(t), int(t * 1000), tid))
    conn.close()


def thread_rows(home: Path) -> dict[str, dict[str, Any]]:
    conn = sqlite3.connect(f"file:{home / 'state_5.sqlite'}?mode=ro", uri=True, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        return {r["id"]: dict(r) for r in conn.execute("SELECT * FROM threads")}
    finally:
        conn.close()


def one_line(text_: str) -> str:
    return " ".join(text_.split())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_codex()
    tmp = tmp_path_factory.mktemp("oracle-read")
    home = tmp / "codex-home"
    place(home, BUNDLED / "codex-0.34-no-source.jsonl", OLD_ID, day="2025/09/13")
    place(home, SHARED / "subagent-review.jsonl", SUBAGENT_ID)
    place(home, SHARED / "memory-mode-disabled-later.jsonl", DISABLED_ID)
    place(home, SHARED / "cli-preferences.jsonl", CLI_ID)
    place(home, SHARED / "cites-memories.jsonl", CITES_ID)
    with FakeResponses() as server, settings_in_config_toml(home, server):
        server.push(call("exec_command", {"cmd": EXEC_CMD}), text("It exited with code 3."))
        r1 = run_exec(home, server, EXEC_PROMPTS[0],
                      extra_args=["--dangerously-bypass-approvals-and-sandbox"])
        server.push(text("Hello."))
        r2 = run_exec(home, server, EXEC_PROMPTS[1])
        server.push(call("exec_command", {"cmd": TUI_CMD}), *map(text, TUI_ANSWERS))
        tui = run_tui(home, server, TUI_PROMPTS, expect=TUI_ANSWERS,
                      extra_args=["--dangerously-bypass-approvals-and-sandbox"])
    assert r1.returncode == 0 and r2.returncode == 0, (r1.stderr[-1500:], r2.stderr[-1500:])
    assert tui.exit_status == 0, tui.final_screen[-1500:]
    listed = memdeck(home, "sessions")
    by_prompt = {s["preview"]: s["id"] for s in listed}
    return {"home": home, "tmp": tmp, "listed": listed,
            "exec_ids": [by_prompt[p] for p in EXEC_PROMPTS], "tui_id": by_prompt[TUI_PROMPTS[0]]}


def test_sessions_lists_codex_sessions_with_label_and_codex_preview(built) -> None:
    listed = {s["id"]: s for s in built["listed"]}
    rows = thread_rows(built["home"])
    tui_id, exec_ids = built["tui_id"], built["exec_ids"]
    assert len(listed) == 8
    assert all(s["bad_lines"] == 0 for s in listed.values())
    assert (listed[tui_id]["source"], listed[tui_id]["source_label"]) == ("vscode", "Codex TUI")
    for eid in exec_ids:
        assert (listed[eid]["source"], listed[eid]["source_label"]) == ("exec", "exec")
        assert listed[eid]["status"] == "not_interactive"
    assert listed[OLD_ID]["source"] == "vscode" and listed[OLD_ID]["source_label"] == "CLI"
    assert listed[SUBAGENT_ID]["source_label"] == "sub-agent: review"
    assert not any("{" in s["source_label"] for s in listed.values())
    # memdeck's preview is the one Codex keeps in its thread catalogue, and so is the source
    for tid, s in listed.items():
        assert s["preview"] == one_line(rows[tid]["preview"])[:400], tid
        assert s["source"] == rows[tid]["source"], tid


def test_show_has_each_turn_once_and_the_exit_codes(built) -> None:
    home = built["home"]
    d = memdeck(home, "show", built["tui_id"])
    items = d["items"]
    assert d["bad_lines"] == 0 and d["history_mode"] == "paginated"
    assert [i["text"] for i in items if i["kind"] == "user"] == list(TUI_PROMPTS)
    assert [i["text"] for i in items if i["kind"] == "assistant"] == list(TUI_ANSWERS)
    [tool_call] = [i for i in items if i["kind"] == "tool_call"]
    [output] = [i for i in items if i["kind"] == "tool_output"]
    assert json.loads(tool_call["text"])["cmd"] == TUI_CMD
    assert output["call_id"] == tool_call["call_id"]
    assert (output["exit_code"], output["text"]) == (1, "FAILED test_import\n")

    d = memdeck(home, "show", built["exec_ids"][0])
    items = d["items"]
    assert [i["text"] for i in items if i["kind"] == "user"] == [EXEC_PROMPTS[0]]
    assert [i["text"] for i in items if i["kind"] == "assistant"] == ["It exited with code 3."]
    [output] = [i for i in items if i["kind"] == "tool_output"]
    assert (output["exit_code"], output["text"]) == (3, "alpha\nbeta\n")


def test_eligible_is_exactly_what_codex_phase1_claims(built) -> None:
    home = built["home"]
    with FakeResponses() as server, settings_in_config_toml(home, server, MEMORIES):
        age_rollouts(home, 3)
        set_idle(home, CLI_ID, 0.5)  # under min_rollout_idle_hours = 1
        set_idle(home, CITES_ID, 40 * 24)  # over max_rollout_age_days = 30 (default)
        before = {s["id"]: s["status"] for s in memdeck(home, "sessions")}
        eligible = {tid for tid, st in before.items() if st == "eligible"}
        assert eligible == {built["tui_id"], OLD_ID}, before
        assert (before[CLI_ID], before[CITES_ID]) == ("too_recent", "too_old")
        assert {before[e] for e in built["exec_ids"]} == {"not_interactive"}
        assert before[SUBAGENT_ID] == "not_interactive" and before[DISABLED_ID] == "disabled"
        version = memory_version(home)
        r = run_exec(home, server, "Start a new session.", keep_open=6,
                     until=lambda: {j["job_key"] for j in jobs(home, version)
                                    if j["kind"] == "memory_stage1"
                                    and j["status"] == "done"} >= eligible)
        assert r.returncode == 0, r.stderr[-2000:]
    claimed = {j["job_key"] for j in jobs(home, version) if j["kind"] == "memory_stage1"}
    assert claimed == eligible
    assert len(server.phase1()) == len(eligible)
    # and memdeck now reads Codex's outcome: what it extracted, and nothing else moved
    after = {s["id"]: s["status"] for s in memdeck(home, "sessions")}
    assert {tid for tid, st in after.items() if st == "extracted"} == eligible
    [new] = set(after) - set(before)  # the session that ran phase 1: exec as well
    assert {after[e] for e in (*built["exec_ids"], new)} == {"not_interactive"}
    assert {tid: st for tid, st in after.items() if tid not in eligible and tid != new} == {
        tid: st for tid, st in before.items() if tid not in eligible}


def test_migrated_home_keeps_sessions_and_statuses(tmp_path: Path) -> None:
    require_codex()
    home = tmp_path / "codex-home"
    place(home, BUNDLED / "codex-0.34-no-source.jsonl", OLD_ID, day="2025/09/13")
    for name, tid in (("cli-preferences.jsonl", CLI_ID), ("subagent-review.jsonl", SUBAGENT_ID),
                      ("memory-mode-disabled-later.jsonl", DISABLED_ID),
                      ("cites-memories.jsonl", "01a23130-5bfc-7f67-aecc-1c0d25836e04")):
        place(home, SHARED / name, tid)
    (home / "config.toml").write_text("[features]\nmemories = true\n\n[memories]\n"
                                      "min_rollout_idle_hours = 1\n")
    age_rollouts(home, 3)
    keys = ("id", "preview", "source", "source_label", "status", "bad_lines", "updated_at")

    def listing() -> list[tuple[Any, ...]]:
        return sorted(tuple(s[k] for k in keys) for s in memdeck(home, "sessions"))

    before = listing()
    assert {row[4] for row in before} == {"eligible", "not_interactive", "disabled"}
    dry = codex(home, "migrate-rollouts", "--json")
    assert dry.returncode == 0, dry.stderr[-1500:]
    assert {o["status"] for o in json.loads(dry.stdout)["outcomes"]} == {"eligible"}
    p = codex(home, "migrate-rollouts", "--apply", "--json")
    assert p.returncode == 0, p.stderr[-1500:]
    assert {o["status"] for o in json.loads(p.stdout)["outcomes"]} == {"migrated"}
    for path in (home / "sessions").rglob("rollout-*.jsonl"):
        first = json.loads(path.read_text().splitlines()[0])
        assert first["payload"]["history_mode"] == "paginated" and "ordinal" in first
        assert "source" in first["payload"]  # the 0.34 one now says "vscode" itself
    assert listing() == before  # the index notices the rewrite (same mtime, new size)
    shutil.rmtree(home / "memdeck")
    assert listing() == before  # and a fresh index agrees
    assert memdeck(home, "show", OLD_ID)["history_mode"] == "paginated"
