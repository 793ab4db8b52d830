"""Issue 12, item 10: the 4 MB reply cap holds while the reply arrives, not after it was
buffered. The extraction runs as the real `memdeck extract` in a subprocess against
tests/llm_server.py streaming 200 MB, and its peak RSS is its own VmHWM, read as it exits."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import served_demo
from llm_server import LLMServer, Reply, json_reply, status_reply, streamed_reply
from llm_server import llm_server as llm_server  # noqa: F401  (the fixture)

from memdeck.engine import Engine
from memdeck.engine.backends.openai_client import (
    MAX_BODY_BYTES,
    STAGE_ONE_OUTPUT_SCHEMA,
    BackendConfig,
    ModelCallError,
    ModelOutputError,
    build_client,
    extract_json,
)

HUGE = 200 * 1000 * 1000
PEAK_LIMIT_MB = 150
GOOD = {"rollout_summary": "s", "rollout_slug": None, "raw_memory": "r"}


# The child reports its own high-water mark (VmHWM) as it exits: that one belongs to its
# image alone, while the kernel's rusage also counts the pages it shared with the parent it
# was forked from (a pytest worker of a few hundred MB) until its exec.
_MEASURED = """
import atexit, runpy, sys

def write_peak(path):
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open(path, "w").write(line.split()[1])

atexit.register(write_peak, sys.argv[1])
sys.argv = ["memdeck", *sys.argv[2:]]
runpy.run_module("memdeck.tui.cli", run_name="__main__")
"""


def run_extract(home: Path, tmp_path: Path) -> tuple[int, dict[str, Any], str, float]:
    """`memdeck extract --json` of one session in a child process (one reply in flight, so
    the peak measures one reply, not eight at once): (exit code, report, stderr, the
    child's peak RSS in MB)."""
    one = next(s.id for s in Engine.open(home).sessions() if s.status == "eligible")
    out, err, hwm = tmp_path / "stdout", tmp_path / "stderr", tmp_path / "vmhwm"
    with out.open("wb") as o, err.open("wb") as e:
        code = subprocess.run([sys.executable, "-c", _MEASURED, str(hwm), "extract", one,
                               "--json", "--home", str(home)], stdout=o, stderr=e,
                              env=dict(os.environ)).returncode
    return code, json.loads(out.read_text()), err.read_text(), int(hwm.read_text()) / 1024


@pytest.fixture
def home(tmp_path: Path, llm_server: LLMServer) -> Path:
    return served_demo(tmp_path / "demo", llm_server.url, timeout=60)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_200_mb_streamed_reply_is_cut_off_at_the_cap(home: Path, tmp_path: Path,
                                                      llm_server: LLMServer) -> None:
    llm_server.handler = lambda body: streamed_reply(HUGE, chunk=256 * 1024, interval=0.002)
    code, report, err, peak_mb = run_extract(home, tmp_path)

    failed = [r for r in report["results"] if r["outcome"] == "failed"]
    assert code == 1 and failed, (report, err)
    for r in failed:
        assert "larger than the 4 MB reply cap" in r["detail"], r["detail"]
        assert "\n" not in r["detail"]
    assert "4 MB reply cap" in err and err.count("\n") == 1, err
    assert peak_mb < PEAK_LIMIT_MB, f"peak RSS {peak_mb:.0f} MB"
    # memdeck hung up: the server could not push much past the cap (socket buffers aside)
    assert llm_server.streamed_bytes < len(failed) * (MAX_BODY_BYTES + (16 << 20)), \
        llm_server.streamed_bytes


# -- the same cap in process: its other paths ---------------------------------------------
def cfg_for(url: str) -> BackendConfig:
    return BackendConfig(base_url=url, api_key="test-key", extract_model="m",
                         consolidation_model="m", timeout=30.0, max_retries=0)


def extract(url: str) -> Any:
    cfg = cfg_for(url)
    return extract_json(build_client(cfg), cfg, system="SYS", user="USER",
                        schema=STAGE_ONE_OUTPUT_SCHEMA, schema_name="stage_one_output")


def test_a_small_streamed_reply_is_read_whole(llm_server: LLMServer) -> None:
    """A chunked body under the cap arrives whole: all 3,500,000 characters are counted (by
    the separate 1 M content limit, which then refuses them)."""
    llm_server.push(streamed_reply(3_500_000, chunk=100_000))
    with pytest.raises(ModelOutputError, match=r"sent 3\.5 M characters \(limit 1 M\)"):
        extract(llm_server.url)
    llm_server.push(json_reply(GOOD))
    assert extract(llm_server.url).parsed == GOOD


def test_a_compressed_reply_is_capped_after_decompression(llm_server: LLMServer) -> None:
    """A gzip body of ~50 KB that inflates to 50 MB: the cap counts what it inflates to."""
    body = gzip.compress(json.dumps({"choices": [{"message": {
        "role": "assistant", "content": "x" * 50_000_000}}]}).encode())
    assert len(body) < 1_000_000
    llm_server.push(Reply("raw", body=body, headers=(("Content-Encoding", "gzip"),)))
    with pytest.raises(ModelOutputError, match="larger than the 4 MB reply cap"):
        extract(llm_server.url)
    small = gzip.compress(json.dumps({"choices": [{"message": {
        "role": "assistant", "content": json.dumps(GOOD)}}]}).encode())
    llm_server.push(Reply("raw", body=small, headers=(("Content-Encoding", "gzip"),)))
    assert extract(llm_server.url).parsed == GOOD
    llm_server.push(Reply("raw", body=b"??", headers=(("Content-Encoding", "br"),)))
    with pytest.raises(ModelCallError, match="content-encoding 'br', which memdeck does not"):
        extract(llm_server.url)


def test_a_huge_error_body_is_cut_to_one_line(llm_server: LLMServer) -> None:
    llm_server.push(status_reply(400, "bad request " + "y" * 20_000_000))
    with pytest.raises(ModelCallError) as ei:
        extract(llm_server.url)
    text = str(ei.value)
    assert "rejected the request with HTTP 400" in text and len(text) < 400, text[:400]
