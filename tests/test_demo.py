"""The demo home: every status, Codex's formats, safe and idempotent rebuilds."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from memdeck.engine import Engine, HomeError, demo_home
from memdeck.engine.index.status import STATUSES


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return demo_home(tmp_path_factory.mktemp("demo") / "home")


def test_demo_covers_every_status(demo: Path) -> None:
    sessions = Engine.open(demo).sessions()
    assert {s.status for s in sessions} == set(STATUSES)
    assert 12 <= len(sessions) <= 20
    assert len({s.cwd for s in sessions if s.cwd}) == 3


def test_demo_has_codex_shapes(demo: Path) -> None:
    assert list(demo.glob("sessions/*/*/*/rollout-*.jsonl.zst"))
    assert list(demo.glob("archived_sessions/rollout-*.jsonl"))
    summary = (demo / "memories" / "memory_summary.md").read_text()
    assert summary.splitlines()[0] == "v1"
    for head in ("## User Profile", "## User preferences", "## General Tips",
                 "## What's in Memory"):
        assert head in summary
    memory = (demo / "memories" / "MEMORY.md").read_text()
    assert memory.startswith("# Task Group:") and "applies_to: cwd=" in memory
    for f in (demo / "memories" / "rollout_summaries").iterdir():
        assert f.read_text().startswith("thread_id: ")
    log = subprocess.run(["git", "-C", str(demo / "memories"), "log", "--format=%an <%ae>|%B"],
                         capture_output=True, text=True, check=True).stdout
    assert log.startswith("Codex <noreply@openai.com>|Initialize Codex git baseline")
    conn = sqlite3.connect(demo / "memories_1.sqlite")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"stage1_outputs", "jobs", "_sqlx_migrations"} <= tables
    conn.close()


def test_demo_citation_points_at_real_memory_lines(demo: Path) -> None:
    eng = Engine.open(demo)
    cited = next(s for s in eng.sessions() if s.preview.startswith("How do I run the tests"))
    detail = eng.session(cited.id).to_json()
    entry = detail["citations"][0]["entries"][0]
    lines = (demo / "memories" / entry["path"]).read_text().splitlines()
    assert "make check-quick" in "\n".join(lines[entry["line_start"] - 1:entry["line_end"]])


def test_demo_rebuild_is_idempotent_and_refuses_foreign_folders(tmp_path: Path) -> None:
    a = demo_home(tmp_path / "d")
    first = sorted(p.name for p in (a / "sessions").rglob("*.jsonl*"))
    demo_home(tmp_path / "d")
    assert len(sorted(p.name for p in (a / "sessions").rglob("*.jsonl*"))) == len(first)
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("precious")
    with pytest.raises(HomeError, match="not built by"):
        demo_home(foreign)
    assert (foreign / "keep.txt").read_text() == "precious"


def test_demo_command_no_tui(tmp_path: Path, capsys) -> None:
    from memdeck.tui.cli import main

    assert main(["demo", "--no-tui", "--json", "--dir", str(tmp_path / "x")]) == 0
    out = capsys.readouterr().out
    assert {d["status"] for d in json.loads(out)} == set(STATUSES)


def test_demo_keep_opens_the_home_as_it_was_left(tmp_path: Path, capsys) -> None:
    from memdeck.tui.cli import main

    home = tmp_path / "x"
    assert main(["demo", "--no-tui", "--json", "--dir", str(home)]) == 0
    memory = home / "memories" / "MEMORY.md"
    memory.write_text(memory.read_text() + "- my own line\n")
    capsys.readouterr()
    assert main(["demo", "--keep", "--no-tui", "--json", "--dir", str(home)]) == 0
    assert "(kept as it was)" in capsys.readouterr().err
    assert memory.read_text().endswith("- my own line\n")  # kept
    assert main(["demo", "--no-tui", "--json", "--dir", str(home)]) == 0
    assert "(rebuilt; --keep opens it as left)" in capsys.readouterr().err
    assert "- my own line" not in memory.read_text()  # rebuilt, as without --keep
    # --keep never opens (or clears) a folder memdeck demo did not build
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("precious")
    assert main(["demo", "--keep", "--no-tui", "--dir", str(foreign)]) == 1
    assert "not built by `memdeck demo`" in capsys.readouterr().err
    assert (foreign / "keep.txt").read_text() == "precious"
    # --keep on a folder with no demo home in it builds one
    assert main(["demo", "--keep", "--no-tui", "--json", "--dir", str(tmp_path / "y")]) == 0
    assert (tmp_path / "y" / "memories" / "MEMORY.md").exists()
