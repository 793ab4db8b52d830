"""Phase 2's workspace steps, with Codex's exact rules (docs/codex-format.md "Phase 2 steps").

Everything here works on a folder that holds a copy of the memory root: selecting the inputs,
syncing `rollout_summaries/` and `raw_memories.md`, pruning old extension resources, the
workspace diff against Codex's baseline commit (read through a throwaway git index so the
folder's own index is never touched), `phase2_workspace_diff.md`, and validation (symlinks
and special files anywhere are problems, and so are a lost user note and a change to the files
Codex imported from another agent's memory).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..codex.external_import import import_changes
from ..codex.memory_layout import (
    DIFF_FILE,
    NOTES_PREFIX,
    SelectedMemory,
    render_raw_memories,
    render_rollout_summary,
)
from .paths import is_user_note

DIFF_CAP = 4 * 1024 * 1024
RETENTION_DAYS = 7
PAGE = 512


def select_inputs(conn: sqlite3.Connection, sessions: dict[str, Any], limit: int,
                  max_unused_days: int, now: int) -> list[SelectedMemory]:
    """docs/codex-format.md "Phase 2 input selection": usable rows, ranked by use then recency,
    from sessions whose memory mode is `enabled`; at most `limit`; returned in ascending
    thread-id order."""
    cutoff = now - max_unused_days * 86400
    chosen: list[SelectedMemory] = []
    offset = 0
    while len(chosen) < limit:
        rows = conn.execute(
            "SELECT thread_id, source_updated_at, raw_memory, rollout_summary, rollout_slug "
            "FROM stage1_outputs WHERE (TRIM(raw_memory) != '' OR TRIM(rollout_summary) != '') "
            "AND ((last_usage IS NOT NULL AND last_usage >= ?) OR "
            "(last_usage IS NULL AND source_updated_at >= ?)) "
            "ORDER BY COALESCE(usage_count, 0) DESC, COALESCE(last_usage, source_updated_at) "
            "DESC, source_updated_at DESC, thread_id DESC LIMIT ? OFFSET ?",
            (cutoff, cutoff, PAGE, offset)).fetchall()
        if not rows:
            break
        offset += len(rows)
        for tid, sua, raw, summary, slug in rows:
            s = sessions.get(tid)
            if s is None or s.memory_mode != "enabled":
                continue
            chosen.append(SelectedMemory(tid, int(sua), raw, summary, slug, s.rollout_path,
                                         s.cwd or "", s.git_branch))
            if len(chosen) >= limit:
                break
    return sorted(chosen, key=lambda m: m.thread_id)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return  # untouched files keep their mtime: the diff shows only real changes
    path.write_text(text, encoding="utf-8")


def sync_inputs(root: Path, selected: list[SelectedMemory], version: str = "v1") -> None:
    """docs/codex-format.md "Rollout summary files": one summary file per selected row, nothing
    else; raw_memories.md rebuilt (v1 only)."""
    folder = root / "rollout_summaries"
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {m.file_stem: m for m in selected}
    for f in folder.glob("*.md"):
        if f.stem not in wanted:
            f.unlink()
    for stem, m in wanted.items():
        _write(folder / f"{stem}.md", render_rollout_summary(m))
    if version == "v1":
        _write(root / "raw_memories.md", render_raw_memories(selected))


def prune_extension_resources(root: Path, now: float) -> list[Path]:
    """docs/codex-format.md "Extensions and notes": in extensions with instructions.md, delete
    resources/*.md whose name starts with a UTC timestamp at least RETENTION_DAYS old. Other
    names are kept, and so is everything in a folder under resources/ (Codex 0.171 measured:
    the projects Codex's import writes there are never pruned, whatever their names)."""
    removed = []
    limit = now - RETENTION_DAYS * 86400
    for ext in (root / "extensions").glob("*"):
        if not (ext / "instructions.md").is_file():
            continue
        for f in (ext / "resources").glob("*.md"):
            if not f.is_file() or f.is_symlink():
                continue
            try:
                stamp = datetime.strptime(f.name[:19], "%Y-%m-%dT%H-%M-%S").replace(tzinfo=UTC)
            except ValueError:
                continue
            if stamp.timestamp() <= limit:
                f.unlink()
                removed.append(f)
    return removed


@dataclass(frozen=True)
class WorkspaceDiff:
    changes: list[tuple[str, str]]  # (A|M|D, path)
    patch: str


def workspace_diff(root: Path) -> WorkspaceDiff:
    """Baseline HEAD against the working tree (untracked files included, `.git` and the diff
    file itself excluded), read through a throwaway index. No baseline: everything is new."""
    import git

    (root / DIFF_FILE).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index"), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_CONFIG_GLOBAL": os.devnull}
        try:
            repo = git.Repo(root)
            head = repo.head.commit.hexsha
        except (git.GitError, ValueError):
            repo, head = None, None
        if repo is None or head is None:
            files = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                           if p.is_file() and ".git" not in p.relative_to(root).parts)
            return WorkspaceDiff([("A", f) for f in files], "")
        with repo, repo.git.custom_environment(**env):
            repo.git.read_tree(head)
            repo.git.add("-A", ".")
            status = repo.git.diff("--cached", "--name-status", "--no-renames", head)
            patch = _capped_patch(root, head, env)
    changes = [(line[0], line.split("\t", 1)[1]) for line in status.splitlines() if line]
    return WorkspaceDiff(changes, patch)


def _capped_patch(root: Path, head: str, env: dict[str, str]) -> str:
    """`git diff --cached HEAD`, read no further than `DIFF_CAP` bytes (and one more, to know
    it was cut): the diff file shows no more, and a 50 MB rewrite must not be held whole."""
    import subprocess

    proc = subprocess.Popen(["git", "diff", "--cached", "--no-renames", "--no-color", head],
                            cwd=root, env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        data = proc.stdout.read(DIFF_CAP + 1)
    finally:
        proc.kill()
        proc.wait()
    return data.decode("utf-8", "replace").rstrip("\n")


def render_diff_file(diff: WorkspaceDiff) -> str:
    """docs/codex-format.md "The workspace diff", in our own words."""
    out = ["# Memory Workspace Diff", "",
           "Generated by memdeck for this consolidation: the changes since the last one. "
           "Read it first; do not edit it.", "", "## Status"]
    out += [f"- {s} {p}" for s, p in diff.changes] or ["- none"]
    patch = diff.patch
    data = patch.encode("utf-8")
    if len(data) > DIFF_CAP:
        patch = data[:DIFF_CAP].decode("utf-8", "ignore") + (
            f"\n[workspace diff truncated at {DIFF_CAP} bytes]")
    out += ["", "## Diff", "```diff", patch, "```", ""]
    return "\n".join(out)


def validate_artifacts(root: Path, version: str = "v1", live: Path | None = None) -> list[str]:
    """docs/codex-format.md "Validation". Returns the problems; an empty list means valid.
    Symlinks are problems (Codex deletes them and fails). Given the `live` root the result
    replaces, a user's note it deletes or changes is a problem too (notes are never deleted:
    docs/codex-format.md "Extensions and notes"), and so is any change to the files Codex
    imported from another agent's memory (docs/codex-format.md "External-agent memory
    import")."""
    problems = [f"{'symlink' if kind == 'symlink' else 'not a regular file:'} {rel}"
                for rel, kind in unsafe_entries(root)]
    if live is not None:
        problems += note_losses(live, root)
        problems += import_changes(live, root)
    summary = root / "memory_summary.md"
    if not summary.is_file():
        problems.append("memory_summary.md is missing")
    else:
        first = summary.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        if first.rstrip("\r") != "v1":
            problems.append("memory_summary.md must start with the line `v1`")
        if version == "v2":
            text = summary.read_text(encoding="utf-8", errors="replace")
            if len(text.encode()) >= 10_000:
                problems.append("memory_summary.md must stay under 10,000 bytes (v2)")
            heads = {ln.strip() for ln in text.splitlines()}
            for h in ("## User Profile", "## User preferences", "## General Tips",
                      "## What's in Memory"):
                if h not in heads:
                    problems.append(f"memory_summary.md lacks `{h}` (v2)")
    if version == "v1" and not (root / "MEMORY.md").is_file():
        problems.append("MEMORY.md is missing")
    return problems


def unsafe_entries(root: Path) -> list[tuple[str, str]]:
    """(path, "symlink" | "special") for every symlink, and everything that is neither a
    regular file nor a folder (a FIFO, a socket, a device), under `root`, `.git` folders
    aside. Symlinks are never followed, so a folder symlink is one entry."""
    found: list[tuple[str, str]] = []

    def visit(folder: Path, prefix: str) -> None:
        try:
            with os.scandir(folder) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for e in items:
            if e.name == ".git":
                continue
            rel = prefix + e.name
            try:
                mode = e.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                found.append((rel, "symlink"))
            elif stat.S_ISDIR(mode):
                visit(folder / e.name, rel + "/")
            elif not stat.S_ISREG(mode):
                found.append((rel, "special"))

    visit(root, "")
    return found


def refuse_unsafe_root(root: Path) -> None:
    """One line (HomeError) when the live root holds a symlink or a special file: Codex
    deletes symlinks and fails its phase 2, a FIFO would hang the copy, and a workspace that
    left them out would propose deleting them."""
    from ..errors import HomeError

    bad = unsafe_entries(root) if root.is_dir() else []
    if not bad:
        return
    rel, kind = bad[0]
    what = "is a symlink" if kind == "symlink" else "is not a regular file or folder"
    more = f" ({len(bad) - 1} more such entr{'y' if len(bad) == 2 else 'ies'})" \
        if len(bad) > 1 else ""
    raise HomeError(f"cannot consolidate: {root / rel} {what}{more}; Codex refuses these in "
                    "the memory folder; move it out and consolidate again")


def note_losses(live: Path, new: Path) -> list[str]:
    """The user's notes (phase2/paths.py `is_user_note`) in `live` that `new` deletes or
    changes."""
    out: list[str] = []
    folder = live / NOTES_PREFIX
    if not folder.is_dir() or folder.is_symlink():
        return out
    for f in sorted(folder.rglob("*")):
        rel = f.relative_to(live).as_posix()
        if f.is_symlink() or not f.is_file() or not is_user_note(rel):
            continue
        other = new / rel
        if other.is_symlink() or not other.is_file():
            out.append(f"deletes the user's note {rel}")
        elif other.read_bytes() != f.read_bytes():
            out.append(f"changes the user's note {rel}")
    return out


def copy_root(src: Path, dest: Path) -> None:
    """A workspace copy of the live root, `.git` included. A live root that holds a symlink or
    a special file outside `.git` is refused first (`refuse_unsafe_root`), before anything
    is created at `dest`."""
    refuse_unsafe_root(src)
    shutil.copytree(src, dest, symlinks=True)
