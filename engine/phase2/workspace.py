"""Phase 2's workspace steps, with Codex's exact rules (docs/codex-format.md "Phase 2 steps").

Everything here works on a folder that holds a copy of the memory root: selecting the inputs,
syncing `rollout_summaries/` and `raw_memories.md`, pruning old extension resources, the
workspace diff against Codex's baseline commit (read through a throwaway git index so the
folder's own index is never touched), `phase2_workspace_diff.md`, and validation.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..codex.memory_layout import SelectedMemory, render_raw_memories, render_rollout_summary

DIFF_FILE = "phase2_workspace_diff.md"
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
    names are kept."""
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
        if repo is None:
            files = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                           if p.is_file() and ".git" not in p.relative_to(root).parts)
            return WorkspaceDiff([("A", f) for f in files], "")
        with repo, repo.git.custom_environment(**env):
            repo.git.read_tree(head)
            repo.git.add("-A", ".")
            status = repo.git.diff("--cached", "--name-status", "--no-renames", head)
            patch = repo.git.diff("--cached", "--no-renames", head)
    changes = [(line[0], line.split("\t", 1)[1]) for line in status.splitlines() if line]
    return WorkspaceDiff(changes, patch)


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


def validate_artifacts(root: Path, version: str = "v1") -> list[str]:
    """docs/codex-format.md "Validation". Returns the problems; an empty list means valid.
    Symlinks are problems (Codex deletes them and fails)."""
    problems = [f"symlink {p.relative_to(root)}" for p in root.rglob("*")
                if p.is_symlink() and ".git" not in p.relative_to(root).parts]
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


def copy_root(src: Path, dest: Path) -> None:
    """A workspace copy of the live root, `.git` included, symlinks kept as links (so that
    validation can see and refuse them)."""
    shutil.copytree(src, dest, symlinks=True)
