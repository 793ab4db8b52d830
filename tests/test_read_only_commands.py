"""A read-only command never creates anything in the Codex home that Codex reads
(docs/architecture.md): run on a fresh home, the only new paths are memdeck's own, under
`memdeck/` (its index, its settings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdeck.tui.cli import main

READ_ONLY = [["sessions"], ["sessions", "--json"], ["show", "01a23054"],
             ["show", "01a23054", "--json"], ["memories"], ["citations"], ["proposals"],
             ["backups"], ["history"], ["config", "get", "max_rollout_age_days"],
             ["config", "list"], ["preview"], ["preview", "--json"],
             ["remembered", "01a23054"], ["remembered", "01a23054", "--json"], ["scope"],
             ["scope", "--json"], ["scope", "--leaks"]]


def every_path(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def fresh_home(home):
    """A home as Codex leaves it after a few sessions: rollouts and config.toml, nothing else
    (no archived_sessions/, no memories/, no databases)."""
    home.config("[features]\nmemories = true\n")
    home.add("cli-preferences.jsonl", idle_hours=9)
    home.add("windows-cwd.jsonl", idle_hours=9)
    home.add("subagent-review.jsonl")
    return home.root


@pytest.mark.parametrize("argv", READ_ONLY, ids=lambda a: " ".join(a))
def test_a_read_only_command_creates_nothing_outside_memdeck(capsys, fresh_home: Path,
                                                             argv: list[str]) -> None:
    before = every_path(fresh_home)
    assert main([*argv, "--home", str(fresh_home)]) == 0
    capsys.readouterr()
    new = every_path(fresh_home) - before
    assert {p for p in new if p != "memdeck" and not p.startswith("memdeck/")} == set()
    assert not (fresh_home / "archived_sessions").exists()


def test_usage_creates_nothing_outside_memdeck(capsys, fresh_home: Path) -> None:
    """`memdeck usage` on a v2 home's summary: it reads the files, the index and the
    history, and creates no memory root of another version, nor anything else Codex reads."""
    (fresh_home / "memories_v2").mkdir()
    (fresh_home / "memories_v2" / "memory_summary.md").write_text("v1\n\n## User Profile\n")
    before = every_path(fresh_home)
    for argv in (["usage", "memory_summary.md"], ["usage", "memory_summary.md", "--json"],
                 ["usage", "memory_summary.md", "--line", "1"]):
        assert main([*argv, "--home", str(fresh_home)]) == 0
    capsys.readouterr()
    new = every_path(fresh_home) - before
    assert {p for p in new if p != "memdeck" and not p.startswith("memdeck/")} == set()
    assert not (fresh_home / "memories").exists()


def test_trace_creates_nothing_outside_memdeck(capsys, fresh_home: Path) -> None:
    """`memdeck trace` on a v2 home: it reads the memory files, the pipeline database, the
    index, the rollout and the history, and creates nothing Codex reads (no `memories/`)."""
    root = fresh_home / "memories_v2"
    (root / "rollout_summaries").mkdir(parents=True)
    (root / "memory_summary.md").write_text(
        "v1\n\n## What's in Memory\n- rollout_summaries/2026-12-01T10-00-00-Ab3x-prefs.md"
        " — prefers pytest -x; thread_id=01a23054-a1fc-7969-acf0-6947af085e83\n")
    before = every_path(fresh_home)
    for argv, rc in ((["trace", "memory_summary.md:4"], 0),
                     (["trace", "memory_summary.md:4", "--json"], 0),
                     (["trace", "memory_summary.md:99"], 2)):
        assert main([*argv, "--home", str(fresh_home)]) == rc
    assert '"confidence": "' in capsys.readouterr().out
    new = every_path(fresh_home) - before
    assert {p for p in new if p != "memdeck" and not p.startswith("memdeck/")} == set()
    assert not (fresh_home / "memories").exists()
    assert not (fresh_home / "memdeck" / "history_v2.git").exists()


def test_watch_creates_nothing_outside_memdeck(fresh_home: Path) -> None:
    """`memdeck watch` (auto_extract off) indexes and records history: memdeck's own files."""
    import os
    import subprocess
    import sys
    import time

    before = every_path(fresh_home)
    proc = subprocess.Popen([sys.executable, "-m", "memdeck.tui.cli", "watch", "--json",
                             "--tick", "1", "--home", str(fresh_home)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (fresh_home / "memdeck").exists():
            time.sleep(0.1)
        time.sleep(2.5)  # a few ticks of the idle scheduler
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    new = every_path(fresh_home) - before
    assert (fresh_home / "memdeck").exists(), proc.stderr.read() if proc.stderr else ""
    assert {p for p in new if p != "memdeck" and not p.startswith("memdeck/")} == set()
