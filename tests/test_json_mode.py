"""JSON mode for servers without strict schemas (issue 25, item 6).

llama-cpp-python's server answers a `response_format: json_schema` request with HTTP 500
"Input should be 'text' or 'json_object'" (seen on 0.3.36; the real server is driven in
tests/test_real_model_server.py). The scripted server here answers the same way, so that each
path is pinned: the switch to JSON mode, the one retry told what was wrong, the job failed
with the reason after a second bad reply, and the settings that force a mode."""

from __future__ import annotations

from typing import Any

import pytest
from llm_server import LLMServer, Reply, json_reply, status_reply

from memdeck.engine.backends.openai_client import (
    STAGE_ONE_OUTPUT_SCHEMA,
    BackendConfig,
    ModelCallError,
    ModelOutputError,
    OpenAIBackend,
)

GOOD = {"rollout_summary": "Fixed parse_empty", "rollout_slug": "fix-parse-empty",
        "raw_memory": "- run `cargo test parse_empty` after touching src/lib.rs"}
# what llama-cpp-python 0.3.36 sends back for a json_schema response_format
LLAMA_CPP_REFUSAL = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                     "'response_format', 'type'), 'msg': \"Input should be 'text' or "
                     "'json_object'\", 'input': 'json_schema'}")


def backend(url: str, mode: str = "auto") -> OpenAIBackend:
    return OpenAIBackend(BackendConfig(
        base_url=url, api_key=None, extract_model="small", consolidation_model="small",
        timeout=5.0, max_retries=0, output_mode=mode))


def ask(b: OpenAIBackend) -> Any:
    return b.extract_json(system="SYS", user="USER", schema=STAGE_ONE_OUTPUT_SCHEMA,
                          schema_name="stage_one_output")


def like_llama_cpp(*replies: Reply) -> Any:
    """Refuses json_schema as llama-cpp-python does; answers json_object with `replies`."""
    queue = list(replies)

    def handle(body: dict[str, Any]) -> Reply:
        if body["response_format"]["type"] == "json_schema":
            return status_reply(500, LLAMA_CPP_REFUSAL)
        return queue.pop(0)
    return handle


def kinds(server: LLMServer) -> list[str]:
    return [r.body["response_format"]["type"] for r in server.chat_requests()]


def test_a_server_without_strict_schemas_gets_json_mode_for_the_rest_of_the_run(
        llm_server: LLMServer) -> None:
    llm_server.handler = like_llama_cpp(json_reply(GOOD), json_reply(GOOD))
    b = backend(llm_server.url)
    assert ask(b).parsed == GOOD
    assert ask(b).parsed == GOOD  # the second call goes straight to JSON mode
    assert kinds(llm_server) == ["json_schema", "json_object", "json_object"]
    sent = llm_server.chat_requests()[1].body
    assert sent["response_format"]["schema"] == STAGE_ONE_OUTPUT_SCHEMA  # llama.cpp: a grammar
    assert "rollout_summary" in sent["messages"][0]["content"]  # and the prompt says it


def test_a_bad_json_mode_reply_is_sent_back_once_with_what_was_wrong(
        llm_server: LLMServer) -> None:
    llm_server.handler = like_llama_cpp(json_reply({"rollout_summary": "x"}), json_reply(GOOD))
    reply = ask(backend(llm_server.url))
    assert reply.parsed == GOOD
    retry = llm_server.chat_requests()[-1].body["messages"]
    assert retry[-2] == {"role": "assistant", "content": '{"rollout_summary": "x"}'}
    assert "not usable" in retry[-1]["content"] and "raw_memory" in retry[-1]["content"]
    assert reply.input_tokens == 22  # both JSON-mode calls counted (11 each)


def test_two_bad_json_mode_replies_fail_the_job_with_the_reason(llm_server: LLMServer) -> None:
    llm_server.handler = like_llama_cpp(json_reply("not json at all"), json_reply("[1, 2]"))
    with pytest.raises(ModelOutputError, match="broke the stage_one_output schema twice in "
                                               "JSON mode") as e:
        ask(backend(llm_server.url))
    assert "\n" not in str(e.value) and e.value.input_tokens == 22


