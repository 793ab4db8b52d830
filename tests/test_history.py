"""memdeck's history repository: every state of the memory folder, labelled, never rewritten."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import hold_global_lease

from memdeck.engine import Engine, MemdeckError, NotFound, demo_home
from memdeck.engine.memory_folder.baseline import reset_codex_baseline
from memdeck.engine.memory_folder.history import History
from memdeck.tui.cli import main


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return demo_home(tmp_path / "demo")


def run(capsys, *argv: str):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_first_look_labels_codex_or_start(capsys, tmp_path: Path, demo: Path) -> None:
    # the demo root has a note added after Codex's baseline: the state memdeck found first is
    # where its history starts, not a change "outside memdeck" (issue 10)
    eng = Engine.open(demo)
    eng.record_outside_edits()
    assert [(e.origin, e.origin_label) for e in eng.history()] == [("start", "start")]
    assert eng.history()[0].summary == "the memory as memdeck first found it"
    (demo / "memories" / "MEMORY.md").write_text("- changed by hand\n")
    eng.record_outside_edits()
    assert [e.origin_label for e in eng.history()] == ["outside", "start"]
    # the CLI calls an outside change what the app calls it
    code, out, _ = run(capsys, "history", "--home", str(demo))
    assert code == 0 and "outside" in out.splitlines()[0] and "external" not in out
    # a root that is exactly Codex's baseline is Codex's
    other = demo_home(tmp_path / "other")
    reset_codex_baseline(other / "memories")
    eng = Engine.open(other)
    eng.record_outside_edits()
    assert [e.origin for e in eng.history()] == ["codex"]


def test_edits_restore_and_show(capsys, demo: Path) -> None:
    eng = Engine.open(demo)
    eng.record_outside_edits()
    first = eng.history()[0].commit
    memory = demo / "memories" / "MEMORY.md"
    original = memory.read_bytes()
    memory.write_text(memory.read_text() + "- a later fact\n")
    History(eng.home, eng.clock).snapshot("user", "add a fact")
    code, out, _ = run(capsys, "history", "--json", "--home", str(demo))
    rows = json.loads(out)
    assert [r["origin"] for r in rows] == ["user", "start"]
    assert rows[0]["time"].endswith("Z")

    code, out, _ = run(capsys, "history", "show", rows[0]["commit"][:10], "--json",
                       "--home", str(demo))
    assert code == 0 and "+- a later fact" in json.loads(out)["diff"]

    code, out, _ = run(capsys, "restore", first[:10], "--home", str(demo))
    assert code == 0 and "restored" in out
    assert memory.read_bytes() == original
    eng.record_outside_edits()  # nothing is left to record
    origins = [e.origin for e in eng.history()]
    assert origins == ["restore", "user", "start"]  # nothing rewritten
    # Codex's own baseline repository inside the root is left as it was
    log = subprocess.run(["git", "-C", str(demo / "memories"), "log", "--format=%an"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert log == ["Codex"]
    # the restore is pending for Codex's next consolidation
    conn = sqlite3.connect(demo / "memories_1.sqlite")
    assert conn.execute("SELECT status, lease_until FROM jobs WHERE job_key = 'global'"
                        ).fetchone() == ("pending", None)
    conn.close()


def test_restore_waits_for_a_running_consolidation(demo: Path) -> None:
    eng = Engine.open(demo)
    eng.record_outside_edits()
    first = eng.history()[0].commit
    hold_global_lease(demo)
    (demo / "memories" / "MEMORY.md").write_text("changed\n")
    with pytest.raises(MemdeckError, match="consolidation is running"):
        eng.restore(first)
    assert (demo / "memories" / "MEMORY.md").read_text() == "changed\n"


def test_unknown_commit_is_one_line(capsys, demo: Path) -> None:
    Engine.open(demo).record_outside_edits()
    with pytest.raises(NotFound):
        Engine.open(demo).history_show("deadbeef")
    code, _, err = run(capsys, "history", "show", "nope", "--home", str(demo))
    assert code == 1 and err.count("\n") == 1
