"""The one memory-folder writer: one lock for every change of a home's memory, an interrupted
accept dealt with first, the global lease after a change's own checks, history around it."""

from __future__ import annotations

import ast
import sqlite3
import threading
from pathlib import Path

import pytest
from conftest import plant_secret
from crash_run import KILLED, run_memdeck

from memdeck.engine import Engine, MemorySaved, demo_home
from memdeck.engine.memory_folder.accept import AcceptRefused
from memdeck.engine.memory_folder.leftovers import recover
from memdeck.engine.memory_folder.writer import MemoryFolderWriter

MEMORY_FOLDER = Path(__file__).resolve().parent.parent / "engine" / "memory_folder"


def writer_for(eng: Engine) -> MemoryFolderWriter:
    return MemoryFolderWriter(eng.home, eng.clock, lambda: eng.store, recover)


def global_job(home: Path) -> tuple:
    conn = sqlite3.connect(home / "memories_1.sqlite")
    try:
        return conn.execute("SELECT status, worker_id, ownership_token, lease_until FROM jobs "
                            "WHERE job_key = 'global'").fetchone()
    finally:
        conn.close()


@pytest.fixture
def proposed(tmp_path: Path) -> tuple[Engine, str]:
    eng = Engine.open(demo_home(tmp_path / "demo"))
    eng.extract(backend="offline")
    eng.record_outside_edits()  # a state to restore later
    return eng, eng.consolidate().id


def test_an_edit_waits_while_another_change_holds_the_home(tmp_path: Path) -> None:
    eng = Engine.open(demo_home(tmp_path / "demo"))
    other = Engine.open(demo_home(tmp_path / "other"))
    f = eng.memory_read("MEMORY.md")
    saved: list[MemorySaved] = []
    save = threading.Thread(target=lambda: saved.append(
        eng.memory_save("MEMORY.md", f.text + "- waited\n", f.version)))
    with writer_for(eng).change():  # what an accept, a reset or a restore holds
        save.start()
        save.join(timeout=0.5)
        assert save.is_alive() and saved == []  # the edit waits for the same lock
        assert eng.memory_read("MEMORY.md").text == f.text
        # another home is not held up
        g = other.memory_read("MEMORY.md")
        assert other.memory_save("MEMORY.md", g.text + "- free\n", g.version).changed
    save.join(timeout=60)
    assert not save.is_alive() and saved and saved[0].changed


@pytest.mark.parametrize("change", ["save", "note", "reset", "restore", "restore_backup"])
def test_every_change_finishes_an_interrupted_accept_first(proposed, change: str) -> None:
    eng, pid = proposed
    first = eng.history()[0].commit
    backup = eng.reset().id if change == "restore_backup" else None
    if backup is not None:  # the reset dropped the proposal's inputs: make a new one
        eng.restore_backup(backup)
        pid = eng.consolidate().id

    killed = run_memdeck(eng.home.root, "accept", pid, crash_at="switch.swapped")
    assert killed.returncode == KILLED, killed.stderr
    # the swap happened; the bookkeeping and the history did not
    assert eng.proposals()[0].status == "pending"

    f = eng.memory_read("MEMORY.md")
    expected = {
        "save": lambda: eng.memory_save("MEMORY.md", f.text + "- later\n", f.version),
        "note": lambda: eng.memory_note("the printer is on floor 3"),
        "reset": eng.reset,
        "restore": lambda: eng.restore(first),
        "restore_backup": lambda: eng.restore_backup(backup or ""),
    }
    expected[change]()
    assert [p.status for p in eng.proposals() if p.id == pid] == ["accepted"]
    top, below = eng.history()[:2]
    # the accept's own commit, before the change's: not an `external` one made of it
    assert (below.origin, below.summary) == ("consolidation", f"accept proposal {pid}")
    assert top.origin == {"save": "user", "note": "user", "reset": "user"}.get(change,
                                                                               "restore")
    job = global_job(eng.home.root)  # a reset deletes the row
    assert job is None or job[0] != "running"


def test_a_refused_accept_leaves_codex_job_row_as_it_was(tmp_path: Path) -> None:
    """The lease is taken after the accept's own checks: a refusal touches no job row."""
    eng = Engine.open(demo_home(tmp_path / "demo"))
    eng.extract(backend="offline")
    plant_secret(eng.home.root)
    p = eng.consolidate()
    before = global_job(eng.home.root)
    with pytest.raises(AcceptRefused, match="adds a secret"):
        eng.accept(p.id)
    assert global_job(eng.home.root) == before


def test_recovery_inside_a_change_does_not_deadlock(proposed) -> None:
    eng, pid = proposed
    w = writer_for(eng)
    with w.change(), w.change():  # the lock is re-entrant: an accept recovers inside its own
        assert w.recover() is None
    assert eng.accept(pid).status == "accepted"


def test_no_memory_folder_module_takes_the_engine() -> None:
    found = []
    for path in sorted(MEMORY_FOLDER.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.arg) and (
                    node.arg == "engine" or "Engine" in ast.unparse(node.annotation or
                                                                    ast.Constant(""))):
                found.append(f"{path.name}:{node.lineno} {node.arg}")
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module is None:
                found.append(f"{path.name}:{node.lineno} imports the facade")
    assert found == []
