"""The openai consolidation agent: tools confined to the workspace, limits, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import served_demo
from llm_server import json_reply, server_error, tool_call_reply

from memdeck.engine import Engine, MemdeckError
from memdeck.engine.backends.openai_phase2 import Workspace
from memdeck.engine.phase2.proposals import root_state


@pytest.fixture
def demo(tmp_path: Path, llm_server) -> Path:
    return served_demo(tmp_path / "demo", llm_server.url, extracted=True)


def test_agent_edits_the_workspace_into_a_proposal(demo: Path, llm_server) -> None:
    summary = "v1\n\n## User Profile\n- x\n\n## User preferences\n\n## General Tips\n\n" \
              "## What's in Memory\n### /home/demo/src/shop\n"
    llm_server.push(
        tool_call_reply(("read", {"path": "phase2_workspace_diff.md"})),
        tool_call_reply(("read", {"path": "../config.toml"}),  # outside: refused, not fatal
                        ("edit", {"path": "MEMORY.md",
                                  "old": "## User preferences\n- Run `make check-quick`",
                                  "new": "## User preferences\n- Pin exact versions\n"
                                         "- Run `make check-quick`"}),
                        ("write", {"path": "memory_summary.md", "content": summary}),
                        ("delete", {"path": "raw_memories.md"})),  # an input: refused
        json_reply("Added the Django preference."),
    )
    before = root_state(demo / "memories")
    p = Engine.open(demo).consolidate("openai")
    assert p.backend == "openai" and p.status == "pending" and p.problems == []
    ws = demo / "memdeck" / "proposals" / p.id / "workspace"
    assert "- Pin exact versions" in (ws / "MEMORY.md").read_text()
    assert (ws / "memory_summary.md").read_text() == summary
    assert (ws / "raw_memories.md").exists()
    assert root_state(demo / "memories") == before
    # what the model saw: the diff file first, then errors for the refused calls
    bodies = [r.body for r in llm_server.chat_requests()]
    assert "Memory Workspace Diff" in json.dumps(bodies[1])
    tool_msgs = [m["content"] for m in bodies[2]["messages"] if m["role"] == "tool"]
    assert "Memory Workspace Diff" in tool_msgs[0]  # the first read
    assert "within the memory folder" in tool_msgs[1]  # ../config.toml refused
    assert tool_msgs[2:4] == ["ok", "ok"]  # the edit and the write
    assert "input of this consolidation" in tool_msgs[4]  # raw_memories.md kept
    assert all(b["tools"] and b["model"] for b in bodies)


def test_step_limit_keeps_nothing(demo: Path, llm_server, monkeypatch) -> None:
    from memdeck.engine.backends import openai_phase2 as agent

    monkeypatch.setattr(agent, "MAX_STEPS", 3)
    llm_server.handler = lambda body: tool_call_reply(("list", {}))
    with pytest.raises(MemdeckError, match="did not finish within 3 steps"):
        Engine.open(demo).consolidate("openai")
    assert not list((demo / "memdeck" / "proposals").glob("*"))
    assert Engine.open(demo).proposals() == []


def test_endpoint_failure_is_one_line(demo: Path, llm_server) -> None:
    llm_server.handler = lambda body: server_error()
    with pytest.raises(MemdeckError) as e:
        Engine.open(demo).consolidate("openai")
    assert "\n" not in str(e.value)


def test_path_rules(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("a\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / "link.md").symlink_to(tmp_path / "MEMORY.md")
    ws = Workspace(tmp_path)
    for bad in ("/etc/passwd", "../x", ".git/config", "link.md"):
        with pytest.raises(ValueError):
            ws.call("read", {"path": bad})
    assert json.loads(ws.call("list", {})) == ["MEMORY.md"]
    assert ws.call("write", {"path": "skills/a/SKILL.md", "content": "x"}) == "ok"
    with pytest.raises(ValueError, match="exactly once"):
        ws.call("edit", {"path": "MEMORY.md", "old": "zzz", "new": "y"})
