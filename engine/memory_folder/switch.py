"""The one way the memory folder changes (docs/architecture.md "Changing the memory folder").

Accept, restore, reset, restore-backup, a person's edit or note, and forget all change what
Codex reads, and most also change rows that must agree with it. Each builds its whole new
state first, then makes it live through `Switch.commit`:

1. **stage**: the new state of every root it changes is built complete under
   `memdeck/staging/<id>/` (never inside a root Codex reads; same file system, so a rename
   can move it);
2. **journal**: `memdeck/change.journal` says what the change is: the roots, the state each
   had (`base`) and will have (`new`), the rows to write, the history entry. Written
   atomically; from here on the change is decided and every command rolls it forward;
3. **switch**: each staged root is exchanged with the live one in one step (swap.py); the old
   root is now the staged folder;
4. **check**: the old root must still be exactly `base`. If someone wrote to it after the
   change's own checks (an editor, `echo >>`), the switch is undone, the change refused, and
   what they wrote is kept, as they left it, and recorded in history;
5. **rows** (the operation's own step, `RowStep.write`: journal.py), **history**,
   **clean-up**, in that order; each can run again.

The switch never names an operation: each hands `commit` its rows step, a typed part of the
journal. recovery.py runs `complete` from the journal a killed memdeck left, so a change
killed at any point is finished (or, before its journal, forgotten: the staging folder is
removed) by whichever command opens the home next, under the home's lock (home_lock.py),
which tells it no live memdeck is still working on them.
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..atomic import fsync_dir, write_atomic
from ..content_gate import added_findings, refusal
from ..crash_points import crash_point
from ..errors import HomeError, MemdeckError
from ..phase2.proposals import root_state
from .in_place import is_mount, recover_in_place, swap_in_place
from .journal import HistoryNote, Journal, RootChange, RowStep
from .leftover_paths import JOURNAL, STAGING
from .open_writers import wait_for_writers
from .origins import Origin
from .swap import exchange
from .swap import recover as recover_swap
from .writer import Change, Lease


class ChangedMeanwhile(MemdeckError):
    """The memory folder changed while a change ran; nothing of it was applied."""


@dataclass(frozen=True)
class Outcome:
    switched: bool  # False: the new state was the old one; nothing changed
    commit: str | None  # the history commit of the new state


def journal_path(change: Change) -> Path:
    return change.writer.home.memdeck_dir / JOURNAL


def staging_root(change: Change) -> Path:
    return change.writer.home.memdeck_dir / STAGING


class Switch:
    """One change being built: stage its roots, then `commit`."""

    def __init__(self, change: Change) -> None:
        self.change = change
        change.writer.home.ensure_memdeck_dir()
        change.writer.lock.ensure_across_processes()
        self.id = uuid.uuid4().hex[:12]
        staging = staging_root(change)
        if staging.is_symlink() or (staging.exists() and not staging.is_dir()):
            raise HomeError(f"{staging} is not a folder of memdeck's; move it aside")
        self.dir = staging / self.id
        try:
            self.dir.mkdir(parents=True)
        except OSError as e:
            raise HomeError(f"cannot stage the change in {staging}: {e.strerror}") from None
        self.roots: list[RootChange] = []

    def _add(self, root: Path, base: str | None = None) -> Path:
        staged = self.dir / root.name
        if base is None or not root.is_dir():  # a root that does not exist has no state
            base = root_state(root) if root.is_dir() else None
        self.roots.append(RootChange(root, staged, base))
        return staged

    def copy_of(self, root: Path, *, only_git: bool = False) -> Path:
        """A staged copy of `root` (its `.git` too, symlinks as links) to change in place;
        `only_git`: an otherwise empty folder holding just the root's `.git`."""
        staged = self._add(root)
        try:
            if root.is_dir() and not only_git:
                shutil.copytree(root, staged, symlinks=True)
                return staged
            staged.mkdir()
            if (root / ".git").is_dir() and not (root / ".git").is_symlink():
                shutil.copytree(root / ".git", staged / ".git", symlinks=True)
        except (OSError, shutil.Error) as e:  # a full disk, an unreadable file: nothing moved
            self.discard()
            raise HomeError(f"cannot stage a copy of {root.name}/ in {self.dir.parent}: "
                            f"{_why(e)}; nothing was changed") from None
        return staged

    def target(self, root: Path, *, base: str | None = None) -> Path:
        """Where to build `root`'s new state (does not exist yet). `base`: the state the
        change was decided on (an accept: the state its proposal started from), when that
        is earlier than now; the switch is refused if the root is not in it."""
        return self._add(root, base)

    def empty(self, root: Path) -> Path:
        staged = self._add(root)
        staged.mkdir()
        return staged

    def file(self, name: str) -> Path:
        """A path in the staging folder for data the rows step reads (a backup's rows)."""
        return self.dir / name

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def commit(self, rows: RowStep, *, origin: Origin, message: str,
               trailers: dict[str, str] | None = None, lease: Lease | None = None,
               what: str = "", gate: tuple[str, str] | None = None) -> Outcome:
        """Make the staged roots live, then write the rows (`rows.write`) and the history
        entry. `what`: the change in a few words, for its messages (default: the op).

        `gate` = (who, advice): the new state must add no secret and no control character
        to any root (content_gate.py), else `ContentRefused` "<who> a secret (…); <advice>"
        and nothing applied. Raises `ChangedMeanwhile` (nothing applied, the outside change
        kept) when a root changed after it was staged."""
        if gate is not None:
            found = [a for r in self.roots for a in added_findings(r.root, r.staged)]
            if found:
                self.discard()
                raise refusal(gate[0], found, gate[1])
        for r in self.roots:
            r.new = root_state(r.staged)
        what = what or rows.op
        if not rows.writes_rows and all(r.new == r.base for r in self.roots):
            self.discard()
            return Outcome(False, None)
        history_root = self.change.history.root
        if any(r.root == history_root and r.base is not None for r in self.roots):
            # history must hold the state being replaced: snapshot it now and check it is
            # still `base` afterwards, so nothing written since `base` was taken (during the
            # build, a backup, an earlier snapshot) can be replaced unrecorded
            self.change.before()
        held = wait_for_writers([r.root for r in self.roots if r.root.is_dir()])
        if held:  # a writer with a file of the folder open: what it writes next would be lost
            self.discard()
            raise HomeError(f"{held}; memdeck waited for it to close the file and nothing of "
                            f"the {what} was applied; close it and try again")
        for r in self.roots:  # the common case of an outside change, before anything moved
            if _state(r.root) != r.base:
                self.discard()
                self.change.before()  # what they wrote, recorded as theirs
                raise ChangedMeanwhile(_meanwhile(what, r.root))
        crash_point("switch.staged")
        journal = Journal(self.id, self.dir, self.roots, what,
                          HistoryNote(origin, message, trailers or {}), rows)
        _write(self.change, journal)
        crash_point("switch.journaled")
        return complete(self.change, journal, lease)


