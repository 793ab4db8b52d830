"""How a session's commands ended, read from exit codes in every shape Codex has written, and
what the offline backends remember of them (issue 9, requirement 1 and its "Bad input").

The rollouts are built from real lines: the 0.169 TUI capture (`codex-0.169-tui.jsonl`: a
`function_call`, its `item_completed` CommandExecution event, its `function_call_output` with
the unified-exec header) and the 0.34 capture (`codex-0.34-no-source.jsonl`: the `shell` tool with
`["bash", "-lc", …]` and the JSON envelope), each with its command and output replaced; the
freeform `Exit code:` output and the `exec_command_end` event follow docs/codex-format.md.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from memdeck.engine.backends.offline_failures import (
    FIXED,
    OPEN,
    failure_stories,
    is_probe,
    reason,
    resolves,
)
from memdeck.engine.backends.offline_phase1 import OfflinePhase1, extract
from memdeck.engine.backends.offline_phase1_v2 import extract_v2
from memdeck.engine.backends.offline_phase2 import merge_memory
from memdeck.engine.codex.command_outcomes import (
    FAILED,
    INTERRUPTED,
    NO_MATCH,
    SUCCESS,
    UNKNOWN,
    session_commands,
    unwrap_shell,
)
from memdeck.engine.codex.memory_layout import SelectedMemory
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.index.sessions import Session
from memdeck.engine.phase1.input_v1 import build_input
from memdeck.engine.phase1.input_v2 import build_input_v2

ROLLOUTS = Path(__file__).parent / "fixtures" / "rollouts"
REQUEST = "Fix the refund tests. We always run `pytest -q` before pushing."
PATCH = "*** Begin Patch\n*** Update File: {f}\n@@\n{body}\n*** End Patch"
FIX = ("-    fee = Decimal(rate * float(amount))\n"
       "+    fee = (Decimal(str(rate)) * amount).quantize(CENT, rounding=ROUND_HALF_EVEN)")


def lines_of(name: str) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in (ROLLOUTS / name).read_text().splitlines() if ln.strip()]


def header(code: int | None, out: str) -> str:  # 0.169 unified exec, as in the capture
    status = (f"Process exited with code {code}" if code is not None
              else "Process running with session ID 7")
    return (f"Chunk ID: b9f67d\nWall time: 0.0000 seconds\n{status}\n"
            f"Original token count: 5\nOutput:\n{out}")


class Tui0169:
    """The 0.169 TUI capture with its request and its one command replaced."""

    def __init__(self, request: str = REQUEST) -> None:
        lines = lines_of("codex-0.169-tui.jsonl")
        by_ordinal = {ln["ordinal"]: ln for ln in lines}
        self.call, self.event, self.output = by_ordinal[13], by_ordinal[15], by_ordinal[16]
        self.head = [ln for ln in lines if ln["ordinal"] < 13]
        self.tail = [ln for ln in lines if 17 <= ln["ordinal"] <= 22]
        for ln in self.head:
            p = ln["payload"]
            if p.get("type") == "message" and p.get("role") == "user" and \
                    not p["content"][0]["text"].startswith("<environment_context>"):
                p["content"][0]["text"] = request
            if p.get("type") == "item_completed" and p["item"]["type"] == "UserMessage":
                p["item"]["content"][0]["text"] = request
        for ln in self.tail:  # the capture's answer spoke of its own command
            p = ln["payload"]
            if p.get("type") == "message" and p.get("role") == "assistant":
                p["content"][0]["text"] = "Done."
            if p.get("type") == "item_completed" and p["item"]["type"] == "AgentMessage":
                p["item"]["content"][0]["text"] = "Done."
            if p.get("type") == "task_complete":
                p["last_agent_message"] = "Done."
        self.body: list[dict[str, Any]] = []
        self.n = 0

    def run(self, cmd: str, code: int | None, out: str = "", *, output: str | None = None,
            event: bool = True) -> Tui0169:
        """One command: the call, its CommandExecution event (with `code`), its output (the
        header form unless `output` gives the raw text)."""
        self.n += 1
        cid = f"call_{self.n}"
        call = copy.deepcopy(self.call)
        call["payload"].update(call_id=cid, arguments=json.dumps({"cmd": cmd}))
        self.body.append(call)
        if event:
            ev = copy.deepcopy(self.event)
            item = ev["payload"]["item"]
            item.update(id=cid, command=["/bin/bash", "-lc", cmd], aggregated_output=out,
                        status="completed" if code == 0 else "failed")
            if code is None:
                item.pop("exit_code")
            else:
                item["exit_code"] = code
            self.body.append(ev)
        res = copy.deepcopy(self.output)
        res["payload"].update(call_id=cid, output=header(code, out) if output is None else output)
        self.body.append(res)
        return self

    def patch(self, path: str, report: str | None = None, body: str = FIX) -> Tui0169:
        self.n += 1
        cid = f"call_{self.n}"
        self.body.append({"timestamp": "2026-12-03T00:12:20.580Z", "type": "response_item",
                          "payload": {"type": "custom_tool_call", "status": "completed",
                                      "call_id": cid, "name": "apply_patch",
                                      "input": PATCH.format(f=path, body=body)}})
        self.body.append({"timestamp": "2026-12-03T00:12:20.581Z", "type": "response_item",
                          "payload": {"type": "custom_tool_call_output", "call_id": cid,
                                      "output": report or f"Success. Updated the following "
                                                          f"files:\nM {path}"}})
        return self

    def write(self, tmp_path: Path) -> Path:
        path = tmp_path / "rollout-2026-12-03T00-12-20-01a2393e-b426-7cc3-892d-8f30f1c8d939.jsonl"
        path.write_text("".join(json.dumps(ln) + "\n"
                                for ln in self.head + self.body + self.tail))
        return path


def session_of(path: Path) -> Session:
    meta = read_rollout(path).meta
    assert meta is not None
    return Session(meta.id, str(path), "vscode", meta.cwd, None, 0, "enabled", "", "pending",
                   "", 0, git_branch="main")


def v1(path: Path) -> tuple[str, str]:
    """What the offline backend keeps, through the phase-1 input as the runner builds it."""
    out = OfflinePhase1().extract(build_input(read_rollout(path)), session_of(path))
    return out.raw_memory, out.rollout_summary


def v2(path: Path) -> str:
    return OfflinePhase1().extract(build_input_v2(read_rollout(path)), session_of(path)) \
        .rollout_summary


def outcomes(path: Path) -> list[tuple[str, int | None, str]]:
    inp = build_input(read_rollout(path))
    return [(r.command, r.exit_code, r.outcome)
            for r in session_commands(inp.items, inp.exit_codes).commands]


# -- exit codes, in every shape ---------------------------------------------------------------

def test_the_0169_header_and_the_item_completed_event_give_the_exit_code(tmp_path) -> None:
    path = ROLLOUTS / "codex-0.169-tui.jsonl"  # the capture as Codex wrote it
    assert outcomes(path) == [("echo 'FAILED test_import'; false", 1, FAILED)]
    # the output without its header: the CommandExecution event still gives the code
    s = Tui0169().run("make check", 2, "boom", output="boom").write(tmp_path)
    assert outcomes(s) == [("make check", 2, FAILED)]
    s = Tui0169().run("make check", 0, "ok", output="ok").write(tmp_path)
    assert outcomes(s) == [("make check", 0, SUCCESS)]


def test_the_old_json_envelope_is_decoded_and_the_shell_wrapper_removed() -> None:
    path = ROLLOUTS / "codex-0.34-no-source.jsonl"  # `shell` + {"output", "metadata"}
    assert outcomes(path) == [("python -m ledger.import sample.csv", 1, FAILED)]
    inp = build_input(read_rollout(path))
    patches = session_commands(inp.items).patches  # apply_patch through the old shell tool
    assert [(p.files, p.applied) for p in patches] == [(("ledger/import.py",), True)]
    raw, summary = v1(path)
    assert "`python -m ledger.import sample.csv` failed (skipped row 19" in raw
    assert "bash -lc" not in raw + summary and "apply_patch" not in raw + summary
    assert "ledger/import.py changed afterwards, not re-run in the session" in raw
    assert "task_outcome: uncertain" in raw  # changed, but nothing shows it works


def legacy(tmp_path: Path, runs: list[tuple[str, str, int | None]]) -> Path:
    """A 0.9x `shell_command` session: freeform outputs, `exec_command_end` events beside."""
    meta = lines_of("cli-preferences.jsonl")[0]
    meta["payload"]["cli_version"] = "0.98.0"
    out = [meta, {"timestamp": "2026-12-01T06:40:04.488Z", "type": "response_item",
                  "payload": {"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": REQUEST}]}}]
    for k, (cmd, text, code) in enumerate(runs):
        cid = f"call_{k}"
        out.append({"timestamp": "2026-12-01T06:40:11.788Z", "type": "response_item",
                    "payload": {"type": "function_call", "name": "shell_command",
                                "arguments": json.dumps({"command": cmd, "workdir": "/w"}),
                                "call_id": cid}})
        out.append({"timestamp": "2026-12-01T06:40:12.000Z", "type": "response_item",
                    "payload": {"type": "function_call_output", "call_id": cid,
                                "output": text}})
        if code is not None:
            out.append({"timestamp": "2026-12-01T06:40:12.001Z", "type": "event_msg",
                        "payload": {"type": "exec_command_end", "call_id": cid, "stdout": "",
                                    "stderr": "", "aggregated_output": "", "exit_code": code,
                                    "duration": {"secs": 0, "nanos": 400000000},
                                    "formatted_output": ""}})
    path = tmp_path / "rollout-2026-12-01T06-39-42-01a23054-a1fc-7969-acf0-6947af085e83.jsonl"
    path.write_text("".join(json.dumps(ln) + "\n" for ln in out))
    return path


def test_freeform_outputs_and_exec_command_end_events(tmp_path) -> None:
    path = legacy(tmp_path, [
        ("pytest -q", "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nE   assert 1 == 2", None),
        ("make lint", "lint output printed without any header", 2),  # the event's code
        ("make docs", "done", None),  # no code anywhere: unknown
    ])
    assert outcomes(path) == [("pytest -q", 1, FAILED), ("make lint", 2, FAILED),
                              ("make docs", None, UNKNOWN)]


def test_exit_zero_with_error_words_is_a_success(tmp_path) -> None:
    code = "try {\n  pay()\n} catch (error) {\n  console.error('Error: payment failed')\n}"
    path = (Tui0169().run("sed -n 1,40p src/pay.ts", 0, code)
            .run("cat docs/spec-template.md", 0, "## Error handling\nTraceback: see below")
            .run("pytest -q", 0, "1 failed test fixed; 12 passed").write(tmp_path))
    assert [o for _, _, o in outcomes(path)] == [SUCCESS, SUCCESS, SUCCESS]
    raw, summary = v1(path)
    assert "failed" not in raw + summary and "problem" not in raw + summary
    assert "task_outcome: success" in raw
    account = v2(path)
    assert "failed" not in account and "catch (error)" not in account
    assert "- Ran `pytest -q`: exited with code 0\n" in account
    # the look-ups fold into one line after the work, whatever they printed
    assert ("- Looked up (2): `sed -n 1,40p src/pay.ts`, `cat docs/spec-template.md`\n"
            in account)
    assert account.index("- Ran `pytest -q`") < account.index("- Looked up (2)")


def test_a_search_that_finds_nothing_is_no_match(tmp_path) -> None:
    path = (Tui0169().run("rg -n 'LEGACY_PUSH_URL|legacyPushUrl' src", 1, "")
            .run("cd src && git grep -n legacy_rate", 1, "")
            .run("grep -c legacy_rate config.yaml", 1, "0")
            .run("find . -name '*.orig'", 0, "")
            .run("rg -n foo nowhere/", 2, "rg: nowhere/: No such file or directory (os error 2)")
            .write(tmp_path))
    assert [o for _, _, o in outcomes(path)] == [NO_MATCH, NO_MATCH, NO_MATCH, NO_MATCH, FAILED]
    raw, summary = v1(path)
    assert "LEGACY_PUSH_URL" not in raw + summary and "legacy_rate" not in raw + summary
    # the search that errored is a failed look-up: told in the summary, never a problem
    assert "task_outcome: success" in raw and "rg -n foo" not in raw
    assert "- References: `rg -n foo nowhere/` failed: rg: nowhere/: No such file" in summary
    account = v2(path)
    assert "- Looked up (5): `rg -n 'LEGACY_PUSH_URL|legacyPushUrl' src`, `cd src" in account
    assert "exited with code 1" not in account  # a search that found nothing did not fail
    assert "not finished" not in account and "Open questions" not in account


def test_powershell_and_findstr_searches(tmp_path) -> None:
    assert unwrap_shell(["powershell.exe", "-NoProfile", "-Command", "Select-String -Path a.cs "
                         "-Pattern Parse"]) == "Select-String -Path a.cs -Pattern Parse"
    path = (Tui0169().run("Select-String -Path .\\src\\a.cs -Pattern 'DateTime.Parse'", 1, "")
            .run("findstr /s /i legacy *.cs", 1, "").write(tmp_path))
    assert [o for _, _, o in outcomes(path)] == [NO_MATCH, NO_MATCH]


# -- failures and their fixes -----------------------------------------------------------------

FAIL = ("F tests/test_refunds.py::test_partial_refund_keeps_fee\n"
        "E       AssertionError: assert Decimal('0.35000001') == Decimal('0.35')\n1 failed")


def test_a_failure_followed_by_its_fix_is_remembered_with_the_fix(tmp_path) -> None:
    path = (Tui0169().run("pytest tests/test_refunds.py -q", 1, FAIL)
            .run("sed -n '20,40p' payouts/refunds.py", 0, "fee = amount * rate")
            .patch("payouts/refunds.py")
            .run("pytest tests/test_refunds.py -q", 0, "3 passed")
            .run("pytest -q", 0, "148 passed").write(tmp_path))
    raw, summary = v1(path)
    line = ("`pytest tests/test_refunds.py -q` failed (E       AssertionError: assert "
            "Decimal('0.35000001') == Decimal('0.35')); fixed by changing payouts/refunds.py: "
            "`fee = (Decimal(str(rate)) * amount).quantize(CENT, rounding=ROUND_HALF_EVEN)`; "
            "it then passed")
    assert f"- failure: {line}\n" in raw
    assert f"- Failures and how to do differently: {line}\n" in summary
    assert "task_outcome: success" in raw and "open problem" not in raw
    account = v2(path)
    assert f"- Failure and fix: {line}\n" in account
    assert "Changed files: `payouts/refunds.py`" in account
    assert "- Outcome: done: no command was left failing" in account


def test_a_broader_run_or_a_fixing_command_resolves_a_failure(tmp_path) -> None:
    assert resolves("pytest tests/a.py::test_b -x", "pytest -x tests/a.py")
    assert resolves("cargo test -p tile-core", "cargo test --workspace")
    assert not resolves("python -m ledger.import a.csv", "python -m pytest")
    assert not resolves("make check-quick", "make check")
    path = (Tui0169().run("npm run build", 1, "ERROR in src/app.ts: Cannot find module 'zod'")
            .run("npm install zod@3.23.8", 0, "added 1 package")
            .run("npm run build", 0, "built in 2.1s").write(tmp_path))
    raw, _ = v1(path)
    assert ("- failure: `npm run build` failed (ERROR in src/app.ts: Cannot find module "
            "'zod'); fixed after running `npm install zod@3.23.8`; it then passed") in raw


def test_a_failure_never_fixed_is_one_open_problem_not_a_fact(tmp_path) -> None:
    t = Tui0169()
    for _ in range(3):
        t.run("npm run build", 1, "ERROR in src/app.ts: Cannot find module 'zod'")
    path = t.write(tmp_path)
    raw, summary = v1(path)
    assert raw.count("npm run build") == 1 and summary.count("npm run build") == 1
    assert ("- open problem: `npm run build` failed 3 times: ERROR in src/app.ts: Cannot find "
            "module 'zod'; it did not pass later in the session") in raw
    assert not [ln for ln in raw.splitlines() if ln.startswith("- fact:") and "npm" in ln]
    assert "task_outcome: partial" in raw
    account = v2(path)
    assert "- Task 1: `npm run build` still failed (exit code 1) when the session ended." in account


def test_a_failed_look_up_is_not_a_problem(tmp_path) -> None:
    assert is_probe("cat docs/missing.md") and is_probe("ls tests/ 2>/dev/null")
    assert is_probe("git log --oneline -5") and is_probe("rg -n 'a|b' src | head -3")
    assert not is_probe("sed -i s/a/b/ f") and not is_probe("echo x > f")
    assert not is_probe("git commit -m x") and not is_probe("pytest -q")
    assert is_probe("npm ls eslint") and is_probe("node --version") and is_probe("git branch -a")
    assert not is_probe("git branch -D old") and not is_probe("find . -name '*.pyc' -delete")
    assert not is_probe("env CI=1 pytest -q") and not is_probe("npm install zod")
    path = (Tui0169().run("cat docs/missing.md", 1, "cat: docs/missing.md: No such file")
            .run("pytest -q", 0, "12 passed").write(tmp_path))
    raw, summary = v1(path)
    assert "task_outcome: success" in raw and "missing.md" not in raw
    assert "- References: `cat docs/missing.md` failed: cat: docs/missing.md" in summary


def test_a_patch_that_did_not_apply_is_not_a_fix(tmp_path) -> None:
    path = (Tui0169().run("pytest -q", 1, FAIL)
            .patch("payouts/refunds.py", "apply_patch verification failed: Failed to find "
                                         "expected lines in payouts/refunds.py")
            .write(tmp_path))
    stories = failure_stories(session_commands(build_input(read_rollout(path)).items))
    assert [(s.status, s.files) for s in stories] == [(OPEN, ())]
    assert "Changed files" not in v2(path)


def test_a_command_still_running_takes_its_exit_code_from_write_stdin(tmp_path) -> None:
    t = Tui0169().run("npm run dev-check", None, "starting…\n", event=False)
    t.n += 1
    t.body.append({"timestamp": "2026-12-03T00:12:20.590Z", "type": "response_item",
                   "payload": {"type": "function_call", "name": "write_stdin",
                               "arguments": json.dumps({"session_id": 7, "chars": ""}),
                               "call_id": "call_poll"}})
    t.body.append({"timestamp": "2026-12-03T00:12:20.599Z", "type": "response_item",
                   "payload": {"type": "function_call_output", "call_id": "call_poll",
                               "output": header(3, "check failed: port 5173 in use")}})
    path = t.write(tmp_path)
    assert outcomes(path) == [("npm run dev-check", 3, FAILED)]
    raw, _ = v1(path)
    assert "`npm run dev-check` failed: check failed: port 5173 in use" in raw


def test_a_command_still_running_takes_the_code_its_event_recorded(tmp_path) -> None:
    # 0.169: the output chunk says "running"; the CommandExecution event has how it ended
    path = Tui0169().run("npm run e2e", 0, "ok", output=header(None, "starting…\n")) \
        .write(tmp_path)
    assert outcomes(path) == [("npm run e2e", 0, SUCCESS)]


def test_a_bare_verdict_gives_way_to_the_line_that_names_the_failure() -> None:
    go = ("--- FAIL: TestCreateOrder_Discount (0.00s)\n"
          "    service_test.go:58: total = 8999, want 9000\nFAIL\n"
          "FAIL\tgitee.com/jiuzhou/order-service/internal/order\t0.014s\nFAIL\n")
    assert reason(go) == "--- FAIL: TestCreateOrder_Discount (0.00s)"
    assert reason("FAILED\n") == "FAILED"  # nothing better: the verdict itself


def test_the_reason_is_the_telling_line() -> None:
    assert reason("Traceback (most recent call last):\n  File \"a.py\", line 3\n"
                  "geo.errors.InvalidGeometry: ring not closed\n") == \
        "geo.errors.InvalidGeometry: ring not closed"
    assert reason("===== FAILURES =====\n___ test_x ___\nE   assert 1 == 2\n1 failed") == \
        "E   assert 1 == 2"
    assert reason("│ Error: configuring Terraform AWS Provider\n│") == \
        "Error: configuring Terraform AWS Provider"
    assert reason("╷\n│ Error: configuring Terraform AWS Provider: failed to get profile\n│ \n"
                  "│   on providers.tf line 9\n│ Error: the SSO session has expired\n╵") == \
        ("Error: configuring Terraform AWS Provider: failed to get profile / "
         "Error: the SSO session has expired")
    assert reason("") == ""


# -- bad input: an output memdeck does not understand gives no outcome and no content ---------

def test_an_output_in_an_unknown_shape_gives_no_outcome_and_nothing_invented(tmp_path) -> None:
    weird = ['{"result": {"exit": 1}, "error": "boom"}', "Process exited with code one\nerror",
             "Exit status: 1\nerror: it broke", "FAILED everything, error, traceback"]
    t = Tui0169("Run the checks.")
    for text in weird:
        t.run("make check", None, output=text, event=False)
    path = t.write(tmp_path)
    assert {o for _, _, o in outcomes(path)} == {UNKNOWN}
    raw, summary = v1(path)
    assert (raw, summary) == ("", "")  # nothing durable, nothing made up
    account = v2(path)
    assert "failed" not in account and "boom" not in account and "broke" not in account
    assert account.count("exit code unknown") == len(weird)
    assert "- Outcome: unknown: no tool result shows how it ended" in account
    # items of the wrong types are skipped, not guessed at
    junk: list[dict[str, Any]] = [
        {"type": "function_call", "call_id": "x", "name": "exec_command", "arguments": "{not json"},
        {"type": "function_call_output", "call_id": "x", "output": header(1, "err")},
        {"type": "function_call", "call_id": 5, "arguments": json.dumps({"cmd": "ls"})},
        {"type": "function_call", "call_id": "y", "arguments": json.dumps(["cmd"])},
        {"type": "function_call_output", "call_id": "y", "output": {"weird": True}},
        {"type": "local_shell_call", "call_id": "z", "action": "ls"},
    ]
    assert session_commands(junk).commands == ()
    assert extract(junk, "/w", None).raw_memory == ""


def test_event_codes_reach_both_backends_through_the_phase1_input(tmp_path) -> None:
    path = Tui0169().run("make check", 2, "FAILED x", output="FAILED x").write(tmp_path)
    assert build_input(read_rollout(path)).exit_codes == {"call_1": 2}
    assert build_input_v2(read_rollout(path)).exit_codes == {"call_1": 2}
    raw, _ = v1(path)
    assert "- open problem: `make check` failed: FAILED x" in raw
    assert "- Ran `make check`: exited with code 2 (FAILED x)" in v2(path)
    # without the events the same output has no exit code: unknown, nothing kept
    inp = build_input(read_rollout(path))
    assert "make check" not in extract(inp.items, "/w", None).raw_memory
    summary, _ = extract_v2(inp.items, "/w", None)
    assert "- Ran `make check`: exit code unknown" in summary


def test_stories_are_told_once_per_command() -> None:
    items: list[dict[str, Any]] = []
    for k, (cmd, code) in enumerate([("make test", 1), ("make test", 1), ("make lint", 1),
                                     ("make test", 0)]):
        items += [{"type": "function_call", "call_id": str(k), "name": "exec_command",
                   "arguments": json.dumps({"cmd": cmd})},
                  {"type": "function_call_output", "call_id": str(k), "output": header(code, "")}]
    items.insert(5, {"type": "custom_tool_call", "call_id": "p", "name": "apply_patch",
                     "input": PATCH.format(f="Makefile", body="+test: lint")})
    stories = failure_stories(session_commands(items))
    # the patch came before `make lint` failed: it fixed `make test` only
    assert [(s.command, s.runs, s.status, s.files) for s in stories] == [
        ("make test", 2, FIXED, ("Makefile",)), ("make lint", 1, OPEN, ())]


def test_a_fix_reaches_memory_md_and_an_open_problem_stays_in_its_session(tmp_path) -> None:
    fixed = (Tui0169().run("pytest tests/test_refunds.py -q", 1, FAIL).patch("payouts/refunds.py")
             .run("pytest tests/test_refunds.py -q", 0, "3 passed").write(tmp_path))
    raw_fixed, summary = v1(fixed)
    assert "- Key steps: changed `payouts/refunds.py`" in summary
    assert "- Key steps: `pytest tests/test_refunds.py -q` passed (exit code 0)" in summary
    assert "payouts/refunds.py" in raw_fixed.split("---")[1]  # a keyword of the task
    (tmp_path / "open").mkdir()
    broken = Tui0169().run("npm run build", 1, "ERROR in src/app.ts").write(tmp_path / "open")
    raw_open, _ = v1(broken)
    mems = [SelectedMemory(f"0194f5a6-89ab-7cde-8123-45678900000{k}", 1_764_000_000, raw,
                           "summary", slug, f"/r/{k}.jsonl", "/home/dev/src/ledger", "main")
            for k, (raw, slug) in enumerate([(raw_fixed, "refunds"), (raw_open, "build")])]
    out = merge_memory("", mems, {m.file_stem for m in mems})
    failures = out.split("## Failures and how to do differently")[1]
    assert "`pytest tests/test_refunds.py -q` failed (E" in failures and "[Task 1]" in failures
    assert "npm run build" not in failures  # an open problem is no lesson learnt
    assert "## Task 2: Fix the refund tests, partial" in out  # but its task says how it ended


def test_what_ran_is_ranked_by_what_it_proves(tmp_path) -> None:
    path = (Tui0169().run("rg -n refund src", 0, "src/refund.py:3: def refund")
            .run("cp .env.example .env", 0, "")
            .run("npm install", 0, "added 3 packages")
            .run("cat src/refund.py", 0, "def refund(): ...")
            .run("ruff check src", 0, "All checks passed!")
            .run("pytest -q tests/test_refund.py", 0, "3 passed")
            .write(tmp_path))
    ran = [ln for ln in v2(path).splitlines() if ln.startswith(("- Ran ", "- Looked up"))]
    assert ran == ["- Ran `pytest -q tests/test_refund.py`: exited with code 0",
                   "- Ran `ruff check src`: exited with code 0",
                   "- Ran `npm install`: exited with code 0",
                   "- Ran `cp .env.example .env`: exited with code 0",
                   "- Looked up (2): `rg -n refund src`, `cat src/refund.py`"]


@pytest.mark.parametrize(("code", "out"), [
    (130, "Compiled successfully\nwaiting for file changes"),  # the shell's 128 + SIGINT
    (-2, "Serving on http://127.0.0.1:8000"),  # killed by SIGINT
    (1, "Watching for changes...\n^C"),  # a dev server stopped with Ctrl-C
])
def test_a_server_stopped_with_ctrl_c_is_never_a_failure(tmp_path, code: int, out: str) -> None:
    path = (Tui0169().run("npm run dev", code, out)
            .run("pytest -q", 0, "12 passed").write(tmp_path))
    assert [o for _, _, o in outcomes(path)] == [INTERRUPTED, SUCCESS]
    raw, summary = v1(path)
    assert "task_outcome: success" in raw and "failed" not in raw + summary
    account = v2(path)
    assert "- Ran `npm run dev`: stopped with Ctrl-C (not a failure)" in account
    assert "Open problem" not in account and "not finished" not in account
