"""What each Codex version writes, read exactly: real rollouts captured from the binaries
(tests/fixtures/rollouts/codex-0.1*-*.jsonl: 0.118, 0.146 in code mode, 0.169, 0.171) and a
0.34-era one with no `source` key.

These run without the binary; tests/test_codex_oracle_read.py proves the same against it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memdeck.engine import Engine
from memdeck.engine.codex.fragments import source_label
from memdeck.engine.codex.rollout import Bookkeeping, EventMsg, ToolOutput, read_rollout
from memdeck.engine.codex.tool_output import decode_tool_output
from memdeck.engine.codex.transcript import transcript
from memdeck.engine.index.scan import scan_file
from memdeck.engine.index.session_index import SCAN_VERSION
from memdeck.tui.cli import main

BUNDLED = Path(__file__).resolve().parent / "fixtures" / "rollouts"
EXEC = BUNDLED / "codex-0.169-exec.jsonl"
TUI = BUNDLED / "codex-0.169-tui.jsonl"
OLD = BUNDLED / "codex-0.34-no-source.jsonl"
V171 = BUNDLED / "codex-0.171-exec.jsonl"
EXEC_ID = "01a2393e-a964-7da3-ac2a-c3bff7edfc50"
V171_ID = "01a2423d-968f-75d1-92e2-62a682f006cf"
TUI_ID = "01a2393e-b426-7cc3-892d-8f30f1c8d939"
OLD_ID = "5b8c2f4e-91d3-4a7b-b6e2-3c4d5e6f7a81"

TUI_PROMPTS = ["Check whether the importer test passes: run it.",
               "Thanks. Tell me which file to look at first."]
TUI_ANSWERS = ["The importer test fails (exit code 1).", "Start with ledger/import.py."]
OLD_PROMPTS = ["Why does the ledger import skip rows? We keep amounts in cents, never floats.",
               "Convert them to cents on import then."]

# fixture -> (id, stored source, label, status at 8 h idle, preview)
CASES = {
    "exec": (EXEC, EXEC_ID, "exec", "exec", "not_interactive",
             "Run the smoke check and tell me how it ends."),
    "tui": (TUI, TUI_ID, "vscode", "Codex TUI", "eligible", TUI_PROMPTS[0]),
    "0.34": (OLD, OLD_ID, "vscode", "CLI", "eligible", OLD_PROMPTS[0]),
    "0.118": (BUNDLED / "codex-0.118-exec-command-header.jsonl",
              "01a2423d-8760-76b0-9668-a0f4855b3c14", "exec", "exec", "not_interactive",
              "Run the price check and fix it if it fails."),
    "0.146": (BUNDLED / "codex-0.146-code-mode-exec.jsonl",
              "01a2423d-b951-72e2-b124-a503c8b046b7", "exec", "exec", "not_interactive",
              "Run the price check and fix it if it fails."),
    "0.171": (V171, V171_ID, "exec", "exec", "not_interactive",
              "Run the smoke check and tell me how it ends."),
}


def kinds(entries, kind: str) -> list[str]:
    return [e.text for e in entries if e.kind == kind]


@pytest.mark.parametrize("case", sorted(CASES))
def test_read_without_bad_lines_or_unknown_types(case) -> None:
    path, tid, source, label, _status, preview = CASES[case]
    r = read_rollout(path)
    assert r.file_problem is None and r.problems == ()
    assert r.unknown_types == ()  # token_usage_record, world_state, … are known
    assert r.meta is not None and r.meta.id == tid
    assert r.meta.source == source and r.meta.source_label == label
    s = scan_file(path)
    assert (s.thread_id, s.source, s.bad_lines, s.file_problem) == (tid, source, 0, None)
    assert s.preview == preview


def test_0169_lines_carry_ordinal_and_metadata() -> None:
    """Every line has an ordinal; the metadata beside a response item is kept, and the payload's
    passthrough field stays in the raw item (phase 1 forwards raw items)."""
    raw = [json.loads(line) for line in TUI.read_text().splitlines()]
    assert [o["ordinal"] for o in raw] == list(range(len(raw)))
    r = read_rollout(TUI)
    users = [ln for ln in r.lines if ln.type == "response_item"
             and getattr(ln.item, "role", None) == "user"]
    assert all(ln.metadata is not None for ln in users)
    assert all("internal_chat_message_metadata_passthrough" in ln.item.raw for ln in users)
    assert r.meta is not None and r.meta.history_mode == "paginated"
    assert r.meta.raw["context_window"]["window_id"] and r.meta.raw["account_scoped"] is True


@pytest.mark.parametrize("case", sorted(CASES))
def test_listed_with_label_preview_and_status(home, case) -> None:
    path, tid, source, label, status, preview = CASES[case]
    home.add(path, idle_hours=8)
    [s] = Engine.open(home.root).sessions()
    assert (s.id, s.source, s.source_label, s.preview, s.bad_lines) == (
        tid, source, label, preview, 0)
    assert s.status == status, s.reason
    if status == "not_interactive":
        assert s.reason.startswith("exec session: ")


def test_0171_metadata_keeps_model_search_state() -> None:
    """0.171 writes `model_search_state` (`"unused"` here) in every response item's
    `metadata`; it is kept as written and means nothing for memory."""
    r = read_rollout(V171)
    items = [ln for ln in r.lines if ln.type == "response_item"]
    assert items and all(ln.metadata is not None
                         and ln.metadata["model_search_state"] == "unused" for ln in items)
    [out] = [ln.item for ln in r.lines if isinstance(ln.item, ToolOutput)]
    assert (out.text, out.exit_code) == ("alpha\nbeta\n", 3)


def test_line_types_of_0169_and_0171_are_known(home) -> None:
    """`id_allocation` (new in 0.171's line types) and `dynamic_tools_updated` (0.169 and
    0.171) are read as Codex bookkeeping, kept, never a bad or unknown line. Neither was seen
    written in the captures, so their payloads here are placeholders: memdeck keeps whatever
    they hold."""
    lines = V171.read_bytes().splitlines(keepends=True)
    extra = [json.dumps({"timestamp": "2026-12-04T18:07:42.405Z", "ordinal": 23 + k,
                         "type": kind, "payload": {"placeholder": True}}).encode() + b"\n"
             for k, kind in enumerate(("id_allocation", "dynamic_tools_updated"))]
    path = home.write(V171.name, b"".join(lines + extra))
    r = read_rollout(path)
    assert (r.problems, r.unknown_types, r.file_problem) == ((), (), None)
    kept = [ln.item for ln in r.lines if isinstance(ln.item, Bookkeeping)]
    assert [(b.type, b.raw) for b in kept if b.type in ("id_allocation", "dynamic_tools_updated")] \
        == [("id_allocation", {"placeholder": True}),
            ("dynamic_tools_updated", {"placeholder": True})]
    s = scan_file(path)
    assert (s.bad_lines, s.thread_id, s.file_problem) == (0, V171_ID, None)
    assert [e.kind for e in transcript(r)] == [e.kind for e in transcript(read_rollout(V171))]


def test_tui_transcript_shows_each_turn_once() -> None:
    """item_completed UserMessage / AgentMessage / CommandExecution repeat the response items:
    the transcript has each prompt, answer and tool call exactly once."""
    r = read_rollout(TUI)
    repeats = [ln.item for ln in r.lines if isinstance(ln.item, EventMsg)
               and ln.item.kind == "item_completed"]
    assert {e.item_type for e in repeats} == {"UserMessage", "AgentMessage", "CommandExecution"}
    entries = transcript(r)
    assert kinds(entries, "user") == TUI_PROMPTS
    assert kinds(entries, "assistant") == TUI_ANSWERS
    assert len(kinds(entries, "tool_call")) == 1
    [out] = [e for e in entries if e.kind == "tool_output"]
    assert out.text == "FAILED test_import\n"  # the header is gone
    assert out.extra["exit_code"] == 1 and out.title == "exit code 1"
    assert out.to_json()["exit_code"] == 1


def test_exec_shell_output_decoded() -> None:
    r = read_rollout(EXEC)
    [out] = [ln.item for ln in r.lines if isinstance(ln.item, ToolOutput)]
    assert (out.text, out.exit_code) == ("alpha\nbeta\n", 3)
    assert out.raw["output"].startswith("Chunk ID: ")  # what Codex wrote is kept
    [cmd] = [ln.item for ln in r.lines if isinstance(ln.item, EventMsg)
             and ln.item.item_type == "CommandExecution"]
    assert (cmd.call_id, cmd.exit_code) == (out.call_id, 3)


def test_json_encoded_outputs_of_old_versions_decoded() -> None:
    entries = transcript(read_rollout(OLD))
    outs = [e for e in entries if e.kind == "tool_output"]
    assert [e.extra["exit_code"] for e in outs] == [1, 0]
    assert outs[0].text.splitlines() == [
        "imported 41 rows", "skipped row 7: amount '12.5' is not an integer",
        "skipped row 19: amount '3.75' is not an integer"]
    assert "\\n" not in outs[0].text and '"metadata"' not in outs[0].text
    assert outs[1].text == "Success. Updated the following files:\nM ledger/import.py\n"
    # legacy user_message / agent_message events repeat the turns: shown once
    assert kinds(entries, "user") == OLD_PROMPTS
    assert len(kinds(entries, "assistant")) == 2
    ctx = [e for e in entries if e.kind == "context"]
    assert [e.text.split(">")[0] for e in ctx] == ["<user_instructions", "<environment_context"]


def test_show_prints_text_and_exit_code(home, capsys) -> None:
    home.add(OLD)
    home.add(TUI)
    assert main(["show", OLD_ID[:8], "--home", str(home.root)]) == 0
    out = capsys.readouterr().out
    assert "exit code 1" in out and "exit code 0" in out
    assert "skipped row 7: amount '12.5' is not an integer\n" in out  # a real line break
    assert "integer\\n" not in out and '"metadata"' not in out
    assert main(["show", TUI_ID, "--home", str(home.root), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["source"] == "vscode" and d["history_mode"] == "paginated"
    items = d["items"]
    assert [i["text"] for i in items if i["kind"] == "user"] == TUI_PROMPTS
    assert [i["text"] for i in items if i["kind"] == "assistant"] == TUI_ANSWERS
    [call] = [i for i in items if i["kind"] == "tool_call"]
    [output] = [i for i in items if i["kind"] == "tool_output"]
    assert output["call_id"] == call["call_id"] and output["exit_code"] == 1
    assert output["text"] == "FAILED test_import\n"


# --------------------------------------------------------------------------------------
# shell output shapes


@pytest.mark.parametrize("raw, text, code", [
    ("Chunk ID: a46d3b\nWall time: 0.0001 seconds\nProcess exited with code 3\n"
     "Original token count: 3\nOutput:\nout1\nline2\n", "out1\nline2\n", 3),
    ("Chunk ID: f800eb\nWall time: 1.0024 seconds\nProcess running with session ID 32244\n"
     "Original token count: 9\nOutput:\nstarting\n", "starting\n", None),
    ("Exit code: 2\nWall time: 0.3 seconds\nTotal output lines: 1\nOutput:\nboom", "boom", 2),
    ("Process exited with code 2\nFAILED tests/test_checkout.py", "FAILED tests/test_checkout.py",
     2),
    ('{"output":"a\\nb\\n","metadata":{"exit_code":127,"duration_seconds":0.1}}', "a\nb\n", 127),
    ('{"output":"Success","metadata":{"exit_code":0}}', "Success", 0),
    ('{"output":"no metadata"}', "no metadata", None),
    # not a shell envelope: left exactly as it is
    ('{"output":"x","error":null}', '{"output":"x","error":null}', None),
    ('{"content":[{"type":"text","text":"mcp"}]}', '{"content":[{"type":"text","text":"mcp"}]}',
     None),
    ("Wall time: is a phrase\nbut no header", "Wall time: is a phrase\nbut no header", None),
    ("Plan updated", "Plan updated", None),
    ("", "", None),
])
def test_decode_tool_output(raw, text, code) -> None:
    out = decode_tool_output(raw)
    assert (out.text, out.exit_code) == (text, code)


def test_running_output_takes_no_exit_code_from_later_events(home) -> None:
    """A chunk taken while the command ran says so; the command's later exit code (from
    item_completed CommandExecution) belongs to the command, not to that chunk."""
    lines = [
        {"type": "session_meta", "payload": {"id": TUI_ID, "source": "cli", "cwd": "/w"}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                              "arguments": "{}", "call_id": "c1"}},
        {"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c1",
            "output": "Chunk ID: 1\nWall time: 1.0 seconds\nProcess running with session ID 7\n"
                      "Original token count: 1\nOutput:\nbuilding\n"}},
        {"type": "event_msg", "payload": {"type": "item_completed", "item": {
            "type": "CommandExecution", "id": "c1", "exit_code": 0}}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c2",
                                              "output": "plain text, no header"}},
        {"type": "event_msg", "payload": {"type": "exec_command_end", "call_id": "c2",
                                          "exit_code": 5}},
    ]
    path = home.write("rollout-2026-12-01T10-00-00-x.jsonl",
                      "".join(json.dumps(o) + "\n" for o in lines).encode())
    outs = [e for e in transcript(read_rollout(path)) if e.kind == "tool_output"]
    assert [(e.title, e.extra["exit_code"]) for e in outs] == [("still running", None),
                                                               ("exit code 5", 5)]


# --------------------------------------------------------------------------------------
# the Source column


@pytest.mark.parametrize("source, originator, label", [
    ("vscode", "codex-tui", "Codex TUI"),
    ("vscode", "codex_vscode", "VS Code"),
    ("vscode", "my_vscode_fork", "VS Code"),
    ("vscode", "codex_cli_rs", "CLI"),  # 0.34-0.36: no source key, read as vscode
    ("cli", "codex_cli_rs", "CLI"),
    ("cli", "codex-tui", "Codex TUI"),
    ("exec", "codex_exec", "exec"),
    ("exec", "codex_cli_rs", "exec"),
    ("mcp", "codex_mcp", "MCP"),
    ("vscode", "someone_else", "vscode"),  # unknown originator: the source word
    ("vscode", None, "vscode"),
    ('{"subagent":"review"}', "codex_cli_rs", "sub-agent: review"),
    ('{"subagent":"compact"}', None, "sub-agent: compact"),
    ('{"subagent":{"thread_spawn":{"parent_thread_id":"p","depth":1,"agent_nickname":"Ada",'
     '"agent_role":"explorer"}}}', "codex-tui", "sub-agent: Ada"),
    ('{"subagent":{"thread_spawn":{"parent_thread_id":"p","depth":1,"agent_role":"explorer"}}}',
     None, "sub-agent: explorer"),
    ('{"subagent":{"other":"guardian"}}', None, "sub-agent: guardian"),
    ('{"internal":"memory_consolidation"}', None, "internal"),
    ('{"custom":"my-bot"}', None, "my-bot"),
    ("unknown", None, "unknown"),
    ("{not json", None, "unknown"),
])
def test_source_label(source, originator, label) -> None:
    assert source_label(source, originator) == label
    assert "{" not in label


def test_sessions_json_keeps_source_and_adds_label(home, capsys) -> None:
    home.add(EXEC)
    home.add(TUI)
    home.add("subagent-review.jsonl")
    assert main(["sessions", "--home", str(home.root), "--json"]) == 0
    by_id = {d["id"]: d for d in json.loads(capsys.readouterr().out)}
    assert (by_id[EXEC_ID]["source"], by_id[EXEC_ID]["source_label"]) == ("exec", "exec")
    assert (by_id[TUI_ID]["source"], by_id[TUI_ID]["source_label"]) == ("vscode", "Codex TUI")
    sub = by_id["01a2301d-b37c-7fe9-8d12-55b17f94b213"]
    assert (sub["source"], sub["source_label"]) == ('{"subagent":"review"}', "sub-agent: review")


# --------------------------------------------------------------------------------------
# previews of paginated threads


def test_preview_skips_image_wrappers(home) -> None:
    """0.169 wraps an attached image in `<image name=[Image #1] path=…>` / `</image>` text
    parts (shape copied from `codex exec -i dot.png`); Codex's preview is the prompt alone."""
    tid = "01a2393c-58fd-7a90-9f1b-2a1c7a6c8e10"
    meta = {"type": "session_meta", "ordinal": 0, "payload": {
        "id": tid, "cwd": "/w", "originator": "codex_exec", "source": "exec",
        "history_mode": "paginated"}}
    user = {"type": "response_item", "ordinal": 1, "payload": {
        "type": "message", "role": "user", "content": [
            {"type": "input_text", "text": '<image name=[Image #1] path="/tmp/dot.png">'},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=",
             "detail": "original"},
            {"type": "input_text", "text": "</image>"},
            {"type": "input_text", "text": "What is in this picture?"}]}}
    path = home.write(f"rollout-2026-12-01T10-00-00-{tid}.jsonl",
                      (json.dumps(meta) + "\n" + json.dumps(user) + "\n").encode())
    assert scan_file(path).preview == "What is in this picture?"
    entries = transcript(read_rollout(path))
    assert kinds(entries, "user") == ["What is in this picture?"]
    # the wrapper tags and the image between them: one marker (docs/codex-format.md
    # "Transcript markers")
    assert [(e.kind, e.text) for e in entries if e.title == "image"] == [("marker", "[image]")]
    assert not [e for e in entries if "image>" in e.text]


# --------------------------------------------------------------------------------------
# an index written by an older scanner


def test_index_from_an_older_scanner_is_rescanned_once(home) -> None:
    """An older memdeck stored the 0.34 session as source `unknown` (not_interactive); the file
    did not change, yet the next listing reads it again and shows it as Codex does."""
    home.add(OLD, idle_hours=8)
    eng = Engine.open(home.root)
    [s] = eng.sessions()
    assert s.status == "eligible"
    db = home.root / "memdeck" / "memdeck.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE sessions SET source = 'unknown'")  # as the old scanner left it
    conn.execute("DELETE FROM meta WHERE key = 'scan_version'")
    conn.commit()
    conn.close()
    eng = Engine.open(home.root)
    assert eng.sessions(refresh=False)[0].status == "not_interactive"  # the stale row
    stats = eng.refresh()
    assert stats.scanned_full == 1
    [s] = eng.sessions(refresh=False)
    assert (s.source, s.status) == ("vscode", "eligible")
    assert eng.refresh().scanned_full == 0  # once only
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT value FROM meta WHERE key = 'scan_version'").fetchone() == (
        SCAN_VERSION,)
    conn.close()
