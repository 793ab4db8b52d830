"""Memory V2 phase 1 (docs/codex-format.md "Phase 1 input, v2"): the tiered input, two output
fields, an empty raw memory, the V2 no-output rule, and the V2 database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from llm_server import json_reply

from memdeck.engine import Engine
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.codex.schema import create_memories_db
from memdeck.engine.phase1.input_v2 import (
    CHUNK_BYTES,
    MAX_ROW_BYTES,
    OMITTED,
    build_input_v2,
    build_rows,
    select_rows,
    split_chunks,
)
from memdeck.tui.cli import main

CLI = "01a23054-a1fc-7969-acf0-6947af085e83"  # cli-preferences.jsonl
V2_SCHEMA = {"type": "object", "properties": {"rollout_summary": {"type": "string"},
                                               "rollout_slug": {"type": "string"}},
             "required": ["rollout_summary", "rollout_slug"], "additionalProperties": False}


def user(text: str, **kw) -> dict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}],
            **kw}


def assistant(text: str, phase: str | None = None) -> dict:
    item = {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}
    return {**item, "phase": phase} if phase else item


def labels(rows) -> list[str]:
    return [r.text.split("\n", 1)[0] for r in rows]


# -- the input ---------------------------------------------------------------------------------
def test_rows_are_labelled_like_codex(fixture_path) -> None:
    """What Codex 0.169 rendered for this fixture (recorded from its phase-1 request), row by
    row; memdeck only redacts more (the database password in a URL)."""
    inp = build_input_v2(read_rollout(fixture_path("cli-preferences.jsonl")))
    assert inp.version == "v2" and inp.omitted_items == 0
    heads = [ln for ln in inp.text.splitlines() if ln.startswith("[")]
    assert heads == ["[harness context]", "[human user]", "[tool]", "[tool]",
                     "[assistant commentary]", "[tool]", "[tool]", "[human user]",
                     "[assistant final]"]
    assert "# AGENTS.md instructions" not in inp.text  # stripped, as in V1
    assert '[human user]\n{"type":"message","role":"user","content":[{"type":"input_text",' \
           '"text":"The checkout tests fail.' in inp.text
    assert "AKIAC2C47M57H3SPQMNK" not in inp.text and "[REDACTED_SECRET]" in inp.text
    assert inp.text.endswith('"phase":"final_answer"}\n')


def test_tiers_media_questions_and_caps() -> None:
    items = [
        user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "look at this"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]},
        {"type": "function_call", "name": "request_user_input", "call_id": "q1",
         "arguments": '{"question":"which db?"}'},
        {"type": "function_call_output", "call_id": "q1", "output": "postgres"},
        {"type": "agent_message", "author": "reviewer", "content": [
            {"type": "input_text", "text": "LGTM"}]},
        user("<subagent_notification>done</subagent_notification>"),
        {"type": "function_call", "name": "exec_command", "call_id": "c1",
         "arguments": '{"cmd":"cat big"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "x" * 50_000},
        {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
         "input": "y" * 50_000},
        user("thanks", status="completed",
             internal_chat_message_metadata_passthrough={"content_item_kinds": ["user.text"]}),
        user("injected", internal_chat_message_metadata_passthrough={
            "content_item_kinds": ["memories.instructions"]}),
    ]
    rows = build_rows(items)
    assert labels(rows) == ["[harness context]", "[human user]", "[human user]",
                            "[other agent]", "[other agent]", "[tool]", "[tool]", "[tool]",
                            "[human user]", "[harness context]"]
    assert "[image omitted]" in rows[1].text and "base64" not in rows[1].text
    assert rows[2].text == ('[human user]\nAssistant question: {"question":"which db?"}\n'
                            'Human reply: "postgres"\n')
    output_row, patch_row = rows[6], rows[7]
    assert "tokens truncated…" in output_row.text and output_row.size < 8_100
    assert patch_row.size <= MAX_ROW_BYTES and "tokens truncated…" in patch_row.text
    assert '"status"' not in rows[8].text and "passthrough" not in rows[8].text


def test_budget_keeps_users_first_newest_first_and_marks_gaps() -> None:
    items = [user(f"request {i}") for i in range(3)]
    items += [{"type": "function_call_output", "call_id": f"c{i}", "output": "o" * 300}
              for i in range(6)]
    items += [assistant("all done")]
    rows = build_rows(items)
    sizes = {r.index: r.size for r in rows}
    budget = sum(sizes[i] for i in (0, 1, 2, 9)) + sizes[8] + sizes[7] + len(OMITTED)
    text, omitted = select_rows(rows, budget)
    assert omitted == 4
    kept = [ln for ln in text.splitlines() if ln.startswith("[")]
    # three requests, the newest two tool outputs, the final answer; one gap marker
    assert kept == ["[human user]"] * 3 + ["[... response items omitted ...]"] + \
        ["[tool]"] * 2 + ["[assistant final]"]
    assert text.count(OMITTED) == 1 and '"call_id":"c5"' in text and '"c0"' not in text
    # the marker does not fit beside them: the least important row chosen gives way
    text, omitted = select_rows(rows, budget - 1)
    assert omitted == 5 and '"call_id":"c4"' not in text and "[assistant final]" in text
    assert select_rows(rows, 10) == ("", len(rows))  # nothing fits: the input is empty


def test_chunks_are_at_most_8900_bytes_and_keep_characters_whole() -> None:
    text = ("é" * 3_000 + "a") * 5
    chunks = split_chunks(text)
    assert "".join(chunks) == text
    assert all(len(c.encode()) <= CHUNK_BYTES for c in chunks)
    # byte 8,900 falls inside an "é": the first piece stops one byte short
    assert len(chunks) == 4 and len(chunks[0].encode()) == CHUNK_BYTES - 1
    assert len(split_chunks("a" * 9_000)[0]) == CHUNK_BYTES
    assert split_chunks("short") == ["short"]


# -- through the command -------------------------------------------------------------------
def v2_home(home) -> Path:
    home.add("cli-preferences.jsonl")
    home.add("subagent-review.jsonl")
    home.add("cites-memories.jsonl")
    return home.root


def test_offline_v2_extract_writes_a_summary_only_to_the_v2_db(capsys, home) -> None:
    root = v2_home(home)
    assert main(["extract", "--backend", "offline", "--json", "--home", str(root)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pipeline_db"].endswith("memdeck/memories_v2.sqlite")  # no Codex DB yet
    assert not (root / "memories").exists() and not (root / "memories_v2").exists()
    assert not (root / "memories_1.sqlite").exists()
    assert not (root / "memdeck" / "memories.sqlite").exists()
    conn = sqlite3.connect(root / "memdeck" / "memories_v2.sqlite")
    rows = {r[0]: r[1:] for r in conn.execute(
        "SELECT thread_id, raw_memory, rollout_summary, rollout_slug FROM stage1_outputs")}
    conn.close()
    raw, summary, slug = rows[CLI]
    assert raw == "" and slug == "the_checkout_tests_fail"
    assert summary.startswith("# The checkout tests fail\n")
    assert "folder `/home/dev/src/widget`, branch `main`" in summary
    assert "Ran `make check-quick`: exited with code 2" in summary
    assert "Changed files: `shop/money.py`" in summary
    assert "(its words, not verified)" in summary  # the assistant is quoted as itself
    assert "AKIAC2C47M57H3SPQMNK" not in summary  # redacted on the way in
    statuses = {s.id: s.status for s in Engine.open(root).sessions()}
    assert statuses[CLI] == "extracted"


def test_v2_writes_go_to_codex_v2_db_when_it_exists(capsys, home) -> None:
    root = v2_home(home)
    create_memories_db(root / "memories_v2_1.sqlite")
    assert main(["extract", "--backend", "offline", "--json", "--home", str(root)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pipeline_db"] == str(root / "memories_v2_1.sqlite")
    conn = sqlite3.connect(root / "memories_v2_1.sqlite")
    assert conn.execute("SELECT raw_memory FROM stage1_outputs WHERE thread_id = ?",
                        (CLI,)).fetchone() == ("",)
    conn.close()
    assert not (root / "memories_1.sqlite").exists()


def test_openai_v2_request_and_no_output_rule(capsys, home, llm_server) -> None:
    root = v2_home(home)
    eng = Engine.open(root)
    eng.config_set("memdeck.base_url", llm_server.url)
    eng.config_set("memdeck.max_retries", "0")
    big = root / "sessions" / "2026" / "12" / "01" / "rollout-2026-12-01T10-00-00-big.jsonl"
    lines = (big.parent / "rollout-2026-12-01T10-00-00-cli-preferences.jsonl").read_text()
    tid = "01a23055-0000-7000-8000-000000000001"
    out = json.dumps({"timestamp": "2026-12-01T06:41:00Z", "type": "response_item",
                      "payload": {"type": "function_call_output", "call_id": "x",
                                  "output": "z" * 7_000}})
    big.write_text(lines.replace(CLI, tid) + (out + "\n") * 4, encoding="utf-8")
    home.touch(big, 8)

    def handler(body):
        text = "".join(m["content"] for m in body["messages"] if m["role"] == "user")
        if big.name in text:  # the rollout_path the prompt names
            return json_reply({"rollout_summary": "", "rollout_slug": ""})  # nothing to keep
        return json_reply({"rollout_summary": "# Checkout\nuser wants make check-quick\n"
                           + "- a detail\n" * 2_000, "rollout_slug": "checkout"})

    llm_server.handler = handler
    assert main(["extract", "--backend", "openai", "--json", "--home", str(root)]) == 0
    outcomes = {r["thread_id"]: r["outcome"] for r in json.loads(capsys.readouterr().out)
                ["results"]}
    assert outcomes[CLI] == "extracted" and outcomes[tid] == "no_output"
    bodies = [r.body for r in llm_server.chat_requests()]
    for body in bodies:
        assert body["response_format"]["json_schema"]["schema"] == V2_SCHEMA
        assert "rollout_summary` and" in body["messages"][0]["content"]  # the V2 system prompt
        users = [m["content"] for m in body["messages"][1:]]
        assert all(m["role"] == "user" for m in body["messages"][1:])
        assert all(len(u.encode()) <= CHUNK_BYTES for u in users)
        assert "[human user]" in "".join(users) and "git branch (hint): main" in users[0]
    big_body = next(b for b in bodies if big.name in json.dumps(b))
    assert len(big_body["messages"]) >= 4  # the system prompt and three or more pieces
    conn = sqlite3.connect(root / "memdeck" / "memories_v2.sqlite")
    rows = dict(conn.execute("SELECT thread_id, raw_memory FROM stage1_outputs"))
    summary = conn.execute("SELECT rollout_summary FROM stage1_outputs WHERE thread_id = ?",
                           (CLI,)).fetchone()[0]
    conn.close()
    assert CLI in rows and tid not in rows and set(rows.values()) == {""}
    # cut to 9,000 bytes as Codex cuts a V2 summary, head and tail kept
    assert summary.startswith("# Checkout\n") and "tokens truncated…" in summary
    assert len(summary.encode()) <= 9_000 + 40