def test_a_strict_schema_reply_that_breaks_it_fails_at_once_as_codex_does(
        llm_server: LLMServer) -> None:
    llm_server.push(json_reply({"rollout_summary": "x"}))
    with pytest.raises(ModelOutputError, match="broke the stage_one_output schema: "):
        ask(backend(llm_server.url))
    assert kinds(llm_server) == ["json_schema"]


def test_other_errors_are_not_taken_for_a_refused_schema(llm_server: LLMServer) -> None:
    # a transient 500 on the first strict request (sent without retries) is tried again,
    # still strict; a refusal would have switched to JSON mode
    llm_server.push(status_reply(500, "out of memory"))
    llm_server.push(json_reply(GOOD))
    assert ask(backend(llm_server.url)).parsed == GOOD
    assert kinds(llm_server) == ["json_schema", "json_schema"]
    llm_server.reset_counters()
    llm_server.push(status_reply(401, "bad key"))  # not transient: said at once
    with pytest.raises(ModelCallError, match="HTTP 401"):
        ask(backend(llm_server.url))
    assert kinds(llm_server) == ["json_schema"]


def test_the_refusal_costs_one_request_not_the_clients_retries(llm_server: LLMServer) -> None:
    llm_server.handler = like_llama_cpp(json_reply(GOOD))
    b = OpenAIBackend(BackendConfig(
        base_url=llm_server.url, api_key=None, extract_model="small",
        consolidation_model="small", timeout=5.0, max_retries=3))
    assert ask(b).parsed == GOOD
    assert kinds(llm_server) == ["json_schema", "json_object"]


