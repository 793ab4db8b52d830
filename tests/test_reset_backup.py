"""Reset clears exactly what Codex's does, after a backup that restores byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import hold_global_lease

from memdeck.engine import Engine, HomeError, MemdeckError, demo_home
from memdeck.tui.cli import main


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return demo_home(tmp_path / "demo")


def tree(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under the memory roots: content hash and mode."""
    out = {}
    for base in ("memories", "memories_extensions", "memories_v2"):
        for p in sorted((root / base).rglob("*")) if (root / base).exists() else []:
            if p.is_file():
                out[str(p.relative_to(root))] = (hashlib.sha256(p.read_bytes()).hexdigest(),
                                                 p.stat().st_mode)
    return out


def rows(root: Path) -> tuple[list, list]:
    conn = sqlite3.connect(root / "memories_1.sqlite")
    try:
        return (conn.execute("SELECT * FROM stage1_outputs ORDER BY thread_id").fetchall(),
                conn.execute("SELECT * FROM jobs ORDER BY kind, job_key").fetchall())
    finally:
        conn.close()


def test_reset_then_restore_is_byte_identical(capsys, demo: Path) -> None:
    files, (outputs, jobs) = tree(demo), rows(demo)
    sessions_before = [(s.id, s.memory_mode) for s in Engine.open(demo).sessions()]
    rollouts = {p: p.read_bytes() for p in demo.rglob("rollout-*")}
    assert any(".git/" in f for f in files) and outputs and jobs

    assert main(["reset", "--yes", "--json", "--home", str(demo)]) == 0
    backup = json.loads(capsys.readouterr().out)["backup"]
    assert Path(backup["path"]).exists()
    assert [p.name for p in (demo / "memories").iterdir()] == []  # emptied, folder kept
    assert rows(demo) == ([], [])
    # threads, rollouts and memory modes are untouched
    assert {p: p.read_bytes() for p in demo.rglob("rollout-*")} == rollouts
    after = [(s.id, s.memory_mode) for s in Engine.open(demo).sessions()]
    assert after == sessions_before

    assert main(["backups", "--json", "--home", str(demo)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [b["id"] for b in listed] == [backup["id"]]

    assert main(["restore-backup", backup["id"], "--home", str(demo)]) == 0
    assert "the state it replaced is backup" in capsys.readouterr().out
    assert tree(demo) == files
    assert rows(demo) == (outputs, jobs)
    log = subprocess.run(["git", "-C", str(demo / "memories"), "log", "--format=%an %s"],
                         capture_output=True, text=True, check=True).stdout
    assert log.strip() == "Codex Initialize Codex git baseline"
    # memdeck's own history holds every state: before, the reset, the restore
    eng = Engine.open(demo)
    eng.record_outside_edits()  # nothing is left to record
    assert [e.origin for e in eng.history()] == ["restore", "user", "start"]


def test_reset_asks_on_a_terminal_and_refuses_without_one(capsys, demo: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "memdeck.tui.cli", "reset", "--home", str(demo)],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "--yes" in r.stderr and r.stderr.count("\n") == 1
    assert (demo / "memories" / "MEMORY.md").exists()


def test_symlinked_root_is_refused(demo: Path, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    (demo / "memories").rename(real)
    (demo / "memories").symlink_to(real)
    with pytest.raises(HomeError, match="symlink"):
        Engine.open(demo).reset()
    assert (real / "MEMORY.md").exists()


def test_running_consolidation_blocks_reset(demo: Path) -> None:
    hold_global_lease(demo)
    with pytest.raises(MemdeckError, match="consolidation is running"):
        Engine.open(demo).reset()
    assert (demo / "memories" / "MEMORY.md").exists()
    assert not list((demo / "memdeck" / "backups").glob("*.tar.gz")) if (
        demo / "memdeck" / "backups").exists() else True


def test_damaged_backup_files_are_not_offered(demo: Path) -> None:
    eng = Engine.open(demo)
    eng.reset()
    bogus = demo / "memdeck" / "backups" / "20200101T000000Z.tar.gz"
    bogus.write_bytes(b"not a tarball")
    assert [b.id for b in eng.backups()] != [] and all(b.path != bogus for b in eng.backups())
    with pytest.raises(MemdeckError, match="no backup"):
        eng.restore_backup("20200101T000000Z")
    assert os.path.exists(bogus)


def test_a_backup_cut_short_is_not_left_behind_and_nothing_is_reset(demo: Path,
                                                                      monkeypatch) -> None:
    """The archive is written through the one atomic writer: a failure halfway leaves no
    partial `.tar.gz` to be offered, no temp file, and reset goes no further."""
    from memdeck.engine.memory_folder import backup as backup_mod

    files, db_rows = tree(demo), rows(demo)
    real = backup_mod._add_bytes

    def disk_full(tar, name: str, data: bytes, mtime: float) -> None:
        if name == "manifest.json":
            raise OSError(28, "No space left on device")
        real(tar, name, data, mtime)

    monkeypatch.setattr(backup_mod, "_add_bytes", disk_full)
    with pytest.raises(OSError, match="No space left"):
        Engine.open(demo).reset()
    monkeypatch.undo()
    backups = demo / "memdeck" / "backups"
    assert sorted(p.name for p in backups.iterdir()) == []
    assert tree(demo) == files and rows(demo) == db_rows
    assert Engine.open(demo).backups() == []


def test_backups_say_why_they_were_taken(capsys, demo: Path) -> None:
    assert main(["reset", "--yes", "--json", "--home", str(demo)]) == 0
    first = json.loads(capsys.readouterr().out)["backup"]["id"]
    assert main(["restore-backup", first, "--home", str(demo)]) == 0
    capsys.readouterr()
    assert main(["backups", "--json", "--home", str(demo)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [b["reason"] for b in listed] == [f"before restore of backup {first}",
                                             "before reset"]
    assert main(["backups", "--home", str(demo)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"  before restore of backup {first}  " in lines[0]
    assert lines[1].startswith(first) and "  before reset  " in lines[1]
