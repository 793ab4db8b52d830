"""Phase 2 into a reviewable proposal (docs/architecture.md "Phase 2: the proposal"): nothing
reaches the live memory root here.

`consolidate` takes the global lease, copies the live root into
`memdeck/proposals/<id>/workspace`, syncs the inputs there with Codex's names and layouts,
writes `phase2_workspace_diff.md`, runs the consolidation (the `Phase2Backend` handed in,
phase2/backend.py), validates the result, scans what it adds for secrets, and stores the
proposal as pending with the digest of the live root it started from; what each ad-hoc note
did, when the backend says, goes beside it in `notes.json` (phase2/notes.py). Accepting it is
a separate step.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import secrets as _random
import shutil
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

from ..codex.home import CodexHome
from ..codex.memory_layout import SelectedMemory
from ..codex.pipeline_db import PipelineDB
from ..content_gate import line_findings
from ..errors import HomeError, MemdeckError, NotFound
from ..index.sessions import Session
from ..line_diff import BIG_BYTES, git_unified_lines, unified
from ..store import Store
from .backend import Phase2Backend
from .notes import NoteEffect, load_effects, save_effects
from .workspace import (
    DIFF_FILE,
    copy_root,
    prune_extension_resources,
    refuse_unsafe_root,
    render_diff_file,
    select_inputs,
    sync_inputs,
    validate_artifacts,
    workspace_diff,
)

SKIP = {".git", DIFF_FILE}


class AddedSecret(TypedDict):
    """A secret a proposal would add: where, what kind, and a masked preview."""

    path: str
    line: int
    kind: str
    preview: str


# pending until reviewed; accepted whole or in part (some files or hunks), or rejected
ProposalStatus = Literal["pending", "accepted", "partial", "rejected"]


@dataclass(frozen=True)
class Proposal:
    id: str
    created_at: float
    status: ProposalStatus
    backend: str
    model: str
    threads: list[str]
    files: list[dict[str, str]]
    base_state: str
    secrets: list[AddedSecret]
    problems: list[str]
    reason: str | None = None
    version: str = "v1"  # the memory root it was made for: memories/ (v1) or memories_v2/ (v2)

    def to_json(self) -> dict[str, Any]:
        from ..formatting import iso_utc

        return {"id": self.id, "status": self.status, "created_at": iso_utc(self.created_at),
                "backend": self.backend, "model": self.model, "threads": self.threads,
                "files": self.files, "secrets": self.secrets, "problems": self.problems,
                "reason": self.reason, "version": self.version}


def _files(root: Path) -> dict[str, Path]:
    if not root.is_dir():
        return {}
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if (p.is_file() or p.is_symlink()) and not (set(p.relative_to(root).parts) & SKIP)}


def root_state(root: Path) -> str:
    """A digest of every file's path and bytes (`.git` aside): "has the root changed?"."""
    h = hashlib.sha256()
    for rel, p in _files(root).items():  # names as their bytes: one need not be UTF-8
        h.update(os.fsencode(rel) + b"\0")
        h.update(os.fsencode(os.readlink(p)) if p.is_symlink() else p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def changed_files(live: Path, ws: Path) -> list[dict[str, str]]:
    a, b = _files(live), _files(ws)
    out = []
    for rel in sorted(set(a) | set(b)):
        if rel not in b:
            out.append({"path": rel, "change": "D"})
        elif rel not in a:
            out.append({"path": rel, "change": "A"})
        elif not filecmp.cmp(a[rel], b[rel], shallow=False):  # in pieces: a big file too
            out.append({"path": rel, "change": "M"})
    return out


def _text(p: Path | None) -> list[str]:
    if p is None or not p.exists():
        return []
    return p.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)


