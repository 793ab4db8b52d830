"""Accept a proposal (DESIGN §4): readers see the old memory root or the new one, never a mix.

Under the global lease: refuse when the live root is no longer the state the proposal
started from, when what is accepted adds a secret, or when the result would not be a valid
root. Build the complete new root beside the live one (the chosen changes applied,
`phase2_workspace_diff.md` gone, Codex's baseline `.git` made as Codex makes it), swap it
in as one step (swap.py), mark `selected_for_phase2` and the global job as Codex does on
success, and commit the result to memdeck's history with the proposal id and the source
threads as trailers.

An accept journal (`memdeck/accept.journal`) is written before the swap. `recover` finishes
an accept that was interrupted after the swap, or undoes one interrupted before it; it runs
before anything else touches the root.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

from ..codex.pipeline_db import PipelineDB
from ..codex.settings import write_text_atomic
from ..errors import HomeError, MemdeckError
from ..phase2.hunks import apply_hunks, proposal_hunks
from ..phase2.proposals import Proposal, get, root_state
from ..phase2.workspace import DIFF_FILE, validate_artifacts
from .baseline import reset_codex_baseline
from .swap import exchange
from .swap import recover as recover_swap


class AcceptRefused(MemdeckError):
    pass


def _paths(home: Any) -> tuple[Path, Path, Path, Path]:
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


def _selected(new: Path, threads: list[str], conn: Any) -> list[tuple[str, int]]:
    """The inputs the accepted root really holds: threads whose summary file is in it."""
    present = {p.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
               .removeprefix("thread_id: ").strip()
               for p in (new / "rollout_summaries").glob("*.md")}
    rows = conn.execute("SELECT thread_id, source_updated_at FROM stage1_outputs").fetchall()
    return [(t, int(s)) for t, s in rows if t in present and t in threads]


# One accept or recovery at a time in this process: the app runs engine calls on several
# worker threads, and a recovery must never clear the folder an accept is building.
_ROOT_LOCK = threading.RLock()


def accept(engine: Any, pid: str, files: list[str] | None = None,
           hunks: dict[str, list[int]] | None = None) -> Proposal:
    """All of a proposal, its changes to the chosen `files`, and/or the chosen `hunks`
    ({path: [hunk index, …]}, as `proposal_hunks` numbers them)."""
    with _ROOT_LOCK:
        return _accept(engine, pid, files, hunks)


def _accept(engine: Any, pid: str, files: list[str] | None,
            hunks: dict[str, list[int]] | None) -> Proposal:
    home = engine.home
    recover(engine)
    p = get(engine, pid)
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
    now = int(engine.clock.now())
    db = PipelineDB.open(home)
    try:
        with db.global_lease(now, "accept") as token:
            if root_state(root) != p.base_state:
                raise AcceptRefused("memory changed since this proposal was made; consolidate "
                                    "again")
            from .history import History

            History(home).snapshot()  # the state being replaced, if not yet recorded
            _build(root, ws, new, None if files is None else sorted(chosen), picked)
            problems = validate_artifacts(new, home.memory_version)
            if problems:
                shutil.rmtree(new)
                raise AcceptRefused(f"accepting {'these files' if files else 'it'} would "
                                    f"leave an invalid memory folder: {problems[0]}")
            reset_codex_baseline(new, now)
            selected = _selected(new, p.threads, db.conn)
            write_text_atomic(journal, json.dumps({"proposal": p.id, "base_state": p.base_state,
                                                   "partial": files is not None}))
            if root.exists():
                exchange(root, new, swap_journal)
                shutil.rmtree(new)
            else:
                new.rename(root)
            _finish(engine, db, token, p, selected, files is not None, now)
    finally:
        db.close()
    return get(engine, p.id)


def _finish(engine: Any, db: PipelineDB, token: str | None, p: Proposal,
            selected: list[tuple[str, int]], partial: bool, now: int) -> None:
    from .history import History

    if token is not None:
        db.phase2_succeeded(token, now, selected)
    History(engine.home).snapshot(
        "consolidation", f"accept proposal {p.id}" + (" (some files)" if partial else ""),
        {"Memdeck-Proposal": p.id, "Memdeck-Threads": ",".join(t for t, _ in selected)})
    with engine.store.transaction() as c:
        c.execute("UPDATE proposals SET status = ?, decided_at = ? WHERE id = ?",
                  ("partial" if partial else "accepted", now, p.id))
    _, _, journal, _ = _paths(engine.home)
    journal.unlink(missing_ok=True)


def recover(engine: Any) -> str | None:
    """Finish or undo an accept that was interrupted. Returns what was done, or None."""
    with _ROOT_LOCK:
        root, new, journal, swap_journal = _paths(engine.home)
        if not (journal.exists() or new.exists() or swap_journal.exists()):
            return None
        if not journal.exists() and _accept_in_progress(engine):
            return None  # another process is building its accept right now: not ours to clear
        return _recover(engine)


def _accept_in_progress(engine: Any) -> bool:
    db = PipelineDB.open(engine.home)
    try:
        return db.global_lease_live(int(engine.clock.now()))
    finally:
        db.close()


def _recover(engine: Any) -> str | None:
    root, new, journal, swap_journal = _paths(engine.home)
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
    p = get(engine, data["proposal"])
    db = PipelineDB.open(engine.home)
    try:
        now = int(engine.clock.now())
        with db.global_lease(now, "finish an interrupted accept") as token:
            _finish(engine, db, token, p,
                    _selected(root, p.threads, db.conn), bool(data["partial"]), now)
    finally:
        db.close()
    return "finished"

