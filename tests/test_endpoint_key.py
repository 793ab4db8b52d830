"""A key goes only to the endpoint it was configured for (issue 25, item 6).

A user with `OPENAI_API_KEY` in their shell who points memdeck at a local llama.cpp / Ollama
server must never have that key sent to it. Checked on what the local server receives: every
header of every request, through the facade and through a real `memdeck` process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import served_demo
from llm_server import LLMServer, json_reply, status_reply

from memdeck.engine import Engine
from memdeck.engine.backends.endpoint_key import key_for, origin
from memdeck.engine.backends.openai_client import resolve_backend_config

OPENAI_KEY = "sk-proj-" + "Q7rT" * 12  # shaped like a real one: it must go nowhere here
GOOD = {"raw_memory": "", "rollout_summary": "", "rollout_slug": ""}


def _sent(server: LLMServer) -> str:
    return "\n".join(f"{k}: {v}" for r in server.requests for k, v in r.headers.items())


def test_the_environments_openai_key_is_not_sent_to_memdecks_local_endpoint() -> None:
    env = {"OPENAI_API_KEY": OPENAI_KEY}
    cfg = resolve_backend_config({"base_url": "http://127.0.0.1:8080/v1"}, None, env)
    assert cfg.api_key is None
    assert "OPENAI_API_KEY was not sent to 127.0.0.1:8080 (memdeck.base_url)" in cfg.key_withheld
    assert "api.openai.com" in cfg.key_withheld and OPENAI_KEY not in cfg.key_withheld
    # a host named like OpenAI's but elsewhere, or OpenAI's over plain http: not its endpoint
    for url in ("https://api.openai.com.evil.example/v1", "http://api.openai.com/v1",
                "https://api.openai.com:8443/v1"):
        assert resolve_backend_config({"base_url": url}, None, env).api_key is None, url


def test_each_key_goes_with_its_own_endpoint() -> None:
    env = {"OPENAI_API_KEY": OPENAI_KEY, "LLAMA_KEY": " llama-secret ",
           "OPENAI_BASE_URL": "https://proxy.corp.example/openai/v1"}
    # the environment's pair: OPENAI_BASE_URL with OPENAI_API_KEY, as the openai client does
    cfg = resolve_backend_config({}, None, env)
    assert (cfg.base_url, cfg.api_key, cfg.key_source) == (
        "https://proxy.corp.example/openai/v1", OPENAI_KEY, "$OPENAI_API_KEY")
    # memdeck's endpoint on the same origin as the environment's: the same key is fine
    same = resolve_backend_config({"base_url": "https://PROXY.corp.example:443/other"}, None, env)
    assert same.api_key == OPENAI_KEY
    # memdeck's own key: from its file, or from the variable it names
    mine = resolve_backend_config({"base_url": "http://127.0.0.1:11434/v1",
                                   "api_key_env": "LLAMA_KEY"}, None, env)
    assert (mine.api_key, mine.key_source, mine.key_withheld) == ("llama-secret", "$LLAMA_KEY", "")
    filed = resolve_backend_config({"base_url": "http://127.0.0.1:11434/v1", "api_key": "k1",
                                    "api_key_env": "LLAMA_KEY"}, None, env)
    assert (filed.api_key, filed.key_source) == ("k1", "memdeck.api_key")
    # a variable named but empty: no key, and the OpenAI key still withheld
    empty = resolve_backend_config({"base_url": "http://127.0.0.1:11434/v1",
                                    "api_key_env": "NOT_SET"}, None, env)
    assert empty.api_key is None and empty.key_withheld
    # no endpoint anywhere: OpenAI's own, with the environment's key
    plain = resolve_backend_config({}, None, {"OPENAI_API_KEY": OPENAI_KEY})
    assert plain.api_key == OPENAI_KEY and plain.base_url is None


def test_origins() -> None:
    assert origin("HTTP://LocalHost:80/v1") == ("http", "localhost", 80)
    assert origin("https://api.openai.com/v1") == origin("https://api.openai.com:443/x")
    assert origin("http://[::1]:8080/v1") == ("http", "::1", 8080)
    assert origin("not a url") is None and origin("http://h:99999/") is None
    got = key_for("http://[::1]:8080/v1", my_base_url="x", my_key=None, my_key_env=None,
                  env={"OPENAI_API_KEY": OPENAI_KEY})
    assert got.key is None and "[::1]:8080" in got.withheld


def test_a_local_server_never_receives_the_openai_key(tmp_path: Path,
                                                      llm_server: LLMServer) -> None:
    home = served_demo(tmp_path / "demo", llm_server.url)
    llm_server.handler = lambda body: json_reply(GOOD)
    env = {**os.environ, "OPENAI_API_KEY": OPENAI_KEY}
    env.pop("OPENAI_BASE_URL", None)
    proc = subprocess.run([sys.executable, "-m", "memdeck.tui.cli", "extract", "--home", str(home),
                           "--limit", "1"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert llm_server.chat_requests(), "the extract called the local server"
    assert OPENAI_KEY not in _sent(llm_server)
    assert {r.headers.get("authorization") for r in llm_server.requests} == {"Bearer no-key"}


def test_a_rejected_request_says_which_key_was_held_back(tmp_path: Path,
                                                         llm_server: LLMServer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    home = served_demo(tmp_path / "demo", llm_server.url)
    llm_server.handler = lambda body: status_reply(401, "missing bearer token")
    report = Engine.open(home).extract(limit=1)
    [failed] = [r for r in report.results if r.outcome == "failed"]
    assert "HTTP 401" in failed.detail
    assert "OPENAI_API_KEY was not sent to 127.0.0.1" in failed.detail
    assert "memdeck.api_key_env" in failed.detail and OPENAI_KEY not in failed.detail
    # the variable it names is sent, and only to this endpoint
    monkeypatch.setenv("LOCAL_LLM_KEY", "local-secret")
    Engine.open(home).config_set("memdeck.api_key_env", "LOCAL_LLM_KEY")
    llm_server.requests.clear()
    llm_server.handler = lambda body: json_reply(GOOD)
    again = Engine.open(home).extract(limit=2)  # the failed one waits for its retry time
    assert "no_output" in {r.outcome for r in again.results}, again.results  # GOOD is empty
    assert {r.headers.get("authorization") for r in llm_server.chat_requests()} == {
        "Bearer local-secret"}
    assert OPENAI_KEY not in _sent(llm_server)
