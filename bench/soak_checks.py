"""What must hold after every soak trial (issue 12, "What must hold when this is done").

Each check returns None when it holds, else one line saying what was found. They read the
home with plain SQLite and git, never through memdeck, so a check cannot recover what it
looks at.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import tempfile
import threading
from pathlib import Path

from crash_run import leftovers
from soak_homes import Template, state

from memdeck.engine.phase2.proposals import root_state

CHECKS = ("next", "old_or_new", "rows", "history", "leftovers", "integrity")
CHECK_TITLES = {"next": "a next cmd", "old_or_new": "b old|new", "rows": "c rows",
                "history": "d history", "leftovers": "e leftover", "integrity": "f fsck/db"}

_STATE_OF_COMMIT: dict[str, str] = {}  # a commit's tree never changes: cached across trials
_CACHE_LOCK = threading.Lock()


def _git(gitdir: Path, *args: str,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full |= {"GIT_DIR": str(gitdir), "GIT_CONFIG_NOSYSTEM": "1",
             "GIT_CONFIG_GLOBAL": os.devnull, **(env or {})}
    return subprocess.run(["git", *args], capture_output=True, text=True, env=full,
                          timeout=120)


def history_commits(gitdir: Path) -> list[str]:
    r = _git(gitdir, "rev-list", "--all")
    return r.stdout.split() if r.returncode == 0 else []


def commit_state(gitdir: Path, commit: str) -> str:
    """root_state of a history commit's tree, checked out into a temp folder (with its own
    index file, so the history repository's index is not touched)."""
    with _CACHE_LOCK:
        if commit in _STATE_OF_COMMIT:
            return _STATE_OF_COMMIT[commit]
    with tempfile.TemporaryDirectory(prefix="soak-commit-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        if _git(gitdir, "ls-tree", commit).stdout.strip():
            r = _git(gitdir, "--work-tree", str(tree), "checkout", commit, "--", ".",
                     env={"GIT_INDEX_FILE": str(Path(tmp) / "index")})
            if r.returncode != 0:
                raise RuntimeError(f"cannot check out {commit}: {r.stderr.strip()}")
        got = root_state(tree)
    with _CACHE_LOCK:
        _STATE_OF_COMMIT[commit] = got
    return got


def history_states(home: Path) -> set[str]:
    gitdir = home / "memdeck" / "history.git"
    return {commit_state(gitdir, c) for c in history_commits(gitdir)}


Seen = dict[str, tuple[str | None, bool]]  # when -> (root_state, is it the new state)


def check_old_or_new(t: Template, home: Path, seen: Seen) -> str | None:
    """Every state seen (after the kill, after the next command) is the old or the new one."""
    for when, (got, new) in seen.items():
        if got != t.old and not new:
            return f"{when}: the folder is neither old nor new ({_describe(t, home)})"
    return None


def check_each_file_old_or_new(t: Template, home: Path) -> str | None:
    """A folder switched file by file (a mount point of its own) may be seen half switched,
    but each file is one version or the other, never a file half written or a third one."""
    from soak_homes import folder_files

    now = folder_files(home / "memories")
    bad = sorted(rel for rel, data in now.items()
                 if data not in (t.old_files.get(rel), t.new_files.get(rel))
                 and not (t.op == "note" and rel.startswith("extensions/ad_hoc/notes/")))
    return f"files neither old nor new: {bad[:3]}" if bad else None


def _describe(t: Template, home: Path) -> str:
    from soak_homes import folder_files

    old, now = folder_files(t.home / "memories"), folder_files(home / "memories")
    added = sorted(set(now) - set(old))
    gone = sorted(set(old) - set(now))
    changed = sorted(k for k in set(old) & set(now) if old[k] != now[k])
    return f"added {added[:3]}, removed {gone[:3]}, changed {changed[:3]}"


def check_rows(t: Template, home: Path) -> str | None:
    """The rows are the old or the new ones, and the ones that go with the folder."""
    try:
        rows = t.rows(home)
    except (sqlite3.Error, OSError, ValueError) as e:
        return f"cannot read the rows: {e}"
    if t.op in ("edit", "note"):
        return None
    if rows not in (t.old_rows, t.new_rows):
        return f"rows {rows!r} are neither old {t.old_rows!r} nor new {t.new_rows!r}"
    if t.op == "forget":  # no folder to switch: disabled <=> row deleted is the whole rule
        return None
    folder_new = t.is_new(home)
    if (rows == t.new_rows) != folder_new:
        return (f"rows are {'new' if rows == t.new_rows else 'old'} ({rows!r}) but the "
                f"folder is {'new' if folder_new else 'not the new state'}")
    return None


def check_history(t: Template, home: Path, seen: Seen) -> str | None:
    """Every state a user could have seen (the old one, each one seen) is a history commit."""
    try:
        held = history_states(home)
    except RuntimeError as e:
        return str(e)
    want = {"old": t.old, **{when: got for when, (got, _) in seen.items()}}
    missing = [when for when, s in want.items() if s is not None and s not in held]
    if missing:
        return f"history lacks the state {', '.join(missing)} ({len(held)} states held)"
    return None


def check_leftovers(home: Path) -> str | None:
    left = leftovers(home)
    return f"left behind: {left[:5]}" if left else None


def check_integrity(home: Path) -> str | None:
    gitdir = home / "memdeck" / "history.git"
    r = _git(gitdir, "fsck", "--no-progress")
    if r.returncode != 0:
        return f"git fsck: {(r.stderr or r.stdout).strip()[:200]}"
    for db in (home / "memories_1.sqlite", home / "memdeck" / "memdeck.sqlite"):
        try:
            conn = sqlite3.connect(db)
            try:
                got = conn.execute("PRAGMA integrity_check").fetchall()
            finally:
                conn.close()
        except sqlite3.Error as e:
            return f"{db.name}: {e}"
        if got != [("ok",)]:
            return f"{db.name} integrity_check: {got[:3]}"
    return None


def seen_now(t: Template, home: Path) -> tuple[str | None, bool]:
    return state(home), t.is_new(home)
