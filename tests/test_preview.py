"""`memdeck preview`: the next session's memory against what the last session received."""

from __future__ import annotations

import json
from pathlib import Path

from memdeck.engine import Engine
from memdeck.tui.cli import main

OLD_TID = "01a20000-1111-7111-8111-111111111111"
NEW_TID = "01a20000-2222-7222-8222-222222222222"
SUMMARY = "v1\n\n## User Profile\n- 使用 Windows (C:\\Users\\dev)\n\n## User preferences\n" \
          "- run `make check-quick`\n\n## General Tips\n\n## What's in Memory\n"


def with_read_path(tid: str, when: str, parts: list[str]) -> bytes:
    iso = f"{when}.000Z"
    lines = [
        {"timestamp": iso, "type": "session_meta", "payload": {
            "id": tid, "session_id": tid, "timestamp": iso, "cwd": "/home/dev/shop",
            "source": "cli", "originator": "codex_cli_rs", "cli_version": "0.169.0"}},
        {"timestamp": iso, "type": "response_item", "payload": {
            "type": "message", "role": "developer",
            "content": [{"type": "input_text", "text": p} for p in parts]}},
        {"timestamp": iso, "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "你好"}]}},
    ]
    return ("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n").encode()


def sent_parts(engine: Engine) -> list[str]:
    """The read-path developer text exactly as memdeck says Codex sends it now."""
    return list(engine.memory_injected().messages)


def v1_home(home, summary: str = SUMMARY):
    home.v1()
    home.config("[features]\nmemories = true\n")
    (home.root / "memories" / "memory_summary.md").write_text(summary, encoding="utf-8")
    return Engine.open(home.root)


def test_no_session_has_received_memory_yet(capsys, home) -> None:
    v1_home(home)
    home.add("cli-preferences.jsonl")
    assert main(["preview", "--home", str(home.root)]) == 0
    out = capsys.readouterr().out
    assert "- run `make check-quick`" in out
    assert out.rstrip().endswith("no session has received memory yet")
    data = Engine.open(home.root).preview().to_json()
    assert data["last_session"] is None and data["same_as_last"] is None
    assert data["version"] == "v1" and data["root"].endswith("memories")


def test_same_as_the_last_session(capsys, home) -> None:
    engine = v1_home(home)
    home.write(f"rollout-2026-12-01T10-00-00-{NEW_TID}.jsonl",
               with_read_path(NEW_TID, "2026-12-01T10:00:00", sent_parts(engine)))
    p = engine.preview()
    assert p.same_as_last is True and p.diff == ""
    assert p.comparison == f"same as the last session (thread {NEW_TID}, 2026-12-01T10:00:00Z)"
    assert p.last_session is not None and p.last_session.text == SUMMARY.strip()


def test_differs_from_the_newest_session_that_received_memory(capsys, home) -> None:
    engine = v1_home(home, SUMMARY.replace("make check-quick", "make test"))
    old_parts = sent_parts(engine)
    home.write(f"rollout-2026-11-20T10-00-00-{OLD_TID}.jsonl",
               with_read_path(OLD_TID, "2026-11-20T10:00:00", ["the same for everyone"]))
    home.write(f"rollout-2026-11-25T10-00-00-{NEW_TID}.jsonl",
               with_read_path(NEW_TID, "2026-11-25T10:00:00", old_parts))
    home.add("cli-preferences.jsonl")  # newest, but received no memory
    (home.root / "memories" / "memory_summary.md").write_text(SUMMARY, encoding="utf-8")
    assert main(["preview", "--json", "--home", str(home.root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["same_as_last"] is False
    assert data["last_session"]["thread_id"] == NEW_TID
    assert "-- run `make test`\n" in data["diff"] and "+- run `make check-quick`\n" in data["diff"]
    assert data["comparison"].startswith(f"differs from what the last session received "
                                         f"(thread {NEW_TID}")
    assert "1 lines added, 1 removed" in data["comparison"]


def test_injection_off_says_the_next_session_gets_nothing(home) -> None:
    engine = v1_home(home)
    home.write(f"rollout-2026-12-01T10-00-00-{NEW_TID}.jsonl",
               with_read_path(NEW_TID, "2026-12-01T10:00:00", sent_parts(engine)))
    home.config("[features]\nmemories = true\n[memories]\nuse_memories = false\n")
    p = engine.preview()
    assert p.same_as_last is False and not p.next_session.active
    assert "the next session gets no memory" in p.comparison and "use_memories" in p.comparison


def test_v2_parts_cut_mid_line_are_joined_as_sent(home) -> None:
    """A v2 home: the read-path text comes in parts of at most 8,900 bytes, cut mid-line."""
    home.config("[features]\nmemories = true\n")
    root = home.root / "memories_v2"
    root.mkdir(parents=True)
    big = SUMMARY + "".join(f"- rollout_summaries/2026-11-{d:02d}-x.md — 第{d}天的笔记; "
                            f"thread_id={OLD_TID}\n" for d in range(1, 29)) * 3
    (root / "memory_summary.md").write_text(big, encoding="utf-8")
    engine = Engine.open(home.root)
    parts = sent_parts(engine)
    assert len(parts) > 1
    home.write(f"rollout-2026-12-01T10-00-00-{NEW_TID}.jsonl",
               with_read_path(NEW_TID, "2026-12-01T10:00:00", parts))
    p = engine.preview()
    assert p.next_session.version == "v2" and p.root == str(root)
    assert p.same_as_last is True, p.diff


def test_demo_home_preview_is_none_yet(tmp_path: Path) -> None:
    from memdeck.engine import demo_home

    p = Engine.open(demo_home(tmp_path / "demo")).preview()
    assert p.next_session.active and p.next_session.tokens > 0
    assert p.comparison == "no session has received memory yet"
