"""`memdeck forget`: Codex's way of switching a session off, and its raw memory gone."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memdeck.engine import Engine, MemdeckError, demo_home
from memdeck.engine.codex.rollout import read_rollout
from memdeck.tui.cli import main


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return demo_home(tmp_path / "demo")


def _extracted(home: Path, selected: bool):
    conn = sqlite3.connect(home / "memories_1.sqlite")
    tid = conn.execute("SELECT thread_id FROM stage1_outputs WHERE selected_for_phase2 = ?",
                       (int(selected),)).fetchone()[0]
    conn.close()
    return next(s for s in Engine.open(home).sessions() if s.id == tid)


def test_forget_a_consolidated_session(capsys, demo: Path) -> None:
    s = _extracted(demo, selected=True)
    size = Path(s.rollout_path).stat().st_size if Path(s.rollout_path).exists() else 0
    mtime = Path(s.rollout_path).stat().st_mtime_ns
    assert main(["forget", s.id[:8], "--json", "--home", str(demo)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["had_memory"] and out["phase2_enqueued"] and not out["already_disabled"]
    path = Path(out["rollout_path"])
    assert path.suffix == ".jsonl"  # the compressed demo rollout was re-materialised
    rollout = read_rollout(path)
    last = rollout.lines[-1]
    assert last.type == "session_meta" and last.item.memory_mode == "disabled"
    assert last.item.git is None and last.item.id == s.id
    assert rollout.bad_lines == 0 and path.stat().st_size > size
    conn = sqlite3.connect(demo / "memories_1.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM stage1_outputs WHERE thread_id = ?",
                        (s.id,)).fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM jobs WHERE job_key = ?", (s.id,)).fetchone()[0] == 0
    assert conn.execute("SELECT status FROM jobs WHERE job_key = 'global'").fetchone()[0] == \
        "pending"
    conn.close()
    assert path.stat().st_mtime_ns == mtime  # a forget is no activity: the session stays put
    after = next(x for x in Engine.open(demo).sessions() if x.id == s.id)
    # the line memdeck appended is the user's forget, not "switched off during the session";
    # what the session taught stays in MEMORY.md until a consolidation is accepted
    assert after.status == "disabled" and after.updated_at == s.updated_at
    assert after.reason.startswith("forgotten with memdeck ")
    assert "MEMORY.md keeps what it taught until the next consolidation" in after.reason
    assert "switched off during the session" not in after.reason


def test_forgotten_reason_after_the_next_consolidation(demo: Path) -> None:
    s = _extracted(demo, selected=True)
    e = Engine.open(demo)
    e.forget(s.id)
    p = e.consolidate(backend="offline")
    assert p is not None
    e.accept(p.id)
    after = next(x for x in Engine.open(demo).sessions() if x.id == s.id)
    assert after.reason.startswith("forgotten with memdeck ")
    assert "MEMORY.md" not in after.reason  # the accepted consolidation dropped it


def test_a_session_switched_off_by_the_user_in_codex_still_says_so(demo: Path) -> None:
    from memdeck.engine.phase1.forget import append_disabled_meta

    s = _extracted(demo, selected=False)
    path, line_no = append_disabled_meta(Path(s.rollout_path), "2026-12-01T10:00:00.000Z")
    after = next(x for x in Engine.open(demo).sessions() if x.id == s.id)
    assert after.reason == f"memories were switched off during the session (line {line_no})"


def test_forget_twice_and_plain_text(capsys, demo: Path) -> None:
    s = _extracted(demo, selected=False)
    assert main(["forget", s.id, "--home", str(demo)]) == 0
    assert "its raw memory was deleted" in capsys.readouterr().out
    lines = Path(s.rollout_path).read_bytes().count(b"\n")
    assert main(["forget", s.id, "--home", str(demo)]) == 0
    assert "already disabled" in capsys.readouterr().out
    assert Path(s.rollout_path).read_bytes().count(b"\n") == lines  # nothing appended twice


def test_a_rollout_being_written_is_left_alone(demo: Path) -> None:
    s = next(x for x in Engine.open(demo).sessions() if x.status == "eligible")
    p = Path(s.rollout_path)
    p.write_bytes(p.read_bytes() + b'{"timestamp":"2026-12-01T00:00:00.000Z","type":"ev')
    before = p.read_bytes()
    with pytest.raises(MemdeckError, match="being written"):
        Engine.open(demo).forget(s.id)
    assert p.read_bytes() == before


def test_unknown_session_is_one_line(capsys, demo: Path) -> None:
    assert main(["forget", "ffffffff", "--home", str(demo)]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_a_failing_memdeck_db_does_not_fail_the_forget(demo: Path) -> None:
    # memdeck's own note of the forget cannot be written (its table is gone): Codex's side of
    # the forget stands and is reported done, the status falls back to the line's own words
    s = _extracted(demo, selected=False)
    db = sqlite3.connect(demo / "memdeck" / "memdeck.sqlite")
    db.execute("DROP TABLE forgotten_sessions")
    db.commit()
    db.close()
    r = Engine.open(demo).forget(s.id)
    assert r.line_no and not r.already_disabled
    after = next(x for x in Engine.open(demo).sessions() if x.id == s.id)
    assert after.status == "disabled"
    assert after.reason == f"memories were switched off during the session (line {r.line_no})"
