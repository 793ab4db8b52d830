"""Accepting a proposal: the files Codex reads, Codex's bookkeeping, refusals, crashes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import plant_secret
from crash_run import KILLED, leftovers, run_memdeck

from memdeck.engine import Engine, demo_home
from memdeck.engine.codex.home import CodexHome
from memdeck.engine.memory_folder import accept as accept_mod
from memdeck.engine.memory_folder.accept import AcceptRefused
from memdeck.engine.memory_folder.writer import MemoryFolderWriter
from memdeck.engine.phase2.proposals import root_state
from memdeck.tui.cli import main


@pytest.fixture
def proposed(tmp_path: Path) -> tuple[Path, str]:
    home = demo_home(tmp_path / "demo")
    eng = Engine.open(home)
    eng.extract(backend="offline")
    return home, eng.consolidate().id


def writer(home: Path) -> MemoryFolderWriter:
    eng = Engine.open(home)
    return MemoryFolderWriter(eng.home, eng.clock, lambda: eng.store)


def unopened(home: Path) -> Engine:
    """An engine that has not recovered yet (`Engine.open` recovers first)."""
    return Engine(CodexHome.open(home))


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout


def test_accept_all_gives_codex_a_valid_root_and_bookkeeping(capsys, proposed) -> None:
    home, pid = proposed
    assert main(["accept", pid, "--json", "--home", str(home)]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "accepted"
    root = home / "memories"
    assert (root / "memory_summary.md").read_text().startswith("v1\n")
    assert "Upgrade Django to 5.1" in (root / "MEMORY.md").read_text()
    assert len(list((root / "rollout_summaries").glob("*.md"))) == 5
    assert not (root / "phase2_workspace_diff.md").exists()
    assert git(root, "log", "--format=%an <%ae>|%s").strip() == \
        "Codex <noreply@openai.com>|Initialize Codex git baseline"
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    conn = sqlite3.connect(home / "memories_1.sqlite")
    assert conn.execute("SELECT SUM(selected_for_phase2) FROM stage1_outputs").fetchone()[0] == 5
    status, lease = conn.execute("SELECT status, lease_until FROM jobs WHERE job_key = "
                                 "'global'").fetchone()
    conn.close()
    assert (status, lease) == ("done", None)
    eng = Engine.open(home)
    eng.record_outside_edits()  # nothing is left to record
    top = eng.history()[0]
    assert (top.origin, top.summary) == ("consolidation", f"accept proposal {pid}")
    trailers = git(home / "memdeck" / "history.git", "log", "-1", "--format=%B")
    assert f"Memdeck-Proposal: {pid}" in trailers and "Memdeck-Threads: " in trailers
    assert Engine.open(home).consolidate() is None  # nothing left to do
    assert not list(home.glob(".memories.memdeck-new"))


def test_memory_changed_since_the_proposal(proposed) -> None:
    home, pid = proposed
    (home / "memories" / "MEMORY.md").write_text("edited meanwhile\n")
    with pytest.raises(AcceptRefused, match="memory changed since"):
        Engine.open(home).accept(pid)
    assert (home / "memories" / "MEMORY.md").read_text() == "edited meanwhile\n"


def test_secrets_block_the_files_that_carry_them(proposed, tmp_path: Path) -> None:
    home = demo_home(tmp_path / "other")
    eng = Engine.open(home)
    eng.extract(backend="offline")
    plant_secret(home)
    p = eng.consolidate()
    before = root_state(home / "memories")
    with pytest.raises(AcceptRefused, match="adds a secret"):
        eng.accept(p.id)
    assert root_state(home / "memories") == before
    clean = [f["path"] for f in p.files if f["path"].startswith("rollout_summaries/")]
    assert eng.accept(p.id, clean).status == "partial"  # the files without it may go in


def test_a_partial_accept_must_leave_a_valid_root(tmp_path: Path, home) -> None:
    home.v1().add("cli-preferences.jsonl", idle_hours=8)
    eng = Engine.open(home.root)
    eng.extract(backend="offline")
    p = eng.consolidate()
    with pytest.raises(AcceptRefused, match="invalid memory folder"):
        eng.accept(p.id, ["raw_memories.md"])
    with pytest.raises(AcceptRefused, match="not changed by proposal"):
        eng.accept(p.id, ["nope.md"])
    assert eng.accept(p.id).status == "accepted"  # a brand-new root, all of it
    assert (home.root / "memories" / "MEMORY.md").exists()


@pytest.mark.parametrize("step", ["switch.journaled", "switch.swapped", "switch.rows",
                                  "switch.recorded"])
def test_an_accept_killed_once_decided_is_finished_by_the_next_command(proposed,
                                                                       step) -> None:
    home, pid = proposed
    r = run_memdeck(home, "accept", pid, crash_at=step)
    assert r.returncode == KILLED, r.stderr
    nxt = run_memdeck(home, "sessions")  # any command that opens the home
    assert nxt.returncode == 0, nxt.stderr
    assert f"recovered: finished an interrupted accept proposal {pid}" in nxt.stderr
    assert "Upgrade Django" in (home / "memories" / "MEMORY.md").read_text()
    [p] = Engine.open(home).proposals()
    assert p.status == "accepted"
    conn = sqlite3.connect(home / "memories_1.sqlite")
    assert conn.execute("SELECT SUM(selected_for_phase2) FROM stage1_outputs").fetchone()[0] == 5
    conn.close()
    [top, *_] = Engine.open(home).history()
    assert (top.origin, top.summary) == ("consolidation", f"accept proposal {pid}")
    assert leftovers(home) == []


def test_an_accept_killed_before_its_journal_changes_nothing(proposed) -> None:
    home, pid = proposed
    before = root_state(home / "memories")
    r = run_memdeck(home, "accept", pid, crash_at="switch.staged")
    assert r.returncode == KILLED, r.stderr
    nxt = run_memdeck(home, "history")
    assert "recovered: removed the staging folder an interrupted change left" in nxt.stderr
    assert root_state(home / "memories") == before
    assert leftovers(home) == []
    assert Engine.open(home).accept(pid).status == "accepted"  # and it can still go in


def test_auto_accept_applies_clean_proposals_only(tmp_path: Path) -> None:
    home = demo_home(tmp_path / "auto")
    eng = Engine.open(home)
    eng.config_set("memdeck.auto_accept", "true")
    eng.extract(backend="offline")
    p = eng.consolidate()
    assert p.status == "accepted"
    assert "Upgrade Django to 5.1" in (home / "memories" / "MEMORY.md").read_text()
    # a proposal carrying a secret still waits for review
    conn = sqlite3.connect(home / "memories_1.sqlite")
    conn.execute("UPDATE stage1_outputs SET raw_memory = raw_memory || "
                 "'- fact: key ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', "
                 "source_updated_at = source_updated_at WHERE rollout_slug = 'docs_broken_links'")
    conn.commit()
    conn.close()
    assert eng.consolidate().status == "pending"


def test_an_older_memdecks_damaged_journals_and_a_lost_workspace(proposed) -> None:
    home, pid = proposed
    (home / "memdeck" / "accept.journal").write_text('{"proposal": ')  # cut short
    (home / "memdeck" / "swap.journal").write_text("not json")
    assert unopened(home).recover() == "undid an interrupted accept"
    assert leftovers(home) == []
    import shutil

    shutil.rmtree(home / "memdeck" / "proposals" / pid / "workspace")
    with pytest.raises(AcceptRefused, match="lost its workspace"):
        Engine.open(home).accept(pid)


def test_recovery_leaves_a_change_in_progress_alone(proposed) -> None:
    """Another memdeck holds the home's lock and is building its change: a command opening
    the home meanwhile must not clear what it staged; once that process is gone it does."""
    home, _ = proposed
    staged = home / "memdeck" / "staging" / "abc" / "memories"
    staged.mkdir(parents=True)
    (staged / "MEMORY.md").write_text("half built\n")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time; "
         f"fd = os.open({str(home / 'memdeck' / 'folder.lock')!r}, os.O_RDWR | os.O_CREAT); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert unopened(home).recover() is None
        assert (staged / "MEMORY.md").read_text() == "half built\n"
    finally:
        holder.kill()
        holder.wait()
    assert unopened(home).recover() == "removed the staging folder an interrupted change left"
    assert leftovers(home) == []


def test_taking_every_hunk_of_a_deleted_file_deletes_it(tmp_path: Path) -> None:
    """A partial accept (some hunks of other files left out) that takes the whole deletion of
    a file removes it, rather than leaving it empty."""
    root, ws, new = tmp_path / "root", tmp_path / "ws", tmp_path / "new"
    root.mkdir()
    ws.mkdir()
    middle = "".join(f"line {i}\n" for i in range(12))  # keeps the two changes apart
    (root / "MEMORY.md").write_text("a\n" + middle + "d\n")
    (root / "old.md").write_text("gone\nsoon\n")
    (ws / "MEMORY.md").write_text("A\n" + middle + "D\n")
    accept_mod._build(root, ws, new, [], {"MEMORY.md": {0}, "old.md": {0}})
    assert not (new / "old.md").exists()
    assert (new / "MEMORY.md").read_text() == "A\n" + middle + "d\n"  # hunk 1 left out
