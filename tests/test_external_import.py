"""Codex's import of another agent's memory (docs/codex-format.md "External-agent memory
import"): memdeck lists it with its scope, never writes it, and keeps it byte for byte through
every change of the memory folder; reset clears it as Codex's reset does, and restoring the
backup brings it back.

Every home here holds the real capture of Codex 0.171's import (tests/external_import.py,
tests/fixtures/memory_import/), planted where Codex writes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import served_demo
from external_import import CWD, MEMORY, PREFIX, PROJECT, imported, plant
from llm_server import json_reply, tool_call_reply

from memdeck.engine import AcceptRefused, Engine, MemdeckError, demo_home
from memdeck.engine.phase2.paths import PathKind, PathRefused, check_change, classify, resolve

RESOURCES = f"{PREFIX}/resources/{PROJECT}"
# a file Codex's import never writes: directly in resources/, named with an old time
LOOSE_OLD = f"{PREFIX}/resources/2020-01-01T00-00-00-loose.md"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """The demo home (v1), phase 1 run, Codex's import planted in `memories/`."""
    home = demo_home(tmp_path / "demo")
    Engine.open(home).extract(backend="offline")
    plant(home / "memories")
    return home


# -- shown ---------------------------------------------------------------------------------
def test_listed_as_imported_with_the_scope_codex_wrote(demo: Path) -> None:
    eng = Engine.open(demo)
    files = {f.path: f for f in eng.memory_files()}
    ours = [p for p, f in files.items() if f.kind == "imported"]
    assert ours == sorted(imported(demo / "memories"))  # all six, together, in order
    assert files[f"{PREFIX}/instructions.md"].scope is None
    for rel in ours[1:]:
        scope = files[rel].scope
        assert scope is not None and (scope.project, scope.cwd, scope.problem) == (
            PROJECT, CWD, None)
    text = eng.memory_read(MEMORY)
    assert text.text.startswith("# Memory Index\n")
    assert text.read_only and "imported by Codex from another agent's memory" in text.read_only
    assert text.scope is not None and text.scope.cwd == CWD
    # the instructions are Codex's too
    assert eng.memory_read(f"{PREFIX}/instructions.md").read_only


def test_a_missing_or_unreadable_scope_is_said_not_guessed(demo: Path) -> None:
    scope_json = demo / "memories" / RESOURCES / "scope.json"
    scope_json.write_text("{not json", encoding="utf-8")
    scope = Engine.open(demo).memory_read(MEMORY).scope
    assert scope is not None and scope.cwd is None
    assert scope.problem == f"{RESOURCES}/scope.json names no cwd"
    scope_json.unlink()
    scope = Engine.open(demo).memory_read(MEMORY).scope
    assert scope is not None and scope.problem == f"no {RESOURCES}/scope.json"


# -- never written -------------------------------------------------------------------------
def test_an_edit_of_an_imported_file_is_refused_and_nothing_written(demo: Path) -> None:
    eng = Engine.open(demo)
    eng.record_outside_edits()
    before, commits = imported(demo / "memories"), len(eng.history())
    for rel, version in ((MEMORY, eng.memory_read(MEMORY).version),
                         (f"{RESOURCES}/new-topic.md", None)):  # a new file there, too
        with pytest.raises(MemdeckError, match="imported by Codex") as e:
            eng.memory_save(rel, "rewritten\n", version)
        assert "\n" not in str(e.value)
    assert imported(demo / "memories") == before
    assert len(eng.history()) == commits


def test_edits_and_notes_elsewhere_keep_it(demo: Path) -> None:
    eng = Engine.open(demo)
    before = imported(demo / "memories")
    eng.memory_save("MEMORY.md", "# edited\n", eng.memory_read("MEMORY.md").version)
    eng.memory_note("the staging database moved to db-3")
    assert imported(demo / "memories") == before


# -- consolidation -------------------------------------------------------------------------
def v2_home(tmp_path: Path) -> Path:
    """A fresh v2 home after Codex's import: `memories_v2/` holds only the import."""
    from conftest import HomeBuilder

    b = HomeBuilder(tmp_path / "v2")
    b.config("[features]\nmemories = true\n")
    b.add("cli-preferences.jsonl")
    Engine.open(b.root).extract(backend="offline")
    (b.root / "memories_v2").mkdir()
    plant(b.root / "memories_v2")
    return b.root


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_consolidate_and_accept_keep_it_and_prune_as_codex(tmp_path: Path, version: str
                                                            ) -> None:
    home = demo_home(tmp_path / "demo") if version == "v1" else v2_home(tmp_path)
    eng = Engine.open(home)
    if version == "v1":
        eng.extract(backend="offline")
        plant(home / "memories")
    root = eng.home.memory_root
    before = imported(root)
    (root / LOOSE_OLD).write_text("pruned by age, as Codex does\n", encoding="utf-8")
    p = eng.consolidate()
    assert p is not None and p.problems == []
    changed = {f["path"]: f["change"] for f in p.files}
    assert changed[LOOSE_OLD] == "D"  # Codex 0.171's prune: an old resource in resources/
    assert not [rel for rel in changed if rel.startswith(RESOURCES)]  # never a project's
    eng.accept(p.id)
    assert imported(root) == before  # byte for byte
    assert not (root / LOOSE_OLD).exists()
    # and the next consolidation leaves it alone again
    eng.extract(backend="offline")
    nxt = eng.consolidate()
    assert nxt is None or not [f for f in nxt.files if f["path"].startswith(PREFIX)]


