"""Phase 2's workspace steps on a copy of a real memory root
(docs/codex-format.md "Phase 2 steps")."""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from suite_clock import now

from memdeck.engine import Engine, demo_home
from memdeck.engine.phase2.workspace import (
    DIFF_FILE,
    copy_root,
    prune_extension_resources,
    render_diff_file,
    select_inputs,
    sync_inputs,
    validate_artifacts,
    workspace_diff,
)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory) -> Path:
    home = demo_home(tmp_path_factory.mktemp("ws") / "demo")
    Engine.open(home).extract(backend="offline")
    return home


def _select(home: Path, limit: int = 256) -> list:
    eng = Engine.open(home)
    sessions = {s.id: s for s in eng.sessions() if s.id}
    conn = sqlite3.connect(home / "memories_1.sqlite")
    try:
        return select_inputs(conn, sessions, limit, 30, int(now()))
    finally:
        conn.close()


def test_selection_follows_codex_rules(extracted: Path) -> None:
    chosen = _select(extracted)
    ids = [m.thread_id for m in chosen]
    assert ids == sorted(ids) and len(ids) == 5  # 3 demo rows + 2 extracted now
    assert all(m.rollout_path and m.cwd for m in chosen)
    # ranked by usage first: the most cited survives a limit of 1
    top = _select(extracted, limit=1)
    conn = sqlite3.connect(extracted / "memories_1.sqlite")
    most_cited = conn.execute("SELECT thread_id FROM stage1_outputs ORDER BY "
                              "COALESCE(usage_count, 0) DESC LIMIT 1").fetchone()[0]
    conn.close()
    assert [m.thread_id for m in top] == [most_cited]


