"""The typed journal of a change of the memory folder (memory_folder/journal.py): one rows step
per operation, registered; a journal of the previous memdeck (version 2, left by a crash
before an upgrade) still finished; one this memdeck does not know refused in one line and
left as it is."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from crash_run import KILLED, leftovers, run_engine, run_memdeck

from memdeck.engine import Engine
from memdeck.engine.memory_folder import journal as journal_mod
from memdeck.engine.memory_folder.journal import (
    ROW_STEPS,
    Journal,
    JournalError,
    RowStep,
    UnknownJournal,
)
from memdeck.engine.phase2.proposals import root_state

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "engine" / "memory_folder"


@pytest.fixture
def home(accepted_home: Path) -> Path:
    return accepted_home


def _crash(home: Path, op: str) -> str:
    """Run `op` in a memdeck killed once its change is journaled; the session a forget
    forgets."""
    sid = ""
    eng = Engine.open(home)
    if op == "accept":
        eng.memory_note("prefer uv over pip")
        r = run_memdeck(home, "accept", eng.consolidate().id, crash_at="switch.journaled")
    elif op == "restore":
        r = run_memdeck(home, "restore", eng.history()[-1].commit, crash_at="switch.journaled")
    elif op == "reset":
        r = run_memdeck(home, "reset", "--yes", crash_at="switch.journaled")
    elif op == "restore-backup":
        r = run_memdeck(home, "restore-backup", eng.reset().id, crash_at="switch.journaled")
    elif op == "forget":
        sid = next(s.id for s in eng.sessions() if s.status == "extracted" and s.id)
        r = run_memdeck(home, "forget", sid, crash_at="switch.journaled")
    elif op == "edit":
        v = eng.memory_read("MEMORY.md")
        text = v.text + "added\n"
        r = run_engine(home, f"memory_save('MEMORY.md', {text!r}, {v.version!r})",
                       crash_at="switch.journaled")
    else:
        r = run_engine(home, "memory_note('prefer uv over pip')", crash_at="switch.journaled")
    assert r.returncode == KILLED, r.stderr
    return sid


def as_version_2(text: str) -> str:
    """The journal as the memdeck before the typed journal wrote it (as captured from that
    version's `change.journal` for each operation): the same fields, under `finish`."""
    raw = json.loads(text)
    assert raw["version"] == 3
    raw["version"] = 2
    raw["finish"] = raw.pop("rows")
    return json.dumps(raw)


OPS = ["accept", "restore", "reset", "restore-backup", "forget", "edit", "note"]
# what memdeck 2026-12-06 (journal version 2) wrote for each operation, read from the
# change.journal of each one killed at switch.journaled: its keys and each field's type
V2_KEYS = ["finish", "history", "id", "kept", "op", "roots", "state", "version", "what"]
V2_FINISH = {
    "accept": [("now", "int"), ("partial", "bool"), ("proposal", "str"), ("selected", "list")],
    "restore": [("select", "list")],
    "reset": [("backup", "str"), ("clear", "list")],
    "restore-backup": [("rows", "str")],
    "forget": [("already", "bool"), ("now", "int"), ("path", "str"), ("stamp", "str"),
               ("thread", "str")],
    "edit": [], "note": []}


@pytest.mark.parametrize("op", OPS)
def test_a_journal_of_the_previous_memdeck_is_finished(home: Path, op: str) -> None:
    """A crash of the previous version, then this one opens the home: the change is
    finished exactly as one of its own (the same rows, the same folder, nothing left)."""
    sid = _crash(home, op)
    journal = home / "memdeck" / "change.journal"
    text = journal.read_text()
    assert json.loads(text)["op"] == op
    old = json.loads(as_version_2(text))
    assert sorted(old) == V2_KEYS
    assert sorted((k, type(v).__name__) for k, v in old["finish"].items()) == V2_FINISH[op]
    journal.write_text(json.dumps(old))
    r = run_memdeck(home, "sessions")
    assert r.returncode == 0 and "recovered: finished an interrupted" in r.stderr, r.stderr
    assert leftovers(home) == []
    eng = Engine.open(home)
    if op == "accept":
        assert eng.proposals()[0].status == "accepted"
    if op == "reset":
        assert not eng.memories().rows and not (home / "memories" / "MEMORY.md").exists()
    if op == "restore-backup":
        assert eng.memories().rows and (home / "memories" / "MEMORY.md").exists()
    if op == "forget":
        assert next(s for s in eng.sessions() if s.id == sid).memory_mode == "disabled"
    if op == "edit":
        assert (home / "memories" / "MEMORY.md").read_text().endswith("added\n")
    if op == "note":
        assert list((home / "memories").rglob("*prefer-uv-over-pip.md"))
    assert eng.history()[0].origin in ("user", "restore", "consolidation")


@pytest.mark.parametrize("op", OPS)
def test_both_versions_read_as_the_same_typed_journal(home: Path, op: str) -> None:
    _crash(home, op)
    text = (home / "memdeck" / "change.journal").read_text()
    from memdeck.engine.codex.home import CodexHome
    from memdeck.engine.memory_folder import recovery  # noqa: F401  (every row step)

    codex_home = CodexHome.open(home)
    staging = home / "memdeck" / "staging"
    new = Journal.loads(text, codex_home, staging)
    old = Journal.loads(as_version_2(text), codex_home, staging)
    assert type(new.rows) is ROW_STEPS[op] and new == old
    assert json.loads(new.dumps()) == json.loads(text)  # written back as it was read


def test_every_operation_registers_its_rows_step_for_recovery() -> None:
    """A rows step that recovery does not import would leave its journal unfinishable: each
    `RowStep` class in memory_folder/ is registered once recovery.py is imported."""
    from memdeck.engine.memory_folder import recovery  # noqa: F401

    defined = {}
    for f in sorted(FOLDER.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(d, ast.Name) and d.id == "row_step" for d in node.decorator_list):
                defined[node.name] = f.name
    assert defined, "no row step found"
    registered = {cls.__name__ for cls in ROW_STEPS.values()}
    assert set(defined) == registered, (defined, registered)
    assert sorted(ROW_STEPS) == sorted(OPS)


def test_the_switch_and_the_writer_name_no_operation() -> None:
    """Adding an operation touches its own module (and recovery's list), never the switch."""
    for name in ("switch.py", "writer.py", "journal.py"):
        source = (FOLDER / name).read_text()
        imported = {n.module for n in ast.walk(ast.parse(source))
                    if isinstance(n, ast.ImportFrom)}
        assert not imported & {"accept", "backup", "edits", "forget_change", "restore",
                               "recovery", "leftovers"}, (name, imported)
        assert 'op == "' not in source, name


def _unknown(home: Path, **change: object) -> Path:
    _crash(home, "edit")
    journal = home / "memdeck" / "change.journal"
    raw = json.loads(journal.read_text())
    raw.update(change)
    journal.write_text(json.dumps(raw))
    return journal


@pytest.mark.parametrize(("change", "says"), [
    ({"version": 4}, "a newer memdeck was making (version 4, this memdeck knows 3)"),
    ({"op": "merge"}, "this memdeck does not know (an operation this memdeck does not know "
                      "('merge'))"),
    ({"history": {"origin": "robot", "message": "x", "trailers": {}}},
     "an origin this memdeck does not know ('robot')"),
])
def test_a_journal_this_memdeck_does_not_know_is_refused_and_left(home: Path, change: dict,
                                                                   says: str) -> None:
    """Nothing of it is lost: reads go on, a change is refused in one line naming the file and
    what to do, and the journal, its staged folder and the live folder stay as they are."""
    journal = _unknown(home, **change)
    text = journal.read_text()
    staged = sorted(p.relative_to(home) for p in (home / "memdeck" / "staging").rglob("*"))
    live = root_state(home / "memories")
    assert run_memdeck(home, "sessions").returncode == 0  # reads go on
    r = run_memdeck(home, "reset", "--yes")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert says in r.stderr and str(journal) in r.stderr and "move the file aside" in r.stderr
    assert journal.read_text() == text
    assert sorted(p.relative_to(home) for p in (home / "memdeck" / "staging").rglob("*")) \
        == staged
    assert root_state(home / "memories") == live


def test_unknown_is_told_from_damaged(home: Path) -> None:
    """A damaged journal was written before anything moved and is cleared; one this memdeck
    does not know may be half done and is not."""
    from memdeck.engine.codex.home import CodexHome
    from memdeck.engine.memory_folder import recovery  # noqa: F401

    h, staging = CodexHome.open(home), home / "memdeck" / "staging"
    good = {"version": 3, "op": "edit", "id": "abc", "what": "x", "state": "committed",
            "roots": [], "kept": {}, "rows": {},
            "history": {"origin": "user", "message": "x", "trailers": {}}}
    assert Journal.loads(json.dumps(good), h, staging).op == "edit"
    with pytest.raises(UnknownJournal):
        Journal.loads(json.dumps({**good, "op": "merge"}), h, staging)
    for damaged in ({**good, "history": "x"}, {**good, "version": 0}, {**good, "id": ".."},
                    {**good, "rows": {"select": 3}, "op": "restore"}):
        with pytest.raises(JournalError) as e:
            Journal.loads(json.dumps(damaged), h, staging)
        assert not isinstance(e.value, UnknownJournal), damaged


def test_a_rows_step_is_registered_once() -> None:
    class Twice(RowStep):
        op = "edit"

        def to_json(self) -> dict:
            return {}

        @classmethod
        def from_json(cls, raw: dict, paths: journal_mod.JournalPaths) -> Twice:
            return cls()

        def write(self, change: object, lease: object) -> None:
            pass

    from memdeck.engine.memory_folder import edits  # noqa: F401

    with pytest.raises(ValueError, match="two row steps for 'edit'"):
        journal_mod.row_step(Twice)