def test_sessions_extracted_side_by_side_probe_the_schema_once(llm_server: LLMServer) -> None:
    """Six workers start at once: one strict request finds out, the others wait for it and
    go straight to JSON mode (a real run extracts sessions in parallel)."""
    import threading

    lock = threading.Lock()
    inner = like_llama_cpp(*[json_reply(GOOD)] * 6)

    def handle(body: dict[str, Any]) -> Reply:
        with lock:  # the test server answers from several threads
            return inner(body)
    llm_server.handler = handle
    b = backend(llm_server.url)
    results: list[Any] = []
    workers = [threading.Thread(target=lambda: results.append(ask(b).parsed))
               for _ in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    assert results == [GOOD] * 6
    assert kinds(llm_server).count("json_schema") == 1
    assert kinds(llm_server).count("json_object") == 6


def test_the_setting_forces_a_mode(llm_server: LLMServer) -> None:
    llm_server.handler = like_llama_cpp(json_reply(GOOD))
    assert ask(backend(llm_server.url, "json_object")).parsed == GOOD
    assert kinds(llm_server) == ["json_object"]
    llm_server.reset_counters()
    with pytest.raises(ModelCallError, match="HTTP 500"):  # told strict: no fallback
        ask(backend(llm_server.url, "json_schema"))
    assert kinds(llm_server) == ["json_schema"]


# -- the input budget: what fits the server's context -----------------------------------------
def _long_demo(tmp_path: Any, llm_server: LLMServer) -> Any:
    """A home with a real 0.169 TUI session into which a 150 KB log was pasted, served."""
    from conftest import HomeBuilder, add_pasted_log_session

    from memdeck.engine import Engine

    home = HomeBuilder(tmp_path / "home").v1()
    add_pasted_log_session(home)
    eng = Engine.open(home.root)
    eng.config_set("memdeck.base_url", llm_server.url)
    eng.config_set("memdeck.max_retries", "0")
    return home.root


@pytest.mark.parametrize("stated", [
    {"max_model_len": 8192},  # vLLM
    {"max_context_length": 8192},  # LM Studio
    {"meta": {"n_ctx_train": 8192}},  # llama.cpp's llama-server
])
def test_the_input_fits_the_context_the_server_states(tmp_path: Any, llm_server: LLMServer,
                                                      stated: dict[str, Any]) -> None:
    from memdeck.engine import Engine
    from memdeck.engine.backends.server_context import budget_for

    llm_server.models = [{"id": "only-model", "object": "model", **stated}]
    llm_server.handler = lambda body: json_reply(GOOD)
    home = _long_demo(tmp_path, llm_server)
    Engine.open(home).extract()
    sent = [sum(len(m["content"].encode()) for m in r.body["messages"] if m["role"] == "user")
            for r in llm_server.chat_requests()]
    assert sent, "phase 1 called the server"
    limit = budget_for(8192) * 4 + 1_200  # 4 bytes a token, plus the input template
    assert max(sent) <= limit, (sent, limit)
    # the session was cut in the middle (Codex's marker), not sent whole
    assert any("tokens truncated" in m["content"] for r in llm_server.chat_requests()
               for m in r.body["messages"])


def test_a_server_that_states_no_context_gets_the_sessions_whole(
        tmp_path: Any, llm_server: LLMServer) -> None:
    from memdeck.engine import Engine

    llm_server.handler = lambda body: json_reply(GOOD)
    Engine.open(_long_demo(tmp_path, llm_server)).extract()
    assert llm_server.chat_requests()
    assert not any("tokens truncated" in m["content"] for r in llm_server.chat_requests()
                   for m in r.body["messages"])


def test_the_setting_beats_the_server_and_no_statement_keeps_codexs_figure(
        tmp_path: Any, llm_server: LLMServer) -> None:
    from memdeck.engine import Engine
    from memdeck.engine.backends.choice import phase1_budget

    home = _long_demo(tmp_path, llm_server)
    eng = Engine.open(home)
    assert phase1_budget(eng.phase1_backend(), None) == 150_000  # test-model states nothing
    llm_server.models = [{"id": "a", "max_model_len": 4096}, {"id": "b", "max_model_len": 9}]
    assert phase1_budget(eng.phase1_backend(), None) == 150_000  # two models, neither ours
    llm_server.models = [{"id": "gpt-6-luna", "max_model_len": 1_000_000}]
    assert phase1_budget(eng.phase1_backend(), None) == 150_000  # never more than Codex
    llm_server.models = [{"id": "gpt-6-luna", "max_model_len": 32_768}]
    assert phase1_budget(eng.phase1_backend(), None) == 32_768 - 1_024 - 4_096
    eng.config_set("memdeck.input_budget", "3000")
    assert phase1_budget(eng.phase1_backend(), 3000) == 3000
    assert eng.config_get("memdeck.input_budget").value == 3000


def test_raw_line_breaks_in_a_json_mode_string_are_read(llm_server: LLMServer) -> None:
    # seen from SmolLM2 through llama.cpp: a literal newline inside "raw_memory"
    broken = ('{"rollout_summary": "Fixed parse_empty", "rollout_slug": "fix-parse-empty", '
              '"raw_memory": "- run `cargo test`\n- then `cargo clippy`"}')
    llm_server.handler = like_llama_cpp(json_reply(broken))
    reply = ask(backend(llm_server.url))
    assert reply.parsed["raw_memory"] == "- run `cargo test`\n- then `cargo clippy`"
    assert len(llm_server.chat_requests()) == 2  # no retry was needed
    # under a strict schema the contract is Codex's: the same reply fails the job
    llm_server.reset_counters()
    llm_server.handler = None
    llm_server.push(json_reply(broken))
    with pytest.raises(ModelOutputError, match="not valid JSON"):
        ask(backend(llm_server.url, "json_schema"))


@pytest.mark.parametrize("models", [
    b"<html>proxy</html>", b'{"data": "x"}', b'{"data": [{"id": "a", "max_model_len": true}]}',
    b'{"data": [{"id": "a", "max_model_len": -5}]}', b"[]", b'{"data": [' * 5000,
])
def test_a_models_list_that_makes_no_sense_keeps_codexs_figure(models: bytes) -> None:
    from memdeck.engine.backends.server_context import context_length

    class Client:
        def get(self, path: str, cast_to: type) -> bytes:
            return models

    assert context_length(Client(), "a") is None  # type: ignore[arg-type]