def write_diff(live: Path, ws: Path, files: list[dict[str, str]], out: Path) -> list[AddedSecret]:
    """The proposal's unified diff into `out`, file by file (a big file's diff is never held
    whole), and what its added lines hold that must not be accepted (content_gate.py)."""
    found: list[AddedSecret] = []
    with open(out, "w", encoding="utf-8") as f:
        for entry in files:
            rel = entry["path"]
            a = live / rel if entry["change"] != "A" else None
            b = ws / rel if entry["change"] != "D" else None
            line_no = 0
            for line in _file_diff(a, b, rel):
                f.write(line if line.endswith("\n") else line + "\n")
                if line.startswith(("---", "+++")):
                    continue
                if line.startswith("@@"):
                    line_no = int(line.split("+", 1)[1].split(",", 1)[0].split(" ", 1)[0]) - 1
                elif line.startswith("+"):
                    line_no += 1
                    found += [AddedSecret(path=rel, line=line_no, kind=x.kind,
                                          preview=x.preview)
                              for x in line_findings(line[1:].rstrip("\n"))]
                elif not line.startswith("-"):
                    line_no += 1
    return found


def _file_diff(a: Path | None, b: Path | None, rel: str) -> Iterator[str]:
    """One file's unified diff: difflib's, or git's written as it runs for a big file."""
    size = sum(p.stat().st_size for p in (a, b) if p is not None and p.exists())
    if size > BIG_BYTES:
        lines = git_unified_lines(a if a is not None and a.exists() else Path(os.devnull),
                                  b if b is not None and b.exists() else Path(os.devnull),
                                  f"a/{rel}", f"b/{rel}")
        if lines is not None:
            return lines
    return unified(_text(a), _text(b), f"a/{rel}", f"b/{rel}")


def consolidate(home: CodexHome, store: Store, backend: Phase2Backend,
                sessions: list[Session], now: float) -> Proposal | None:
    """Build a pending proposal from `sessions` (the current listing); None when the memory is
    already up to date."""
    cfg = home.config
    version = home.memory_version  # once: the root, the inputs and the checks agree
    root = home.memory_root
    if root.is_symlink():
        raise HomeError(f"{root} is a symlink; Codex and memdeck refuse it")
    by_id = {s.id: s for s in sessions if s.id}
    pid = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now)) + "-" + _random.token_hex(2)
    pdir = home.proposals_dir / pid
    refuse_unsafe_root(root)  # before anything is made: no proposal folder left behind
    db = PipelineDB.open(home)
    try:
        with db.global_lease(int(now), "consolidate"):
            selected = select_inputs(db.conn, by_id, cfg.max_raw_memories_for_consolidation,
                                     cfg.max_unused_days, int(now))
            base = root_state(root)
            pdir.mkdir(parents=True)
            try:
                return _build(store, backend, (pid, pdir, root, version), selected, base, now)
            except BaseException:
                shutil.rmtree(pdir, ignore_errors=True)  # nothing half-made is kept
                raise
    finally:
        db.close()


def _build(store: Store, backend: Phase2Backend, where: tuple[str, Path, Path, str],
           selected: list[SelectedMemory], base: str, now: float) -> Proposal | None:
    """The proposal's workspace, the agent's run in it, its diff and its row; `where` is
    (id, proposal folder, live root, memory version)."""
    pid, pdir, root, version = where
    ws = pdir / "workspace"
    if root.is_dir():
        copy_root(root, ws)
    else:
        ws.mkdir()
    sync_inputs(ws, selected, version)
    prune_extension_resources(ws, now)
    (ws / DIFF_FILE).write_text(render_diff_file(workspace_diff(ws)), encoding="utf-8")
    run = backend.consolidate(ws, selected, now, version)
    (ws / DIFF_FILE).unlink(missing_ok=True)
    files = changed_files(root, ws)
    if not files:
        shutil.rmtree(pdir)
        return None
    secrets = write_diff(root, ws, files, pdir / "proposal.diff")
    save_effects(pdir, run.notes)  # which note caused which line (phase2/notes.py)
    p = Proposal(pid, now, "pending", backend.name, run.model, [m.thread_id for m in selected],
                 files, base, secrets, validate_artifacts(ws, version, live=root),
                 version=version)
    return record(store, p, run.input_tokens, run.output_tokens, run.prompt_hash)


def record(store: Store, p: Proposal, input_tokens: int = 0, output_tokens: int = 0,
           prompt_hash: str | None = None) -> Proposal:
    """Store a pending proposal whose folder is made (a consolidation's, or a pull's:
    sync/pull.py)."""
    with store.transaction() as c:
        c.execute("INSERT INTO proposals (id, created_at, status, backend, model, threads, "
                  "files, base_state, secrets, problems, input_tokens, output_tokens, "
                  "prompt_hash, version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (p.id, p.created_at, p.status, p.backend, p.model, json.dumps(p.threads),
                   json.dumps(p.files), p.base_state, json.dumps(p.secrets),
                   json.dumps(p.problems), input_tokens, output_tokens, prompt_hash,
                   p.version))
    return p


