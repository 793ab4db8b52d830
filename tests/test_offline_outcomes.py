"""The offline extractor reads a command's outcome from its exit code, in each output format
Codex has written, never from the words in its output (issue 9, requirement 1)."""

from __future__ import annotations

import json
from typing import Any

from memdeck.engine.backends.offline_phase1 import extract

REQUEST = {"type": "message", "role": "user", "content": [
    {"type": "input_text", "text": "Fix the checkout tests. We always run `make check` first."}]}


def call(cid: str, cmd: str) -> dict[str, Any]:
    return {"type": "function_call", "name": "shell_command", "call_id": cid,
            "arguments": json.dumps({"command": cmd, "workdir": "/home/dev/shop"})}


def header(cid: str, code: int, out: str) -> dict[str, Any]:  # 0.169 unified exec
    return {"type": "function_call_output", "call_id": cid,
            "output": f"Chunk ID: 5811ae\nWall time: 0.1000 seconds\n"
                      f"Process exited with code {code}\nOriginal token count: 9\n"
                      f"Output:\n{out}"}


def freeform(cid: str, code: int, out: str) -> dict[str, Any]:  # shell_command, 0.4x-0.1xx
    return {"type": "function_call_output", "call_id": cid,
            "output": f"Exit code: {code}\nWall time: 0.2 seconds\nOutput:\n{out}"}


def envelope(cid: str, code: int, out: str) -> dict[str, Any]:  # 0.34-0.58 JSON
    return {"type": "function_call_output", "call_id": cid, "output": json.dumps(
        {"output": out, "metadata": {"exit_code": code, "duration_seconds": 0.4}})}


def patch(path: str) -> dict[str, Any]:
    return {"type": "custom_tool_call", "name": "apply_patch", "call_id": "p",
            "input": f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch"}


def memory(items: list[dict[str, Any]]) -> str:
    r = extract([REQUEST, *items], "/home/dev/shop", "main")
    return r.raw_memory + r.rollout_summary


def test_exit_zero_with_error_words_is_a_success_in_every_format() -> None:
    code = "try {\n  pay()\n} catch (error) {\n  console.error('Error: payment failed')\n}"
    for fmt in (header, freeform, envelope):
        text = memory([call("1", "sed -n 1,40p src/pay.ts"), fmt("1", 0, code),
                       call("2", "cat docs/spec-template.md"),
                       fmt("2", 0, "## Failure modes\nTraceback handling: see below")])
        assert "failed" not in text and "failure:" not in text, (fmt.__name__, text)
        assert "task_outcome: success" in text


def test_a_search_with_no_match_is_not_a_failure() -> None:
    for cmd in ("rg -n 'TODO\\(legacy\\)' src", "grep -R legacy_rate src", "git grep -n foo"):
        text = memory([call("1", cmd), header("1", 1, "")])
        assert "failed" not in text, (cmd, text)
    # a search that errored (exit 2, a message) is a failure
    text = memory([call("1", "rg -n foo nowhere/"),
                   header("1", 2, "rg: nowhere/: No such file or directory (os error 2)")])
    assert "`rg -n foo nowhere/` failed: rg: nowhere/: No such file or directory" in text


def test_a_failure_is_remembered_with_its_fix() -> None:
    items = [call("1", "pytest -x -q tests/test_checkout.py"),
             envelope("1", 1, "E   AssertionError: assert Decimal('10.01') == Decimal('10.00')\n"
                              "1 failed in 0.31s"),
             patch("shop/pricing.py"),
             call("2", "pytest -x -q tests/test_checkout.py"), envelope("2", 0, "3 passed")]
    text = memory(items)
    assert ("`pytest -x -q tests/test_checkout.py` failed (E   AssertionError: assert "
            "Decimal('10.01') == Decimal('10.00')); fixed by changing shop/pricing.py") in text
    assert "task_outcome: success" in text


def test_an_unfixed_failure_is_kept_once_and_the_task_is_partial() -> None:
    items = [call(str(i), "npm run build") for i in range(3)]
    outs = [freeform(str(i), 1, "ERROR in src/app.ts: Cannot find module 'zod'") for i in range(3)]
    text = memory([x for pair in zip(items, outs, strict=True) for x in pair])
    assert text.count("`npm run build` failed") == 2  # once in the raw memory, once in the summary
    assert "task_outcome: partial" in text


def test_an_output_without_an_exit_code_is_not_a_failure() -> None:
    text = memory([call("1", "make check"),
                   {"type": "function_call_output", "call_id": "1",
                    "output": "error: something printed, but no exit code is known"}])
    assert "failed" not in text


# -- the user's own words (issue 9, requirement 2: the wrappers) ---------------------------

IDE_WRAPPED = (
    "# Context from my IDE setup:\n\n## Active file: src/billing/invoice.ts\n\n"
    "## Open tabs:\n- invoice.ts: src/billing/invoice.ts\n- package.json: package.json\n\n"
    "## My request for Codex:\nAdd a due date to invoices. We always format dates with "
    "date-fns, never moment.\n")
DESKTOP_FILES = (
    "# Files mentioned by the user:\n\n## spec.md: C:\\Users\\lan\\proj\\spec.md\n\n"
    "## My request for Codex:\nImplement the export described in spec.md.\n")
SHELL_RECORD = ("<user_shell_command>\n<command>\ngit status\n</command>\n<result>\n"
                "Exit code: 0\nOn branch main\n</result>\n</user_shell_command>")


def user(*texts: str) -> dict[str, Any]:
    return {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": t} for t in texts]}


def test_the_ide_wrapper_gives_only_the_request() -> None:
    r = extract([user(IDE_WRAPPED)], "/home/dev/billing", None)
    text = r.raw_memory + r.rollout_summary
    assert "description: Add a due date to invoices" in text
    assert r.rollout_slug == "add_a_due_date_to_invoices"
    assert "We always format dates with date-fns, never moment" in text
    for harness in ("Context from my IDE setup", "Open tabs", "Active file", "context_from"):
        assert harness not in text, harness


def test_desktop_file_mentions_and_shell_records_are_not_the_users_words() -> None:
    r = extract([user(SHELL_RECORD), user(DESKTOP_FILES + "We must keep the CSV columns "
                                          "in the order of the spec.")], "C:\\proj", None)
    text = r.raw_memory + r.rollout_summary
    assert "description: Implement the export described in spec.md" in text
    assert "Files mentioned" not in text and "user_shell_command" not in text
    assert "git status" not in text