def test_sync_writes_codex_layouts_and_keeps_unchanged_files(extracted: Path,
                                                            tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    copy_root(extracted / "memories", ws)
    chosen = _select(extracted)
    kept = {p.name: p.stat().st_mtime_ns for p in (ws / "rollout_summaries").glob("*.md")}
    (ws / "rollout_summaries" / "2020-01-01T00-00-00-zzzz-stale.md").write_text("old\n")
    sync_inputs(ws, chosen)
    names = sorted(p.stem for p in (ws / "rollout_summaries").glob("*.md"))
    assert names == sorted(m.file_stem for m in chosen)
    for name, mtime in kept.items():  # the demo's two summaries were already right
        assert (ws / "rollout_summaries" / name).stat().st_mtime_ns == mtime
    raw = (ws / "raw_memories.md").read_text()
    assert raw.startswith("# Raw Memories\n\nMerged stage-1 raw memories")
    assert raw.count("## Thread `") == len(chosen)


def test_workspace_diff_against_the_baseline(extracted: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    copy_root(extracted / "memories", ws)
    index_before = (ws / ".git" / "index").read_bytes()
    sync_inputs(ws, _select(extracted))
    diff = workspace_diff(ws)
    changes = dict((p, s) for s, p in diff.changes)
    assert changes["raw_memories.md"] == "M"
    assert sum(1 for p, s in changes.items() if p.startswith("rollout_summaries/")
               and s == "A") == 3
    assert any(p.startswith("extensions/ad_hoc/notes/") for p in changes)  # the user's note
    assert "+## Thread `" in diff.patch
    assert (ws / ".git" / "index").read_bytes() == index_before  # the root's index untouched
    text = render_diff_file(diff)
    assert text.startswith("# Memory Workspace Diff\n")
    assert "## Status\n- " in text and "\n## Diff\n```diff\n" in text
    (ws / DIFF_FILE).write_text(text)
    assert DIFF_FILE not in dict((p, s) for s, p in workspace_diff(ws).changes)


def test_no_changes_and_no_baseline(tmp_path: Path) -> None:
    from memdeck.engine.phase2.workspace import WorkspaceDiff

    assert "## Status\n- none\n" in render_diff_file(WorkspaceDiff([], ""))
    bare = tmp_path / "bare"
    (bare / "skills").mkdir(parents=True)
    (bare / "skills" / "x.md").write_text("x")
    assert workspace_diff(bare).changes == [("A", "skills/x.md")]


def test_validation(extracted: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    copy_root(extracted / "memories", ws)
    assert validate_artifacts(ws) == []
    (ws / "memory_summary.md").write_text("# summary\n")
    (ws / "skills" / "link.md").symlink_to(ws / "MEMORY.md")
    (ws / "MEMORY.md").unlink()
    problems = validate_artifacts(ws)
    assert any("`v1`" in p for p in problems) and "MEMORY.md is missing" in problems
    assert "symlink skills/link.md" in problems


def test_extension_resources_are_pruned_by_age(tmp_path: Path) -> None:
    ext = tmp_path / "extensions" / "chronicle"
    (ext / "resources").mkdir(parents=True)
    (ext / "instructions.md").write_text("x")
    old, new, other = (ext / "resources" / "2026-11-01T00-00-00-old.md",
                       ext / "resources" / "2026-12-01T00-00-00-new.md",
                       ext / "resources" / "notes.md")
    for f in (old, new, other):
        f.write_text("x")
    notes = tmp_path / "extensions" / "ad_hoc" / "notes"
    notes.mkdir(parents=True)
    (notes / "2026-01-01T00-00-00-keep.md").write_text("x")
    now = time.mktime(time.strptime("2026-12-02", "%Y-%m-%d"))
    assert prune_extension_resources(tmp_path, now) == [old]
    assert new.exists() and other.exists() and (notes / "2026-01-01T00-00-00-keep.md").exists()
    assert os.path.exists(ext / "instructions.md")


def test_raw_memories_are_byte_identical_to_codex(tmp_path: Path) -> None:
    """The bytes Codex 0.169 wrote for two stage-1 rows (recorded from its own phase 2,
    docs/codex-compat.md "Git baseline and inputs"): the file ends with one empty line after the
    last memory; without it Codex rewrites the file and its next diff shows `M raw_memories.md`."""
    from memdeck.engine.codex.memory_layout import SelectedMemory

    rows = [SelectedMemory("01a23130-5bfc-7f67-aecc-1c0d25836e04", 1796245581,
                           "---\ndescription: thing 1\n---\n\n### Task 1\n- fact 1\n\n",
                           "# Summary 1\nbody", None, "/h/s/r1.jsonl", "/home/dev/src/widget",
                           "main"),
            SelectedMemory("01a23054-a1fc-7969-acf0-6947af085e83", 1796245581,
                           "---\ndescription: thing 2\n---\n\n### Task 1\n- fact 2\n\n",
                           "# Summary 2\nbody", "Slug Two", "/h/s/r2.jsonl",
                           "/home/dev/src/widget", "main")]
    sync_inputs(tmp_path, rows, "v1")
    assert (tmp_path / "raw_memories.md").read_text() == (
        "# Raw Memories\n\nMerged stage-1 raw memories (stable ascending thread-id order):\n\n"
        "## Thread `01a23054-a1fc-7969-acf0-6947af085e83`\nupdated_at: 2026-12-02T21:06:21+00:00\n"
        "cwd: /home/dev/src/widget\nrollout_path: /h/s/r2.jsonl\n"
        "rollout_summary_file: 2026-12-01T06-39-42-JvJF-slug_two.md\n\n"
        "---\ndescription: thing 2\n---\n\n### Task 1\n- fact 2\n\n"
        "## Thread `01a23130-5bfc-7f67-aecc-1c0d25836e04`\nupdated_at: 2026-12-02T21:06:21+00:00\n"
        "cwd: /home/dev/src/widget\nrollout_path: /h/s/r1.jsonl\n"
        "rollout_summary_file: 2026-12-01T10-39-42-ALZ2.md\n\n"
        "---\ndescription: thing 1\n---\n\n### Task 1\n- fact 1\n\n")
    sync_inputs(tmp_path / "v2", rows, "v2")  # V2 keeps no raw memories file
    assert not (tmp_path / "v2" / "raw_memories.md").exists()
    assert len(list((tmp_path / "v2" / "rollout_summaries").glob("*.md"))) == 2


def note_stamp(name: str) -> float:
    """The time a note's name starts with (`2026-12-03T15-55-30-…`), in epoch seconds."""
    return datetime.strptime(name[:19], "%Y-%m-%dT%H-%M-%S").replace(tzinfo=UTC).timestamp()


def test_the_notes_a_consolidation_takes_in_are_the_new_and_changed_ones(extracted: Path,
                                                                         tmp_path: Path) -> None:
    """docs/codex-format.md "Extensions and notes": the workspace diff lists a note added or
    changed since the baseline; one the baseline already holds is not taken in again."""
    from memdeck.engine.memory_folder.baseline import reset_codex_baseline
    from memdeck.engine.phase2.notes import pending_notes

    ws = tmp_path / "ws"
    copy_root(extracted / "memories", ws)
    notes = ws / "extensions" / "ad_hoc" / "notes"
    [demo_note] = notes.glob("*.md")  # added after the demo's last consolidation

    def pending() -> list[tuple[str, str]]:
        (ws / DIFF_FILE).write_text(render_diff_file(workspace_diff(ws)))
        return [(n.path.rsplit("/", 1)[-1], n.kind) for n in pending_notes(ws)]

    assert pending() == [(demo_note.name, "remember")]
    reset_codex_baseline(ws, now())  # what an accepted consolidation leaves
    assert pending() == []
    # a note the user adds an hour after the demo's, named as memdeck and Codex name notes
    later = note_stamp(demo_note.name) + 3600
    printer = f"{datetime.fromtimestamp(later, UTC):%Y-%m-%dT%H-%M-%S}-printer.md"
    (notes / printer).write_text("Forget: the printer in room 4\n")
    demo_note.write_text(demo_note.read_text() + "Forget: the old staging host\n")
    (notes / "sub").mkdir()
    (notes / "sub" / printer).write_text("Remember: not a note\n")
    assert pending() == [(demo_note.name, "remember"), (demo_note.name, "forget"),
                         (printer, "forget")]
    (ws / DIFF_FILE).unlink()
    assert pending_notes(ws) == []  # no diff file: nothing is known to be new