def _row(r: sqlite3.Row) -> Proposal:
    return Proposal(r["id"], r["created_at"], r["status"], r["backend"], r["model"],
                    json.loads(r["threads"]), json.loads(r["files"]), r["base_state"],
                    json.loads(r["secrets"]), json.loads(r["problems"]), r["reason"],
                    r["version"] or "v1")


def list_proposals(store: Store) -> list[Proposal]:
    rows = store.conn().execute("SELECT * FROM proposals ORDER BY created_at DESC, id "
                                "DESC").fetchall()
    return [_row(r) for r in rows]


def get(store: Store, pid: str) -> Proposal:
    """The proposal whose id is `pid` or starts with it."""
    rows = [p for p in list_proposals(store) if p.id == pid or p.id.startswith(pid)]
    if len(rows) != 1:
        raise NotFound(f"no proposal {pid!r} (see `memdeck proposals`)" if not rows else
                       f"{pid!r} matches {len(rows)} proposals; give more of the id")
    return rows[0]


def note_effects(home: CodexHome, store: Store, pid: str) -> list[NoteEffect]:
    """The ad-hoc notes the proposal folded and what each did ([] for none, or when the
    backend could not say, as the openai agent cannot)."""
    return load_effects(home.proposals_dir / get(store, pid).id)


def diff_text(home: CodexHome, store: Store, pid: str) -> str:
    p = get(store, pid)
    path = home.proposals_dir / p.id / "proposal.diff"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def reject(home: CodexHome, store: Store, pid: str, reason: str | None,
           now: float) -> Proposal:
    """Refuse a pending proposal, or what a partial accept left of one. Its folder goes (the
    workspace, `proposal.diff`, the notes' effects: whatever the model wrote, a token
    included); the row stays as the record, `rejected`, or `partial` with the reason (what
    was taken is in memory and history)."""
    p = get(store, pid)
    if p.status not in ("pending", "partial"):
        raise MemdeckError(f"proposal {p.id} is {p.status}, not pending")
    with store.transaction() as c:
        if p.status == "pending":
            if c.execute("UPDATE proposals SET status = 'rejected', decided_at = ?, reason = ? "
                         "WHERE id = ? AND status = 'pending'", (now, reason, p.id)).rowcount != 1:
                raise MemdeckError(f"proposal {p.id} was decided meanwhile; see `memdeck "
                                   "proposals`")
        elif reason:  # decided_at stays the accept's: it says when memory last changed
            c.execute("UPDATE proposals SET reason = ? WHERE id = ?", (reason, p.id))
    _remove_files(home, p.id)
    return get(store, p.id)


def discard_all_proposal_files(home: CodexHome, store: Store, now: float,
                               reason: str = "discarded by reset") -> int:
    """Remove every proposal's folder (for `reset`: what the model wrote must not outlive
    the memories). Rows stay; a pending one becomes `rejected` with `reason`, since there is
    nothing left to accept. Folders without a row (a consolidation killed midway) go too.
    Returns how many folders were removed."""
    with store.transaction() as c:
        c.execute("UPDATE proposals SET status = 'rejected', decided_at = ?, reason = ? "
                  "WHERE status = 'pending'", (now, reason))
    base = home.proposals_dir
    if base.is_symlink() or not base.is_dir():
        return 0
    removed = 0
    for child in sorted(base.iterdir()):
        _remove_files(home, child.name)
        removed += 1
    return removed


def _remove_files(home: CodexHome, pid: str) -> None:
    """A proposal's folder, gone; a symlink is removed, never followed."""
    if not pid or pid in (".", "..") or "/" in pid or os.sep in pid:
        return  # not a name memdeck gives (a damaged row): nothing outside the folder goes
    pdir = home.proposals_dir / pid
    if pdir.is_symlink() or pdir.is_file():
        pdir.unlink()
    elif pdir.is_dir():
        shutil.rmtree(pdir)
