"""Pastes without fences are recognised, and the user's own sentences around a paste, fenced
or not, are kept as their words (issue 25, item 3)."""

from __future__ import annotations

import json

import pytest

from memdeck.engine.backends.offline_phase1 import extract
from memdeck.engine.backends.offline_phase1_v2 import extract_v2
from memdeck.engine.codex.user_words import words_of_text

BEFORE = "Here is what I get on staging"
AFTER = "Please add a regression test and keep the public API unchanged"

PASTES = {
    "sql": ("SELECT o.id, o.total, u.email\nFROM orders o\nJOIN users u ON u.id = o.user_id\n"
            "WHERE o.created_at > now() - interval '7 days'\nORDER BY o.total DESC;"),
    "plan": (" Seq Scan on orders  (cost=0.00..4512.00 rows=120000 width=16)\n"
             "   Filter: (status = 'open'::text)\n   Rows Removed by Filter: 2000\n"
             " Planning Time: 0.210 ms\n Execution Time: 45.901 ms"),
    "log": ("2026-11-02 10:01:22,114 ERROR worker.main Failed to connect to redis at "
            "10.0.0.5:6379\n2026-11-02 10:01:22,115 INFO worker.main retrying in 5s\n"
            "2026-11-02 10:01:27,116 ERROR worker.main Failed to connect to redis"),
    "python traceback": ('Traceback (most recent call last):\n  File "app/jobs.py", line 41, '
                         'in run\n    total = sum(x.amount for x in rows)\n'
                         "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"),
    "java stack trace": ('Exception in thread "main" java.lang.NullPointerException: name is '
                         "null\n\tat com.acme.Foo.bar(Foo.java:42)\n"
                         "\tat com.acme.Main.main(Main.java:10)"),
    "go panic": ("panic: runtime error: index out of range [3] with length 3\n\n"
                 "goroutine 1 [running]:\nmain.pick(...)\n\t/src/app/main.go:14\n"
                 "main.main()\n\t/src/app/main.go:20 +0x1d"),
    "json": json.dumps({"user": {"id": 4, "roles": ["admin", "admin"]}, "ok": True},
                       indent=2),
    "diff": ("--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n-import os\n+import sys\n"
             " print(1)"),
}


@pytest.mark.parametrize("kind", list(PASTES))
@pytest.mark.parametrize("fenced", [False, True], ids=["unfenced", "fenced"])
def test_a_paste_is_set_apart_and_the_sentences_around_it_are_kept(kind: str,
                                                                   fenced: bool) -> None:
    paste = f"```\n{PASTES[kind]}\n```" if fenced else PASTES[kind]
    words = words_of_text(f"{BEFORE}:\n{paste}\n{AFTER}.")
    assert words.pasted, "the paste was taken for the user's words"
    assert BEFORE in words.text and AFTER in words.text
    for line in PASTES[kind].splitlines():
        if len(line.strip()) > 12:
            assert line.strip() not in words.text


def _session(text: str) -> list[dict[str, object]]:
    return [{"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": text}]},
            {"type": "function_call", "name": "shell", "call_id": "c1",
             "arguments": '{"command": ["bash", "-lc", "pytest -q"]}'},
            {"type": "function_call_output", "call_id": "c1",
             "output": '{"output": "3 passed", "metadata": {"exit_code": 0}}'}]


@pytest.mark.parametrize("kind", ["sql", "log", "json", "diff"])
def test_the_memory_keeps_the_instruction_after_a_paste_and_not_the_paste(kind: str) -> None:
    # a long paste between two sentences: the second one is the instruction that matters
    body = "\n".join([PASTES[kind]] * 3) if kind in ("log", "sql") else PASTES[kind]
    items = _session(f"{BEFORE}:\n{body}\n{AFTER}. We always run pytest with -q here.")
    v1 = extract(items, "/home/ana/src/api", "main")
    v2, _ = extract_v2(items, "/home/ana/src/api", "main")
    for text in (v1.raw_memory, v1.rollout_summary, v2):
        assert AFTER in text
        assert "We always run pytest with -q here." in text
        # the paste is told in one line as evidence (its first error at most), never as words
        told = [ln for ln in text.splitlines() if "10.0.0.5" in ln or "o.created_at" in ln
                or "+import sys" in ln or "roles" in ln]
        assert all("pasted" in ln for ln in told), told
    prefs = [ln for ln in v1.raw_memory.splitlines() if ln.startswith("- user preference")]
    assert prefs == ["- user preference: We always run pytest with -q here."]


def test_a_bot_alert_between_pastes_is_part_of_the_paste_not_the_users_rule() -> None:
    text = ("The alert and the slow query:\n"
            "[pgwatch] ALERT slow_query p95>2s db=shop host=pg-prod-2\n"
            "Suggested action (auto): prefer a composite index; never add indexes at noon.\n"
            "2026-05-06 08:14:52.118 UTC [41122] LOG:  duration: 2843.551 ms  statement: "
            "SELECT 1\n"
            "Add an index that fixes it.")
    words = words_of_text(text)
    assert "prefer a composite" not in words.text and "never add" not in words.text
    assert words.text.startswith("The alert and the slow query:")
    assert words.text.endswith("Add an index that fixes it.")


def test_a_go_panic_with_its_goroutine_frames_is_one_paste() -> None:
    panic = ("panic: runtime error: invalid memory address or nil pointer dereference\n"
             "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1a2b3c4]\n\n"
             "goroutine 1287 [running]:\n"
             "github.com/acme/orderflow/internal/order.(*Handler).GetOrder(0xc0001a2c80)\n"
             "\t/src/internal/order/handler.go:61 +0x1c4\n"
             "created by google.golang.org/grpc.(*Server).serveStreams.func2.1 in goroutine 1\n"
             "\t/go/pkg/mod/google.golang.org/grpc@v1.67.1/server.go:1029 +0x8b")
    words = words_of_text(f"This just crashed in prod:\n{panic}\nFix it in the handler.")
    assert [p.kind for p in words.pasted] == ["traceback"]
    assert "goroutine" not in words.text and "handler.go" not in words.text
    assert words.text.endswith("Fix it in the handler.")


def test_an_issue_form_pasted_whole_is_evidence_and_the_request_after_it_stays() -> None:
    form = ("### Bug report\n\n> **Before you submit:** you must search existing issues. "
            "Always include the full traceback.\n\n**Describe the bug**\n"
            "Exporting the CSV crashes when a product has no supplier.\n\n"
            "**Steps to reproduce**\n1. Open the admin\n2. Export\n\n"
            "- [x] I have searched existing issues\n- [x] I agree to be kind, always")
    words = words_of_text(f"Someone opened this issue:\n\n{form}\n\nFix it with a regression "
                          "test.")
    assert [p.kind for p in words.pasted] == ["form"]
    assert "Always include" not in words.text and "be kind" not in words.text
    assert "Fix it with a regression test." in words.text
    assert "Exporting the CSV crashes" in words.pasted[0].describe()
    # a person's own headed request is not a form: no checklist, no form headings
    mine = words_of_text("## Goal\nAdd a cache.\n\n## Constraints\n- never cache errors")
    assert not mine.pasted and "never cache errors" in mine.text
