"""Phase 1 through the real openai client against a local OpenAI-compatible server."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import served_demo
from llm_server import json_reply, rate_limited, raw_reply, server_error

from memdeck.engine import Engine, demo_home
from memdeck.tui.cli import main

GOOD = {"rollout_summary": "# Django upgrade\n\n## Task 1: upgrade, success\n",
        "rollout_slug": "django_upgrade",
        "raw_memory": "---\ndescription: django upgrade\n---\n\n### Task 1\n"
                      "- run `pytest -x -q`; token sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n"}


@pytest.fixture
def demo(tmp_path: Path, llm_server) -> Path:
    return served_demo(tmp_path / "demo", llm_server.url, retries=1, timeout=5)


def run(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _user_text(body) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def test_extract_with_openai_backend(capsys, demo: Path, llm_server) -> None:
    def handler(body):
        text = _user_text(body)
        if "Django" in text:
            return json_reply(GOOD)
        return json_reply({"rollout_summary": "x", "raw_memory": "y", "extra": 1})  # schema break

    llm_server.handler = handler
    code, report, err = run(capsys, "extract", "--json", "--home", str(demo))
    assert report["backend"] == "openai"
    outcomes = sorted(r["outcome"] for r in report["results"] if r["outcome"] != "skipped")
    assert outcomes == ["extracted", "failed"]
    assert code == 1 and err.count("\n") == 1

    # what went to the model: Codex's prompt layout, strict schema, redacted rollout
    reqs = llm_server.chat_requests()
    assert len(reqs) == 2
    body = reqs[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["messages"][0]["role"] == "system"
    assert "Memory" in body["messages"][0]["content"] or "memory" in body["messages"][0]["content"]
    sent = json.dumps([r.body for r in reqs])
    assert "wJalrXUtnFEMI" not in sent and "[REDACTED_SECRET]" in sent
    assert "=== ROLLOUT BEGINS ===" in _user_text(body)

    conn = sqlite3.connect(demo / "memories_1.sqlite")
    raw = conn.execute("SELECT raw_memory FROM stage1_outputs WHERE rollout_slug = "
                       "'django_upgrade'").fetchone()[0]
    err_row = conn.execute("SELECT status, last_error, retry_at FROM jobs WHERE status = "
                           "'error' AND last_error LIKE '%extra%'").fetchone()
    conn.close()
    assert "sk-proj-" not in raw and "[REDACTED_SECRET]" in raw  # output redacted too
    assert err_row is not None and err_row[2] is not None

    calls = sqlite3.connect(demo / "memdeck" / "memdeck.sqlite").execute(
        "SELECT backend, purpose, prompt_hash, error FROM model_calls").fetchall()
    assert len(calls) == 2 and {c[0] for c in calls} == {"openai"}
    assert all(len(c[2]) == 16 for c in calls)
    assert sum(1 for c in calls if c[3]) == 1


@pytest.mark.parametrize("fault", [
    lambda: server_error(),
    lambda: raw_reply(b"this is not json"),
])
def test_endpoint_faults_record_errors_and_write_nothing(capsys, demo: Path, llm_server,
                                                         fault) -> None:
    llm_server.handler = lambda body: fault()
    code, report, err = run(capsys, "extract", "--json", "--home", str(demo))
    tried = [r for r in report["results"] if r["outcome"] != "skipped"]
    assert tried and all(r["outcome"] == "failed" for r in tried)
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    conn = sqlite3.connect(demo / "memories_1.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM stage1_outputs").fetchone()[0] == 3  # demo rows
    errors = conn.execute("SELECT COUNT(*) FROM jobs WHERE status = 'error' AND retry_at IS "
                          "NOT NULL").fetchone()[0]
    conn.close()
    assert errors == len(tried) + 1  # + the demo's own failed session


def test_rate_limit_is_retried(capsys, demo: Path, llm_server) -> None:
    llm_server.push(rate_limited(0.2))
    llm_server.handler = lambda body: json_reply(GOOD)
    code, report, _ = run(capsys, "extract", "--json", "--home", str(demo))
    assert code == 0
    assert {r["outcome"] for r in report["results"]} >= {"extracted"}
    assert len(llm_server.chat_requests()) == 3  # 2 sessions + 1 retry


def test_unreachable_endpoint_is_one_line(capsys, tmp_path: Path) -> None:
    home = demo_home(tmp_path / "demo")
    Engine.open(home).config_set("memdeck.base_url", "http://127.0.0.1:9/v1")
    Engine.open(home).config_set("memdeck.max_retries", "0")
    code = main(["extract", "--home", str(home)])
    out, err = capsys.readouterr()
    assert code == 1 and err.count("\n") == 1 and "127.0.0.1:9" in err
    assert "backend: openai" in out


def test_ctrl_c_stops_at_once_and_the_next_run_takes_the_sessions_back(
        capsys, demo: Path, llm_server) -> None:
    """Ctrl-C while the model is slow: memdeck leaves at once instead of waiting for replies
    that would come only after its 10-minute request timeout. The bounds are what a user
    would call hung, not a figure: they hold on a machine busy on every core."""
    import signal
    import subprocess
    import sys
    import time

    from llm_server import slow_reply

    Engine.open(demo).config_set("memdeck.request_timeout", "600")
    llm_server.handler = lambda body: slow_reply(900)
    import os

    # Ctrl-C in a terminal: SIGINT is live in the child even when this suite was started in
    # the background of a shell, which starts its jobs with SIGINT ignored (and Python keeps
    # an ignored SIGINT ignored: that run's memdeck rightly went on after the signal)
    as_in_a_terminal = ("import runpy, signal, sys; "
                        "signal.signal(signal.SIGINT, signal.default_int_handler); "
                        "sys.argv = ['memdeck', *sys.argv[1:]]; "
                        "runpy.run_module('memdeck.tui.cli', run_name='__main__')")
    proc = subprocess.Popen([sys.executable, "-c", as_in_a_terminal, "extract", "--home",
                             str(demo)], env={**os.environ, "PYTHONFAULTHANDLER": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while llm_server.in_flight < 2:
        assert time.monotonic() < deadline, "the extraction never reached the server"
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(60)  # the replies it was waiting for are 900 s away
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler prints where every thread is
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise AssertionError("extract went on after Ctrl-C, waiting for the model:\n"
                             + proc.stderr.read()[-6000:]) from None
    assert code == 130
    assert proc.stderr.read().strip().splitlines()[-1] == "memdeck: interrupted"

    llm_server.handler = lambda body: json_reply(GOOD)
    code, report, _ = run(capsys, "extract", "--json", "--home", str(demo))
    assert sorted(r["outcome"] for r in report["results"] if r["outcome"] != "skipped") == [
        "extracted", "extracted"], report["results"]
    assert code == 0
