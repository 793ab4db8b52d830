"""Accept a proposal (docs/architecture.md "Review and accept"): readers see the old memory root
or the new one, never a mix.

Under the global lease: refuse when the live root is no longer the state the proposal
started from, when what is accepted adds a secret, or when the result would not be a valid
root. Build the complete new root beside the live one (the chosen changes applied,
`phase2_workspace_diff.md` gone, Codex's baseline `.git` made as Codex makes it), swap it
in as one step (swap.py), mark `selected_for_phase2` and the global job as Codex does on
success, and commit the result to memdeck's history with the proposal id and the source
threads as trailers.

An accept journal (`memdeck/accept.journal`) is written before the swap. `recover` finishes
an accept that was interrupted after the swap, or undoes one interrupted before it; the
memory-folder writer (writer.py) runs it before any other change touches the root, under the
same lock an accept holds.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from ..atomic import write_atomic
from ..codex.home import CodexHome
from ..codex.pipeline_db import PipelineDB
from ..errors import HomeError, MemdeckError
from ..phase2.hunks import apply_hunks, proposal_hunks
from ..phase2.proposals import Proposal, get, root_state
from ..phase2.workspace import DIFF_FILE, validate_artifacts
from .baseline import reset_codex_baseline
from .swap import exchange
from .swap import recover as recover_swap
from .writer import Change, Lease, MemoryFolderWriter


class AcceptRefused(MemdeckError):
    pass


def _paths(home: CodexHome) -> tuple[Path, Path, Path, Path]:
    root = home.memory_root
    return (root, root.with_name(f".{root.name}.memdeck-new"),
            home.memdeck_dir / "accept.journal", home.memdeck_dir / "swap.journal")


def _build(root: Path, ws: Path, new: Path, files: list[str] | None,
           hunks: dict[str, set[int]] | None = None) -> None:
    if new.exists():
        shutil.rmtree(new)
    if files is None:
        shutil.copytree(ws, new, symlinks=True)
    else:  # the live root with only the chosen files taken from the proposal
        if root.is_dir():
            shutil.copytree(root, new, symlinks=True)
        else:
            new.mkdir()
        for rel, chosen in (hunks or {}).items():
            old_lines = _lines(root / rel)
            merged = apply_hunks(old_lines, _lines(ws / rel), chosen)
            dst = new / rel
            if not merged and not (ws / rel).exists():
                dst.unlink(missing_ok=True)  # the proposal deletes it and all of that is taken
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text("".join(merged), encoding="utf-8")
        for rel in files:
            src, dst = ws / rel, new / rel
            if src.exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)
            elif dst.exists():
                dst.unlink()
    (new / DIFF_FILE).unlink(missing_ok=True)


def _lines(p: Path) -> list[str]:
    return p.read_text(encoding="utf-8").splitlines(keepends=True) if p.is_file() else []


def _selected(new: Path, threads: list[str], conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """The inputs the accepted root really holds: threads whose summary file is in it."""
    present = {p.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
               .removeprefix("thread_id: ").strip()
               for p in (new / "rollout_summaries").glob("*.md")}
    rows = conn.execute("SELECT thread_id, source_updated_at FROM stage1_outputs").fetchall()
    return [(t, int(s)) for t, s in rows if t in present and t in threads]


def accept(writer: MemoryFolderWriter, pid: str, files: list[str] | None = None,
           hunks: dict[str, list[int]] | None = None) -> Proposal:
    """All of a proposal, its changes to the chosen `files`, and/or the chosen `hunks`
    ({path: [hunk index, …]}, as `proposal_hunks` numbers them)."""
    with writer.change() as change:
        return _accept(change, pid, files, hunks)


def _accept(change: Change, pid: str, files: list[str] | None,
            hunks: dict[str, list[int]] | None) -> Proposal:
    writer = change.writer
    home, store = writer.home, writer.store
    p = get(store, pid)
    if p.status != "pending":
        raise AcceptRefused(f"proposal {p.id} is {p.status}, not pending")
    if p.version != home.memory_version:
        raise AcceptRefused(f"proposal {p.id} is for memory {p.version}, but Codex now uses "
                            f"{home.memory_version} ({home.version_info.reason}); consolidate "
                            "again")
    root, new, journal, swap_journal = _paths(home)
    if root.is_symlink():
        raise HomeError(f"{root} is a symlink; Codex and memdeck refuse it")
    ws = home.proposals_dir / p.id / "workspace"
    if not ws.is_dir():
        raise AcceptRefused(f"proposal {p.id} has lost its workspace ({ws}); consolidate again")
    changed = {f["path"] for f in p.files}
    if files is not None:
        unknown = sorted(set(files) - changed)
        if unknown:
            raise AcceptRefused(f"{unknown[0]} is not changed by proposal {p.id}")
    picked = {k: set(v) for k, v in (hunks or {}).items()}
    if hunks is not None:
        files = list(files or [])
        for rel in picked:
            if rel not in changed:
                raise AcceptRefused(f"{rel} is not changed by proposal {pid}")
    chosen = changed if files is None else set(files)
    leaks = [s for s in p.secrets if s["path"] in chosen]
    if picked:
        by_hunk = {(h.path, h.index): h for h in proposal_hunks(home.memory_root, ws,
                                                                p.files)}
        for rel, idx in picked.items():
            for i in idx:
                h = by_hunk.get((rel, i))
                if h is None:
                    raise AcceptRefused(f"{rel} has no hunk {i} in proposal {p.id}")
                first, count = h.new_range
                leaks += [s for s in p.secrets if s["path"] == rel
                          and first <= s["line"] < first + max(count, 1)]
    if leaks:
        s = leaks[0]
        raise AcceptRefused(f"proposal {p.id} adds a secret ({s['kind']} at {s['path']}:"
                            f"{s['line']}); reject it, or edit the raw memory and consolidate "
                            "again")
    now = int(writer.now())
    with change.lease("accept") as lease:
        if root_state(root) != p.base_state:
            raise AcceptRefused("memory changed since this proposal was made; consolidate "
                                "again")
        change.before()  # the state being replaced, if not yet recorded
        _build(root, ws, new, None if files is None else sorted(chosen), picked)
        problems = validate_artifacts(new, home.memory_version)
        if problems:
            shutil.rmtree(new)
            raise AcceptRefused(f"accepting {'these files' if files else 'it'} would "
                                f"leave an invalid memory folder: {problems[0]}")
        reset_codex_baseline(new, now)
        selected = _selected(new, p.threads, lease.db.conn)
        write_atomic(journal, json.dumps({"proposal": p.id, "base_state": p.base_state,
                                          "partial": files is not None}))
        if root.exists():
            exchange(root, new, swap_journal)
            shutil.rmtree(new)
        else:
            new.rename(root)
        _finish(change, lease, p, selected, files is not None, now)
    return get(store, p.id)


def _finish(change: Change, lease: Lease, p: Proposal, selected: list[tuple[str, int]],
            partial: bool, now: int) -> None:
    """Codex's bookkeeping of a successful phase 2, the history commit, the proposal's
    status; the journal goes last, so a crash before it is finished again on recovery."""
    lease.db.phase2_succeeded(lease.token, now, selected)
    change.after(
        "consolidation", f"accept proposal {p.id}" + (" (some files)" if partial else ""),
        {"Memdeck-Proposal": p.id, "Memdeck-Threads": ",".join(t for t, _ in selected)})
    with change.writer.store.transaction() as c:
        c.execute("UPDATE proposals SET status = ?, decided_at = ? WHERE id = ?",
                  ("partial" if partial else "accepted", now, p.id))
    _, _, journal, _ = _paths(change.writer.home)
    journal.unlink(missing_ok=True)


def recover(writer: MemoryFolderWriter) -> str | None:
    """Finish or undo an accept that was interrupted. Returns what was done, or None.
    `MemoryFolderWriter.recover` runs it under the home's lock before every change."""
    with writer.change(recover=False) as change:
        root, new, journal, swap_journal = _paths(writer.home)
        if not (journal.exists() or new.exists() or swap_journal.exists()):
            return None
        if not journal.exists() and _accept_in_progress(writer):
            return None  # another process is building its accept right now: not ours to clear
        return _recover(change)


def _accept_in_progress(writer: MemoryFolderWriter) -> bool:
    db = PipelineDB.open(writer.home)
    try:
        return db.global_lease_live(int(writer.now()))
    finally:
        db.close()


def _recover(change: Change) -> str | None:
    writer = change.writer
    root, new, journal, swap_journal = _paths(writer.home)
    recover_swap(swap_journal)
    if not journal.exists():
        if new.exists():
            shutil.rmtree(new)  # a build that never reached the swap
        return None
    try:
        data = json.loads(journal.read_text(encoding="utf-8"))
        swapped = root_state(root) != data["base_state"]
    except (ValueError, KeyError, TypeError, OSError):
        # written atomically before the swap, so a damaged journal means no swap happened
        if new.exists():
            shutil.rmtree(new)
        journal.unlink()
        return "undone"
    if new.exists():
        shutil.rmtree(new)
    if not swapped:
        journal.unlink()
        return "undone"
    p = get(writer.store, data["proposal"])
    now = int(writer.now())
    with change.lease("finish an interrupted accept") as lease:
        _finish(change, lease, p, _selected(root, p.threads, lease.db.conn),
                bool(data["partial"]), now)
    return "finished"

