"""Phase 2 on a server without tool calling (issue 25, item 6): the files go in the prompt and
come back as JSON, applied under the agent's own rules.

llama-cpp-python's server ignores `tools` and answers in prose (seen on 0.3.36 with
SmolLM2; the real server is driven in tests/test_real_model_server.py); Ollama refuses `tools`
for a model without them with HTTP 400 "does not support tools". Both paths are scripted here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import served_demo
from llm_server import LLMServer, Reply, json_reply, status_reply, tool_call_reply

from memdeck.engine import Engine, MemdeckError
from memdeck.engine.phase2.proposals import root_state

NEW_PREF = "- Pin exact versions in requirements files"


@pytest.fixture
def demo(tmp_path: Path, llm_server: LLMServer) -> Path:
    return served_demo(tmp_path / "demo", llm_server.url, extracted=True)


def files_reply(memory_md: str, **extra: Any) -> Reply:
    return json_reply({"files": [{"path": "MEMORY.md", "content": memory_md},
                                 *extra.get("more", [])],
                       "deleted": extra.get("deleted", []), "summary": "Pinned versions."})


def no_tools_then(*replies: Reply) -> Any:
    """Prose for any request with `tools` (as llama-cpp-python answers), then `replies`."""
    queue = list(replies)

    def handle(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            return json_reply("I will now consolidate the memories as instructed.")
        return queue.pop(0)
    return handle


def test_a_server_that_ignores_tools_gets_the_files_and_returns_them(
        demo: Path, llm_server: LLMServer) -> None:
    memory_md = (demo / "memories" / "MEMORY.md").read_text()
    changed = memory_md.replace("## User preferences\n", f"## User preferences\n{NEW_PREF}\n", 1)
    assert changed != memory_md
    llm_server.handler = no_tools_then(files_reply(changed, more=[
        {"path": "../config.toml", "content": "x"}],  # outside the folder: refused
        deleted=["raw_memories.md"]))  # an input of the consolidation: refused
    before = root_state(demo / "memories")
    p = Engine.open(demo).consolidate("openai")
    assert p is not None and p.status == "pending"
    ws = demo / "memdeck" / "proposals" / p.id / "workspace"
    assert NEW_PREF in (ws / "MEMORY.md").read_text()
    assert (ws / "raw_memories.md").exists() and root_state(demo / "memories") == before
    assert (demo / "config.toml").read_text() != "x"
    first, second = (r.body for r in llm_server.chat_requests())
    assert first["tools"] and "tools" not in second
    assert "max_tokens" not in first and "max_tokens" not in second  # unset: the server's
    prompt = second["messages"][-1]["content"]
    # the files, by priority: the diff of inputs first, then the memory files
    assert prompt.index("=== phase2_workspace_diff.md ===") < prompt.index("=== MEMORY.md ===")
    assert "You cannot call tools" in prompt and second["response_format"]


def test_a_server_that_refuses_tools_gets_the_same(demo: Path, llm_server: LLMServer) -> None:
    memory_md = (demo / "memories" / "MEMORY.md").read_text()
    changed = memory_md + f"\n{NEW_PREF}\n"

    def handle(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            return status_reply(400, "registry.ollama.ai/library/gemma:2b does not support tools")
        return files_reply(changed)
    llm_server.handler = handle
    p = Engine.open(demo).consolidate("openai")
    assert p is not None
    assert NEW_PREF in (demo / "memdeck" / "proposals" / p.id / "workspace" / "MEMORY.md"
                        ).read_text()


def test_the_setting_chooses(demo: Path, llm_server: LLMServer) -> None:
    eng = Engine.open(demo)
    memory_md = (demo / "memories" / "MEMORY.md").read_text()
    eng.config_set("memdeck.tools", "off")  # straight to the files, no tools request
    llm_server.handler = no_tools_then(files_reply(memory_md + f"\n{NEW_PREF}\n"))
    assert eng.consolidate("openai") is not None
    assert ["tools" in r.body for r in llm_server.chat_requests()] == [False]
    # on: a prose answer is the agent's last word, as before
    eng.config_set("memdeck.tools", "on")
    llm_server.reset_counters()
    llm_server.handler = None
    llm_server.push(json_reply("Nothing to change."))
    Engine.open(demo).consolidate("openai")
    assert ["tools" in r.body for r in llm_server.chat_requests()] == [True]


def test_a_model_that_calls_tools_never_falls_back(demo: Path, llm_server: LLMServer) -> None:
    llm_server.push(tool_call_reply(("read", {"path": "phase2_workspace_diff.md"})),
                    json_reply("Nothing to change."))
    Engine.open(demo).consolidate("openai")
    assert all(r.body.get("tools") for r in llm_server.chat_requests())


def test_a_reply_whose_every_change_is_refused_fails_with_the_reason(
        demo: Path, llm_server: LLMServer) -> None:
    bad = json_reply({"files": [{"path": "/etc/passwd", "content": "x"}], "deleted": [],
                      "summary": ""})
    llm_server.handler = no_tools_then(bad)
    with pytest.raises(MemdeckError, match="changes were all refused: /etc/passwd"):
        Engine.open(demo).consolidate("openai")


def test_files_over_the_budget_are_named_not_cut(demo: Path, llm_server: LLMServer) -> None:
    eng = Engine.open(demo)
    eng.config_set("memdeck.input_budget", "1000")  # 4,000 characters of files
    memory_md = (demo / "memories" / "MEMORY.md").read_text()
    llm_server.handler = no_tools_then(files_reply(memory_md + f"\n{NEW_PREF}\n"))
    eng.consolidate("openai")
    prompt = llm_server.chat_requests()[-1].body["messages"][-1]["content"]
    assert "(left out, over the input budget: " in prompt
    left = prompt.split("(left out, over the input budget: ")[1].split(")")[0].split(", ")
    shown = [line[4:-4] for line in prompt.splitlines() if line.startswith("=== ")]
    assert left and not set(left) & set(shown)
    named = prompt[prompt.index("\n(left out, over the input budget: "):]
    files = prompt[prompt.index("\n=== "):len(prompt) - len(named)]
    assert 0 < len(files) <= 4_000, len(files)  # the files within the budget, after the prompt
    for rel in left:  # a file that did not fit whole is not there in part either
        assert f"=== {rel} ===" not in prompt


@pytest.mark.parametrize("reply", [
    "not json at all", '{"files": "MEMORY.md"}', '{"files": [{"path": 3, "content": "x"}]}',
    '{"files": [], "deleted": [7]}', "[1, 2, 3]", '{"files": [{"path": "MEMORY.md"',  # cut
])
def test_a_files_reply_that_is_not_usable_fails_in_one_line_and_changes_nothing(
        demo: Path, llm_server: LLMServer, reply: str) -> None:
    llm_server.handler = no_tools_then(json_reply(reply), json_reply(reply))
    before = root_state(demo / "memories")
    with pytest.raises(MemdeckError) as e:
        Engine.open(demo).consolidate("openai")
    assert "\n" not in str(e.value) and "broke the memory_files schema" in str(e.value)
    assert root_state(demo / "memories") == before


def test_a_files_reply_over_the_byte_limit_keeps_nothing(demo: Path, llm_server: LLMServer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from memdeck.engine.backends import openai_phase2

    monkeypatch.setattr(openai_phase2, "MAX_WRITE_BYTES", 1000)
    llm_server.handler = no_tools_then(files_reply("x" * 5000))
    before = root_state(demo / "memories")
    with pytest.raises(MemdeckError, match="wrote more than"):
        Engine.open(demo).consolidate("openai")
    assert root_state(demo / "memories") == before
    assert Engine.open(demo).proposals() == [] or all(
        p.status != "pending" for p in Engine.open(demo).proposals())


def over_context(context: int, then: Reply) -> Any:
    """A server of `context` tokens (three characters a token, denser than memdeck's four)
    that states none beforehand and refuses a longer request as llama-cpp-python does."""
    def handle(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            return json_reply("I will now consolidate the memories as instructed.")
        asked = sum(len(m["content"]) for m in body["messages"]) // 3
        if asked > context:
            return status_reply(400, f"This model's maximum context length is {context} tokens. "
                                f"However, you requested {asked} tokens ({asked} in the "
                                "messages, None in the completion). Please reduce the length "
                                "of the messages or completion.")
        return then
    return handle


def test_a_request_over_an_unstated_context_is_cut_to_fit_once(
        demo: Path, llm_server: LLMServer) -> None:
    eng = Engine.open(demo)
    eng.config_set("memdeck.input_budget", "40000")  # all the demo's files: 7,600 tokens
    memory_md = (demo / "memories" / "MEMORY.md").read_text()
    llm_server.handler = over_context(6000, files_reply(memory_md + f"\n{NEW_PREF}\n"))
    p = eng.consolidate("openai")
    assert p is not None and p.status == "pending"
    refused, fitted = [r.body for r in llm_server.chat_requests() if not r.body.get("tools")]
    size = [sum(len(m["content"]) for m in b["messages"]) // 3 for b in (refused, fitted)]
    assert size[0] > 6000 and size[1] <= 6000 - 1500, size  # and room for the reply
    prompt = fitted["messages"][-1]["content"]
    assert "(left out, over the input budget: " in prompt  # named, as a budget's cut is


def test_a_prompt_that_alone_is_over_the_context_says_so_in_one_line(
        demo: Path, llm_server: LLMServer) -> None:
    before = root_state(demo / "memories")
    llm_server.handler = over_context(1024, json_reply("never asked"))
    with pytest.raises(MemdeckError) as e:
        Engine.open(demo).consolidate("openai")
    line = str(e.value)
    assert "\n" not in line and "the model's context of 1,024" in line, line
    assert "longer context" in line and root_state(demo / "memories") == before


@pytest.mark.parametrize(("message", "stated"), [
    ("This model's maximum context length is 8192 tokens. However, you requested 8255 tokens "
     "(8255 in the messages, None in the completion).", (8192, 8255)),  # llama-cpp-python, vLLM
    ("the request exceeds the available context size, n_prompt_tokens = 9001, n_ctx = 4096",
     (4096, 9001)),  # llama.cpp's server
    ("Input is too long for the model's context window of 32768 tokens", (32768, None)),
    ("model does not support tools", None),
])
def test_what_a_server_says_of_its_context(message: str,
                                           stated: tuple[int, int | None] | None) -> None:
    from memdeck.engine.backends.server_context import stated_overflow

    assert stated_overflow(message) == stated


def test_the_output_budget_caps_every_reply(demo: Path, llm_server: LLMServer) -> None:
    eng = Engine.open(demo)
    eng.config_set("memdeck.output_budget", "800")
    memory_md = (demo / "memories" / "MEMORY.md").read_text()
    llm_server.handler = no_tools_then(files_reply(memory_md + f"\n{NEW_PREF}\n"))
    assert eng.consolidate("openai") is not None
    bodies = [r.body for r in llm_server.chat_requests()]
    assert len(bodies) == 2 and all(b["max_tokens"] == 800 for b in bodies), bodies
