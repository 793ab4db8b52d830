"""Codex after a pull (issue 26, item 7), proved with the real `codex` binary: home A runs
memdeck's pipeline and pushes to a bare repository; home B, a fresh home on another "machine",
pulls, reviews nothing away and accepts; the next `codex exec` on B is shown the merged
summary, byte for byte, and a session on B that cites it is read back by memdeck."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from codex_oracle.fake_responses import FakeResponses
from codex_oracle.runner import run_exec
from test_codex_oracle_write import (
    between_markers,
    fresh_home,
    memdeck,
    memdeck_pipeline,
    memory_text,
)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_codex_on_the_other_machine_injects_the_pulled_memory(tmp_path: Path, codex_bin: Path,
                                                              version: str) -> None:
    repo = tmp_path / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    a, a_root = fresh_home(tmp_path / "a", version)
    memdeck_pipeline(a)
    memdeck("remote", "add", "team", f"file://{repo}", "--home", str(a))
    memdeck("push", "--home", str(a))

    b, b_root = fresh_home(tmp_path / "b", version)
    for f in (b / "sessions").rglob("*.jsonl"):
        f.unlink()  # B's own sessions are other ones: only the pulled memory is there
    memdeck("remote", "add", "team", f"file://{repo}", "--home", str(b))

    proposal = json.loads(memdeck("pull", "--home", str(b), "--json").stdout)
    assert proposal["backend"] == "pull:team" and proposal["problems"] == []
    memdeck("accept", proposal["id"], "--home", str(b))
    summary = (b_root / "memory_summary.md").read_text(encoding="utf-8")
    from memdeck.engine.sync.shared import shared_text

    # A's summary without A's thread ids (B never had those sessions)
    assert summary == shared_text("memory_summary.md",
                                  (a_root / "memory_summary.md").read_text(encoding="utf-8"))
    assert "thread_id=" not in summary

    with FakeResponses() as server:
        rc, _, err = run_exec(b, server, "what do you remember about my projects?", timeout=90)
        assert rc == 0, err[-2000:]
        assert not server.errors, server.errors
        turn = server.turns()[0]
    assert between_markers(memory_text(turn)) == summary.strip()
    # Codex's own phase 2 on B (it never ran there) keeps the merged summary and MEMORY.md;
    # the rollout summaries it did not make it removes, as it does on any machine
    # (README "Sharing memory")
    assert (b_root / "memory_summary.md").read_text(encoding="utf-8") == summary
    history = json.loads(memdeck("history", "--home", str(b), "--json").stdout)
    assert "pull" in [h["origin"] for h in history]
