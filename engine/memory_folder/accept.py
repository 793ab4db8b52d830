"""Accept a proposal (docs/architecture.md "Review and accept"): readers see the old memory root
or the new one, never a mix.

Under the global lease: refuse when the live root is no longer the state the proposal
started from, when what is accepted adds a secret, or when the result would not be a valid
root. Build the complete new root in a switch's staging folder (switch.py: the chosen
changes applied, `phase2_workspace_diff.md` gone, Codex's baseline `.git` made as Codex
makes it) and switch it in; its rows step marks `selected_for_phase2` and the global job as
Codex does on success and the proposal as accepted, and its history entry carries the
proposal id and the source threads as trailers. A crash anywhere is finished or forgotten
by the next command (recovery.py); a folder someone wrote to meanwhile is kept.

`recover_legacy` deals with the journal of a memdeck before the switch (`accept.journal`).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..codex.memory_layout import DIFF_FILE, threads_in_root
from ..errors import HomeError, MemdeckError
from ..phase2.conflicts import unresolved
from ..phase2.hunks import apply_hunks, proposal_hunks
from ..phase2.proposals import Proposal, get, root_state
from ..phase2.workspace import validate_artifacts
from .baseline import reset_codex_baseline
from .journal import JournalPaths, RowStep, row_step
from .leftover_paths import legacy_paths
from .swap import recover as recover_swap
from .switch import Switch
from .writer import Change, Lease, MemoryFolderWriter


class AcceptRefused(MemdeckError):
    pass


@row_step
@dataclass
class AcceptRows(RowStep):
    """The rows of an accepted proposal, once its root is live: Codex's bookkeeping of a
    successful phase 2 (the inputs the root holds selected, the global job done) and the
    proposal's status."""

    op = "accept"
    proposal: str
    partial: bool  # some files or hunks: the proposal is `partial`, not `accepted`
    now: int
    selected: list[tuple[str, int]]
    # no phase 2 ran here: a pull's merge (sync/push_pull.py) or a re-scope
    # (read_path/rescope.py)
    pulled: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"proposal": self.proposal, "partial": self.partial,
                               "now": self.now, "selected": [list(s) for s in self.selected]}
        if self.pulled:  # only then: a consolidation's journal is what earlier memdecks read
            out["pulled"] = True
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any], paths: JournalPaths) -> AcceptRows:
        return cls(str(raw["proposal"]), bool(raw["partial"]), int(raw["now"]),
                   [(str(t), int(s)) for t, s in raw["selected"]],
                   bool(raw.get("pulled", False)))

    def write(self, change: Change, lease: Lease | None) -> None:
        if lease is None:
            with change.lease("finish an interrupted accept") as own:
                self.write(change, own)
            return
        if not self.pulled:  # Codex's bookkeeping is of its own inputs, not of a pull
            lease.db.phase2_succeeded(lease.token, self.now, self.selected)
        with change.writer.store.transaction() as c:
            c.execute("UPDATE proposals SET status = ?, decided_at = ? WHERE id = ?",
                      ("partial" if self.partial else "accepted", self.now, self.proposal))


def _inside_root(rel: object) -> bool:
    """A relative path that stays inside the root it is joined to."""
    if not isinstance(rel, str) or not rel or "\0" in rel or "\\" in rel:
        return False
    parts = PurePosixPath(rel).parts
    return not rel.startswith("/") and ".." not in parts and "." not in parts \
        and ".git" not in parts


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
    present = threads_in_root(new)
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
    root = home.memory_root
    if root.is_symlink():
        raise HomeError(f"{root} is a symlink; Codex and memdeck refuse it")
    ws = home.proposals_dir / p.id / "workspace"
    if not ws.is_dir():
        raise AcceptRefused(f"proposal {p.id} has lost its workspace ({ws}); consolidate again")
    changed = {f["path"] for f in p.files}
    for rel in sorted(changed | set(files or []) | set(hunks or {})):
        if not _inside_root(rel):  # the row or the request edited: never followed
            raise AcceptRefused(f"proposal {p.id} names {rel!r}, a path outside the memory "
                                "folder; reject it")
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
    pulled = p.backend.startswith("pull:")
    made_here = pulled or p.backend.startswith("rescope:")  # no model's consolidation
    if pulled:
        left = unresolved(home, p.id)
        if left:
            raise AcceptRefused(f"proposal {p.id} has {left} unresolved conflict"
                                f"{'s' if left > 1 else ''} with {p.backend[5:]}: resolve "
                                f"them first (memdeck resolve {p.id} N ours|theirs|both)")
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
        sw = Switch(change)
        try:
            new = sw.target(root, base=p.base_state)
            _build(root, ws, new, None if files is None else sorted(chosen), picked)
            problems = validate_artifacts(new, home.memory_version, live=root)
            if problems:
                raise AcceptRefused(f"accepting {'these files' if files else 'it'} would "
                                    f"leave an invalid memory folder: {problems[0]}")
            reset_codex_baseline(new, now)
            selected = _selected(new, p.threads, lease.db.conn)
        except BaseException:
            sw.discard()
            raise
        partial = files is not None
        sw.commit(AcceptRows(p.id, partial, now, selected, made_here),
                  origin="pull" if pulled else "user" if made_here else "consolidation",
                  gate=(f"proposal {p.id} adds", "reject it, or edit the raw memory and "
                        "consolidate again"),
                  message=f"accept proposal {p.id}" + (" (some files)" if partial else ""),
                  trailers={"Memdeck-Proposal": p.id,
                            "Memdeck-Threads": ",".join(t for t, _ in selected)},
                  lease=lease, what=f"accept proposal {p.id}")
    return get(store, p.id)


def recover_legacy(change: Change) -> str | None:
    """Finish or undo an accept an older memdeck (before switch.py) was interrupted in."""
    writer = change.writer
    root, new, journal, swap_journal = legacy_paths(writer.home)
    if not (journal.exists() or new.exists() or swap_journal.exists()):
        return None
    recover_swap(swap_journal, root, new)
    if new.exists():
        shutil.rmtree(new)  # a build that never reached the swap, or the old root after it
    if not journal.exists():
        return None
    try:
        data = json.loads(journal.read_text(encoding="utf-8"))
        swapped = root_state(root) != data["base_state"]
        p = get(writer.store, data["proposal"]) if swapped else None
    except (ValueError, KeyError, TypeError, OSError, MemdeckError):
        p = None  # written atomically before the swap: damage means no swap happened
    if p is None:
        journal.unlink()
        return "undid an interrupted accept"
    now = int(writer.now())
    with change.lease("finish an interrupted accept") as lease:
        selected = _selected(root, p.threads, lease.db.conn)
        AcceptRows(p.id, bool(data["partial"]), now, selected).write(change, lease)
        change.after("consolidation", f"accept proposal {p.id}",
                     {"Memdeck-Proposal": p.id,
                      "Memdeck-Threads": ",".join(t for t, _ in selected)})
    journal.unlink()
    return f"finished an interrupted accept of proposal {p.id}"
