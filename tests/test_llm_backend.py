"""The openai backend: the real `openai` client against tests/llm_server.py on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from llm_server import (
    LLMServer,
    Reply,
    dropped_connection,
    enormous_reply,
    json_reply,
    rate_limited,
    raw_reply,
    server_error,
    slow_reply,
    status_reply,
    tool_call_reply,
)
from llm_server import llm_server as llm_server  # noqa: F401  (the fixture)

from memdeck.engine.backends.openai_client import (
    STAGE_ONE_OUTPUT_SCHEMA,
    BackendConfig,
    ModelCallError,
    ModelOutputError,
    OpenAIBackend,
    build_client,
    chat_with_tools,
    choose_backend,
    extract_json,
    parse_stage_one_output,
    resolve_backend_config,
    tool_result,
)
from memdeck.engine.call_log import log_call, prompt_hash, recent_calls
from memdeck.engine.codex.settings import MemoriesConfig
from memdeck.engine.errors import ConfigError, MemdeckError
from memdeck.engine.store import Store

GOOD = {"rollout_summary": "Fixed parse_empty", "rollout_slug": "fix-parse-empty",
        "raw_memory": "- run `cargo test parse_empty` after touching src/lib.rs"}


def cfg_for(url: str, **over: Any) -> BackendConfig:
    base = {"base_url": url, "api_key": "test-key", "extract_model": "extract-m",
            "consolidation_model": "consolidate-m", "timeout": 5.0, "max_retries": 2}
    return BackendConfig(**{**base, **over})


def extract(server_url: str, **over: Any) -> Any:
    cfg = cfg_for(server_url, **over)
    return extract_json(build_client(cfg), cfg, system="SYS", user="USER",
                        schema=STAGE_ONE_OUTPUT_SCHEMA, schema_name="stage_one_output")


def assert_one_line(e: BaseException) -> None:
    text = str(e)
    assert "\n" not in text and "Traceback" not in text and len(text) < 400, text
    assert isinstance(e, MemdeckError)


# -- phase 1 round trip ---------------------------------------------------------------------
def test_json_schema_round_trip(llm_server: LLMServer) -> None:
    llm_server.push(json_reply(GOOD))
    reply = extract(llm_server.url)
    assert reply.parsed == GOOD and json.loads(reply.text) == GOOD
    assert (reply.input_tokens, reply.output_tokens, reply.model) == (11, 7, "extract-m")
    assert reply.duration_ms >= 0
    (req,) = llm_server.requests
    assert (req.method, req.path) == ("POST", "/v1/chat/completions")
    assert req.headers["authorization"] == "Bearer test-key"
    assert req.body["model"] == "extract-m"
    assert req.body["messages"] == [{"role": "system", "content": "SYS"},
                                    {"role": "user", "content": "USER"}]
    assert req.body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "stage_one_output", "schema": STAGE_ONE_OUTPUT_SCHEMA, "strict": True}}
    assert "tools" not in req.body and "stream" not in req.body


def test_schema_is_codex_s(llm_server: LLMServer) -> None:
    assert json.dumps(STAGE_ONE_OUTPUT_SCHEMA, separators=(",", ":")) == (
        '{"type":"object","properties":{"rollout_summary":{"type":"string"},'
        '"rollout_slug":{"type":["string","null"]},"raw_memory":{"type":"string"}},'
        '"required":["rollout_summary","rollout_slug","raw_memory"],'
        '"additionalProperties":false}')


@pytest.mark.parametrize("text, expected", [
    ('{"rollout_summary": "s", "raw_memory": "m"}', None),  # slug may be missing
    ('{"rollout_summary": "s", "rollout_slug": null, "raw_memory": "m"}', None),
    ('  {"rollout_summary": "", "rollout_slug": "x", "raw_memory": ""}\n', "x"),
])
def test_stage_one_accepts_what_codex_accepts(text: str, expected: str | None) -> None:
    assert parse_stage_one_output(text)["rollout_slug"] == expected


@pytest.mark.parametrize("content, reason", [
    ({**GOOD, "confidence": 0.9}, "unknown key 'confidence'"),
    ({"rollout_summary": "s", "rollout_slug": None}, "missing key 'raw_memory'"),
    ({**GOOD, "rollout_summary": 3}, "rollout_summary must be a string, got a number"),
    ({**GOOD, "rollout_slug": ["a"]}, "rollout_slug must be a string, got an array"),
    ({**GOOD, "raw_memory": None}, "raw_memory must be a string, got null"),
    ([GOOD], "output is an array, not an object"),
    ("Sure! Here is the JSON: {}", "not valid JSON"),
    ('{"rollout_summary": "a", "rollout_summary": "b", "raw_memory": "m"}', "duplicate key"),
    ('{"rollout_summary": NaN, "raw_memory": "m"}', "not valid JSON"),
    ('{"rollout_summary": "\\ud800", "raw_memory": "m"}', "unpaired surrogate"),
])
def test_schema_breaking_output_is_a_model_output_error(
        llm_server: LLMServer, content: Any, reason: str) -> None:
    llm_server.push(json_reply(content))
    with pytest.raises(ModelOutputError) as ei:
        extract(llm_server.url)
    assert reason in str(ei.value)
    assert f"model extract-m at {llm_server.url} broke the stage_one_output schema" in str(ei.value)
    assert_one_line(ei.value)
    assert (ei.value.input_tokens, ei.value.output_tokens) == (11, 7)  # spent, so logged
    assert len(llm_server.requests) == 1  # a bad answer is not retried (Codex: job fails)


def test_cut_off_reply_says_so(llm_server: LLMServer) -> None:
    llm_server.push(Reply("chat", message={"role": "assistant", "content": '{"rollout_su'},
                          finish_reason="length"))
    with pytest.raises(ModelOutputError, match="cut off at the token limit"):
        extract(llm_server.url)


def test_refusal_is_an_output_error(llm_server: LLMServer) -> None:
    llm_server.push(Reply("chat", message={"role": "assistant", "content": None,
                                           "refusal": "I can't help with that."}))
    with pytest.raises(ModelOutputError, match="refused: I can't help with that"):
        extract(llm_server.url)


# -- retries and faults ---------------------------------------------------------------------
def test_429_retry_after_is_honoured(llm_server: LLMServer) -> None:
    llm_server.push(rate_limited(1), json_reply(GOOD))
    t0 = time.monotonic()
    reply = extract(llm_server.url)
    assert reply.parsed == GOOD
    first, second = llm_server.requests
    gap = second.at - first.at
    # the client's own backoff for a first retry is 0.375-0.5 s; 1 s means Retry-After won
    # (upper bounds here and below are "did not hang", generous for a machine under load)
    assert 0.95 <= gap < 30, gap
    assert second.headers["x-stainless-retry-count"] == "1"
    assert reply.duration_ms >= 950 and time.monotonic() - t0 < 30


def test_429_after_retries_is_one_line(llm_server: LLMServer) -> None:
    llm_server.push(rate_limited(0.1), rate_limited(0.1))
    with pytest.raises(ModelCallError) as ei:
        extract(llm_server.url, max_retries=1)
    assert str(ei.value).startswith(f"model endpoint {llm_server.url} is rate-limiting "
                                    "(HTTP 429) after 1 retry")
    assert ei.value.kind == "rate_limit" and len(llm_server.requests) == 2
    assert_one_line(ei.value)


def test_429_with_a_long_retry_after_is_not_retried(llm_server: LLMServer) -> None:
    llm_server.push(rate_limited(300))
    t0 = time.monotonic()
    with pytest.raises(ModelCallError, match="after 0 retries; it asks to wait 300 s"):
        extract(llm_server.url)
    assert time.monotonic() - t0 < 60 and len(llm_server.requests) == 1  # not 300 s


def test_500_is_retried_with_backoff_then_one_line(llm_server: LLMServer) -> None:
    llm_server.push(server_error(), server_error(), server_error())
    t0 = time.monotonic()
    with pytest.raises(ModelCallError) as ei:
        extract(llm_server.url, max_retries=2)
    elapsed = time.monotonic() - t0
    assert str(ei.value) == (f"model endpoint {llm_server.url} failed with HTTP 500 after "
                             "2 retries: The server had an error while processing your request")
    assert len(llm_server.requests) == 3 and llm_server.unscripted == 0
    assert 1.1 <= elapsed < 30, elapsed  # 0.5 s then 1 s, less up to 25% jitter
    assert_one_line(ei.value)


def test_client_errors_are_not_retried(llm_server: LLMServer) -> None:
    llm_server.push(status_reply(401, "Incorrect API key provided"))
    with pytest.raises(ModelCallError) as ei:
        extract(llm_server.url)
    assert "rejected the request with HTTP 401 (check the API key): Incorrect" in str(ei.value)
    assert len(llm_server.requests) == 1


def test_timeout(llm_server: LLMServer) -> None:
    llm_server.push(slow_reply(120))
    t0 = time.monotonic()
    with pytest.raises(ModelCallError) as ei:
        extract(llm_server.url, timeout=1.0, max_retries=0)
    assert time.monotonic() - t0 < 60  # gave up after its timeout, not the 120 s reply
    assert str(ei.value) == f"model endpoint {llm_server.url} timed out after 1 s (0 retries)"
    assert ei.value.kind == "timeout"


def test_timeout_is_retried(llm_server: LLMServer) -> None:
    llm_server.push(slow_reply(5), json_reply(GOOD))
    assert extract(llm_server.url, timeout=1.0, max_retries=1).parsed == GOOD
    assert len(llm_server.requests) == 2


@pytest.mark.parametrize("reply, reason", [
    (raw_reply("<html>502 Bad Gateway</html>", "text/html"), "not JSON ('<html>502"),
    (raw_reply("this is not json"), "not JSON ('this is not json')"),
    (raw_reply('{"id": "x", "object": "chat.completion"}'), "not a chat completion"),
    (raw_reply('{"choices": []}'), "not a chat completion"),
    (raw_reply('{"error": {"message": "upstream\\nbusy"}}'),
     "an error with HTTP 200: upstream busy"),
    (raw_reply('{"choices": [{"message": {"content": 5}}]}'), "content that is not a string"),
])
def test_malformed_body(llm_server: LLMServer, reply: Reply, reason: str) -> None:
    llm_server.push(reply)
    with pytest.raises(ModelCallError) as ei:
        extract(llm_server.url)
    assert reason in str(ei.value) and str(ei.value).startswith("model endpoint http://127.0.0.1")
    assert_one_line(ei.value)


def test_enormous_reply(llm_server: LLMServer) -> None:
    llm_server.push(enormous_reply(5 * 1024 * 1024))
    with pytest.raises(ModelOutputError, match=r"sent a 5\.2 MB reply \(limit 4 MB\)"):
        extract(llm_server.url)
    llm_server.push(enormous_reply(1_500_000))  # body under the cap, content over it
    with pytest.raises(ModelOutputError, match=r"sent 1\.5 M characters \(limit 1 M\)"):
        extract(llm_server.url)


def test_connection_refused() -> None:
    with socket.socket() as s:  # bound, never listening: connections to it are refused
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        with pytest.raises(ModelCallError) as ei:
            extract(url, max_retries=1)
    assert str(ei.value) == f"model endpoint {url} refused the connection (1 retry)"
    assert ei.value.kind == "connection"


def test_connection_closed_mid_response(llm_server: LLMServer) -> None:
    llm_server.push(dropped_connection(), dropped_connection())
    with pytest.raises(ModelCallError, match="closed the connection mid-response .1 retry."):
        extract(llm_server.url, max_retries=1)
    assert len(llm_server.requests) == 2
    llm_server.push(dropped_connection(), json_reply(GOOD))
    assert extract(llm_server.url, max_retries=1).parsed == GOOD


# -- phase 2 tool calls ---------------------------------------------------------------------
TOOLS = [{"type": "function", "function": {
    "name": "read", "description": "Read a file in the memory workspace",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                   "required": ["path"]}}}]


def test_tool_calls(llm_server: LLMServer) -> None:
    llm_server.push(tool_call_reply(("read", {"path": "MEMORY.md"}), ("write", '{"path": "a'),
                                    ("list", "[1, 2]"), content="Reading first."),
                    json_reply("All done."))
    cfg = cfg_for(llm_server.url)
    client = build_client(cfg)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Consolidate."}]
    turn = chat_with_tools(client, cfg, messages=messages, tools=TOOLS)
    assert turn.text == "Reading first." and turn.finish_reason == "tool_calls"
    assert (turn.input_tokens, turn.output_tokens, turn.model) == (11, 7, "consolidate-m")
    read, write, lst = turn.tool_calls
    assert (read.id, read.name, read.arguments, read.error) == (
        "call_1", "read", {"path": "MEMORY.md"}, None)
    assert write.arguments == {} and "arguments are not valid JSON" in (write.error or "")
    assert write.raw_arguments == '{"path": "a'
    assert lst.error == "arguments must be a JSON object, got an array"
    req = llm_server.requests[0].body
    assert req["model"] == "consolidate-m" and req["tools"] == TOOLS
    assert "response_format" not in req

    messages.append(turn.assistant_message())
    messages += [tool_result(read.id, "# Memory"),
                 tool_result(write.id, {"error": write.error}),
                 tool_result(lst.id, {"error": lst.error})]
    final = chat_with_tools(client, cfg, messages=messages, tools=TOOLS)
    assert final.text == "All done." and final.tool_calls == ()
    sent = llm_server.requests[1].body["messages"]
    assert sent[1]["tool_calls"][1]["function"]["arguments"] == '{"path": "a'
    assert sent[3] == {"role": "tool", "tool_call_id": "call_2",
                       "content": json.dumps({"error": write.error})}


# -- concurrency ----------------------------------------------------------------------------
def test_eight_threads_share_one_client(llm_server: LLMServer) -> None:
    llm_server.latency = 0.2
    llm_server.handler = lambda body: json_reply(GOOD)
    backend = OpenAIBackend(cfg_for(llm_server.url))
    kw = {"system": "S", "user": "U", "schema": STAGE_ONE_OUTPUT_SCHEMA,
          "schema_name": "stage_one_output"}
    backend.extract_json(**kw)  # build the client outside the timing
    llm_server.reset_counters()
    n = 16
    t0 = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda _: backend.extract_json(**kw), range(n)))
    elapsed = time.monotonic() - t0
    ideal = 0.2 * -(-n // 8)
    assert all(r.parsed == GOOD for r in replies) and len(llm_server.requests) == n
    assert llm_server.max_in_flight == 8
    assert ideal <= elapsed < ideal * 1.5, elapsed


# -- configuration --------------------------------------------------------------------------
def mem(**kw: Any) -> MemoriesConfig:
    return MemoriesConfig.from_document({"memories": kw})


def test_resolve_precedence() -> None:
    env = {"OPENAI_BASE_URL": "http://env/v1", "OPENAI_API_KEY": "env-key"}
    mine = {"base_url": "http://mine/v1", "api_key": "my-key", "extract_model": "my-x",
            "consolidation_model": "my-c", "request_timeout": 30, "max_retries": 5}
    cfg = resolve_backend_config(mine, mem(extract_model="codex-x"), env)
    assert (cfg.base_url, cfg.api_key) == ("http://mine/v1", "my-key")
    assert (cfg.extract_model, cfg.consolidation_model) == ("codex-x", "my-c")
    assert (cfg.timeout, cfg.max_retries) == (30.0, 5)
    cfg = resolve_backend_config({"base_url": "  "}, None, env)
    assert (cfg.base_url, cfg.api_key) == ("http://env/v1", "env-key")
    cfg = resolve_backend_config({"request_timeout": 99999, "max_retries": "x"}, mem(), {})
    assert cfg.base_url is None and cfg.api_key is None
    assert (cfg.extract_model, cfg.consolidation_model) == ("gpt-6-luna", "gpt-6.1-terra")
    assert (cfg.timeout, cfg.max_retries) == (3600.0, 3)  # clamped / default like the CLI
    assert cfg.endpoint == "https://api.openai.com/v1"
    secret = resolve_backend_config({"base_url": "http://u:pw@h:8080/v1/?api-key=s"}, None, {})
    assert secret.endpoint == "http://h:8080/v1" and secret.url.endswith("?api-key=s")
    assert "my-key" not in repr(resolve_backend_config(mine, None, env))


def test_choose_backend() -> None:
    none = resolve_backend_config({}, None, {})
    assert choose_backend("auto", none) == "offline" and choose_backend(None, none) == "offline"
    assert choose_backend("openai", none) == "openai"
    assert choose_backend("auto", resolve_backend_config({}, None,
                                                         {"OPENAI_API_KEY": "k"})) == "openai"
    assert choose_backend("auto", resolve_backend_config({"base_url": "http://h/v1"}, None,
                                                         {})) == "openai"
    cfg = resolve_backend_config({}, None, {"OPENAI_API_KEY": "k"})
    assert choose_backend("offline", cfg) == "offline"
    with pytest.raises(ConfigError):
        choose_backend("claude", cfg)


def test_key_is_needed_only_for_the_default_endpoint(llm_server: LLMServer) -> None:
    with pytest.raises(ConfigError, match="needs a key"):
        build_client(resolve_backend_config({}, None, {}))
    llm_server.push(json_reply(GOOD))
    extract(llm_server.url, api_key=None)  # a local server without auth
    assert llm_server.requests[0].headers["authorization"] == "Bearer no-key"


# -- the server itself, the call log, import hygiene ----------------------------------------
def test_server_binds_loopback_and_lists_models(llm_server: LLMServer) -> None:
    assert llm_server._serving.running
    assert llm_server._serving._httpd.server_address[0] == "127.0.0.1"
    client = build_client(cfg_for(llm_server.url))
    assert [m.id for m in client.models.list()] == ["test-model"]


def test_server_stops_promptly_with_a_request_in_flight() -> None:
    server = LLMServer().start()
    server.push(slow_reply(600))
    cfg = cfg_for(server.url, timeout=300.0, max_retries=0)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            extract_json(build_client(cfg), cfg, system="s", user="u",
                         schema=STAGE_ONE_OUTPUT_SCHEMA, schema_name="x")
        except ModelCallError as e:
            errors.append(e)

    t = threading.Thread(target=call)
    t.start()
    deadline = time.monotonic() + 60
    while server.in_flight == 0:
        assert time.monotonic() < deadline, "the request never reached the server"
        time.sleep(0.01)
    t0 = time.monotonic()
    server.stop()
    t.join(60)
    assert not t.is_alive() and len(errors) == 1  # the connection closed, not a timeout
    assert time.monotonic() - t0 < 30


def test_call_log(tmp_path: Path) -> None:
    store = Store(tmp_path / "memdeck.sqlite")
    conn = store.conn()
    h = prompt_hash("system prompt")
    assert h == hashlib.sha256(b"system prompt").hexdigest()[:16]
    common: dict[str, Any] = {"backend": "openai", "purpose": "phase1", "model": "m",
                              "prompt_name": "stage_one_system", "prompt_hash": h}
    log_call(conn, **common, thread_id="t-1", input_tokens=11, output_tokens=7,
             duration_ms=250, error=None, started_at=1000.0)
    err = ModelCallError("model endpoint x\ntimed out", kind="timeout", duration_ms=1000)
    log_call(conn, **common, thread_id="t-2", input_tokens=err.input_tokens,
             output_tokens=err.output_tokens, duration_ms=err.duration_ms, error=str(err),
             started_at=1001.0)
    log_call(conn, **common, thread_id=None, input_tokens=0, output_tokens=0, duration_ms=500,
             error=None, started_at=1002.5)
    latest, failed, ok = recent_calls(conn)
    assert (ok.thread_id, ok.input_tokens, ok.output_tokens, ok.error) == ("t-1", 11, 7, None)
    assert (ok.prompt_name, ok.prompt_hash, ok.model, ok.backend) == (
        "stage_one_system", h, "m", "openai")
    assert failed.error == "model endpoint x timed out" and failed.duration_ms == 1000
    assert latest.thread_id is None and latest.started_at == 1002.5
    assert [c.thread_id for c in recent_calls(conn, limit=1)] == [None]
    store.close()


def test_importing_the_backend_does_not_import_openai() -> None:
    code = (
        "import sys\n"
        "import memdeck.engine, memdeck.engine.call_log\n"
        "import memdeck.engine.backends.openai_client as b\n"
        "assert 'openai' not in sys.modules\n"
        "cfg = b.resolve_backend_config({'base_url': 'http://127.0.0.1:9/v1'}, None, {})\n"
        "b.choose_backend('auto', cfg); b.parse_stage_one_output('{\"rollout_summary\": \"\", "
        "\"raw_memory\": \"\"}')\n"
        "assert 'openai' not in sys.modules\n"
        "b.build_client(cfg)\n"
        "assert 'openai' in sys.modules\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