def _why(e: OSError | shutil.Error) -> str:
    if isinstance(e, shutil.Error):  # copytree's list of (src, dst, why)
        first = e.args[0][0] if e.args and e.args[0] else None
        return str(first[2]) if first else "a file could not be copied"
    return e.strerror or str(e)


def _meanwhile(what: str, root: Path) -> str:
    return (f"{root.name}/ changed while memdeck was trying to {what} (an edit outside "
            "memdeck?); that change is kept as it is and recorded in history, and nothing of "
            f"the {what} was applied; try again")


def _state(p: Path) -> str | None:
    return root_state(p) if p.is_dir() else None


def _write(change: Change, journal: Journal) -> None:
    write_atomic(journal_path(change), journal.dumps())


def _exchange(root: Path, staged: Path) -> None:
    """Swap a live root and its staged folder: in one rename, or file by file where the root
    is a mount point of its own and cannot be renamed (in_place.py)."""
    if not is_mount(root):
        try:
            exchange(root, staged, staged.parent / "swap.journal")
            return
        except OSError as e:  # a bind mount on the same file system looks like a folder
            if e.errno not in (errno.EBUSY, errno.EXDEV):
                raise
    swap_in_place(root, staged)


def _swap_in(r: RootChange) -> None:
    if r.root.is_dir():
        _exchange(r.root, r.staged)
    else:
        os.rename(r.staged, r.root)  # a root that did not exist: created complete
        fsync_dir(r.root.parent)