def test_accept_refuses_a_proposal_that_changes_it(demo: Path) -> None:
    eng = Engine.open(demo)
    before = imported(demo / "memories")
    p = eng.consolidate()
    ws = demo / "memdeck" / "proposals" / p.id / "workspace"
    (ws / MEMORY).write_text("# rewritten by a consolidation\n", encoding="utf-8")
    (ws / RESOURCES / "release-process.md").unlink()
    with pytest.raises(AcceptRefused, match="invalid memory folder: deletes the imported "
                       f"file {RESOURCES}/release-process.md") as e:
        eng.accept(p.id)
    assert "\n" not in str(e.value)
    assert imported(demo / "memories") == before


def test_the_agent_may_read_it_but_never_change_it(tmp_path: Path, llm_server) -> None:
    home = served_demo(tmp_path / "demo", llm_server.url, extracted=True)
    before = plant(home / "memories")
    summary = (home / "memories" / "memory_summary.md").read_text(encoding="utf-8")
    llm_server.push(
        tool_call_reply(("read", {"path": MEMORY}),
                        ("delete", {"path": MEMORY}),
                        ("edit", {"path": f"{RESOURCES}/release-process.md",
                                  "old": "Tag", "new": "Never tag"}),
                        ("write", {"path": f"{RESOURCES}/new.md", "content": "x\n"}),
                        ("write", {"path": f"{PREFIX}/instructions.md", "content": "x\n"}),
                        ("delete", {"path": PREFIX}),
                        ("write", {"path": "memory_summary.md",
                                   "content": summary + "- ledger: see the import\n"})),
        json_reply("Routed the imported ledger memory."),
    )
    p = Engine.open(home).consolidate("openai")
    assert p is not None and p.problems == []
    paths = [f["path"] for f in p.files]
    assert "memory_summary.md" in paths and not [x for x in paths if x.startswith(PREFIX)]
    ws = home / "memdeck" / "proposals" / p.id / "workspace"
    assert imported(ws) == before
    body = llm_server.chat_requests()[1].body
    tool_msgs = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    assert tool_msgs[0].startswith("1: # Memory Index")  # read: allowed
    assert all("Codex imported this from another agent's memory" in m
               for m in tool_msgs[1:6]), tool_msgs
    assert tool_msgs[6] == "ok"


def test_the_agent_path_rule(tmp_path: Path) -> None:
    plant(tmp_path)
    for rel in (PREFIX, f"{PREFIX}/instructions.md", f"{PREFIX}/resources", MEMORY,
                f"./{RESOURCES}//testing/database.md"):
        p = resolve(tmp_path, rel)
        assert p.kind is PathKind.IMPORTED and not p.writable
        with pytest.raises(PathRefused, match="never edit, rename or delete"):
            check_change(p, "delete")
    assert classify("extensions") is PathKind.HOLDS_PROTECTED
    assert classify("extensions/other_tool/resources/x.md") is PathKind.MEMORY


# -- restore, reset, backups ---------------------------------------------------------------
def test_restore_from_history_keeps_the_live_import(tmp_path: Path) -> None:
    home = demo_home(tmp_path / "demo")
    eng = Engine.open(home)
    root = home / "memories"
    eng.record_outside_edits()
    without = eng.history()[0].commit  # before Codex imported anything
    plant(root)
    eng.record_outside_edits()
    old_import = eng.history()[0].commit
    # Codex imports again: the project's memory changed at its source
    (root / MEMORY).write_text("# Memory Index\n\n- the new index\n", encoding="utf-8")
    eng.record_outside_edits()
    live = imported(root)
    for commit in (without, old_import):
        eng.restore(commit)
        assert imported(root) == live
    # what the restore is about still comes back: the memory files of that state
    assert (root / "MEMORY.md").read_bytes() == in_history(eng, old_import, "MEMORY.md")


def in_history(eng: Engine, commit: str, rel: str) -> bytes:
    """`rel` as memdeck's history holds it at `commit`."""
    import subprocess

    return subprocess.run(["git", "--git-dir", str(eng.home.history_git),
                           "show", f"{commit}:{rel}"], capture_output=True, check=True).stdout


def test_reset_clears_it_as_codex_does_and_the_backup_brings_it_back(demo: Path) -> None:
    eng = Engine.open(demo)
    before = imported(demo / "memories")
    backup = eng.reset()
    # Codex's own reset (`codex debug clear-memories`, 0.171 measured) empties the roots,
    # extensions included
    assert list((demo / "memories").iterdir()) == []
    eng.restore_backup(backup.id)
    assert imported(demo / "memories") == before
    assert json.loads((demo / "memories" / RESOURCES / "scope.json").read_bytes()) == {
        "cwd": CWD}