def _swap_all(change: Change, journal: Journal) -> None:
    """Make every staged root live. A switch the file system refuses (a read-only or busy
    folder) puts back the roots already switched and drops the change: no journal is left
    to apply it later, when the folder becomes writable."""
    done: list[RootChange] = []
    for r in journal.roots:
        if r.staged.is_dir() and _state(r.staged) == r.new and _state(r.root) != r.new:
            try:
                _swap_in(r)
            except OSError as e:
                for back in reversed(done):
                    _exchange(back.root, back.staged)
                _clean(change, journal)
                raise HomeError(f"cannot switch {r.root} to its new state: "
                                f"{e.strerror or e}; nothing of the {journal.what} was "
                                "applied") from None
            done.append(r)


def complete(change: Change, journal: Journal, lease: Lease | None = None) -> Outcome:
    """Run a journaled change to its end (or undo it when a root changed meanwhile)."""
    for r in journal.roots:  # a three-rename swap or a file-by-file replacement cut short
        recover_swap(journal.dir / "swap.journal", r.root, r.staged)
        recover_in_place(r.root, r.staged)
    if journal.state == "committed":
        _swap_all(change, journal)
        crash_point("switch.swapped")
        # a writer that opened a file of the old folder just before the switch writes into
        # the folder switched away: let it finish, then the check below sees what it wrote
        wait_for_writers([r.staged for r in journal.roots if r.base is not None])
        clash = [r for r in journal.roots if r.base is not None and _state(r.staged) != r.base]
        if clash:
            journal.state = "reverting"
            journal.kept = {str(r.root): _state(r.staged) for r in clash}
            _write(change, journal)
    if journal.state == "reverting":
        _revert(change, journal)
        first = next(iter(journal.kept), str(journal.roots[0].root))
        raise ChangedMeanwhile(_meanwhile(journal.what, Path(first)))
    journal.rows.write(change, lease)
    crash_point("switch.rows")
    h = journal.history
    commit = change.after(h.origin, h.message, h.trailers)
    crash_point("switch.recorded")
    _keep_late_writes(change, journal)
    _clean(change, journal)
    return Outcome(True, commit)


def _keep_late_writes(change: Change, journal: Journal) -> None:
    """Last look at the folders switched away before they are removed: a writer that had a
    file open across the switch may have written into one since the check; record it."""
    for r in journal.roots:
        if (r.base is not None and r.staged.is_dir() and _state(r.staged) != r.base
                and r.root == change.history.root):
            change.history.snapshot_of(r.staged, "external",
                                       "written into the folder memdeck replaced")
            h = journal.history  # and the live folder again after it
            change.after(h.origin, h.message, h.trailers)


def _revert(change: Change, journal: Journal) -> None:
    """Put back what someone wrote while the change ran, record it, drop the change."""
    for r in journal.roots:
        kept = journal.kept.get(str(r.root))
        if r.staged.is_dir() and _state(r.staged) in (kept, r.base) and _state(r.root) != kept:
            _exchange(r.root, r.staged)
        leftover = _state(r.staged)
        if r.staged.is_dir() and leftover not in (r.new, r.base, kept) \
                and r.root == change.history.root:
            # lines written into the new folder in the instant it was live: keep them too
            change.history.snapshot_of(r.staged, "external",
                                       "written while memdeck switched the folder")
    change.before()  # what they wrote, as an outside change
    _clean(change, journal)


def _clean(change: Change, journal: Journal) -> None:
    """The journal first: once it is gone the change is over, and a staging folder a kill
    left half-removed is only cleared, never mistaken for the folder someone changed."""
    journal_path(change).unlink(missing_ok=True)
    fsync_dir(journal_path(change).parent)
    shutil.rmtree(journal.dir, ignore_errors=True)
