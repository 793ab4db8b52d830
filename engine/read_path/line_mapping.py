"""Map line numbers of an older version of a memory file onto the file as it is now
(docs/architecture.md "The read path", "History").

A citation made at time t names lines of the file as it was then: the newest commit of
memdeck's history at or before t (the oldest commit when t comes before all of them; the file
as it is now when there is no history, or the version did not hold the file). Lines the diff
between that version and the current text leaves unchanged map 1:1; changed and deleted lines
map to nothing ("cited, since removed"). One diff per (file, commit), however many citations.
"""

from __future__ import annotations

import bisect
import difflib
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..codex.home import CodexHome
from ..line_diff import git_env, git_hunks


@dataclass(frozen=True)
class Version:
    commit: str | None  # None: the file as it is now
    lines: tuple[str, ...]
    to_current: tuple[int | None, ...]  # old line i+1 -> current line number, or None

    def map_line(self, line: int) -> int | None:
        """The current line number of this version's line `line` (1-based)."""
        if 1 <= line <= len(self.to_current):
            return self.to_current[line - 1]
        return None

    def text(self, line: int) -> str | None:
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else None


def line_map(old: Sequence[str], new: Sequence[str]) -> tuple[int | None, ...]:
    """Old line index -> new line number (1-based) for the lines the diff keeps: git's
    histogram diff (fast on a 5,000-line file full of repeated lines), difflib without git."""
    hunks = git_hunks(old, new, algorithm="histogram")
    if hunks is None:
        return _difflib_map(old, new)
    out: list[int | None] = []
    offset = 0
    i = 1  # the next old line to place
    for a, b, _c, d in hunks:
        end = a if b else a + 1  # old lines before this hunk: < end
        while i < end:
            out.append(i + offset)
            i += 1
        for _ in range(b):  # changed or deleted
            out.append(None)
            i += 1
        offset += d - b
    while i <= len(old):
        out.append(i + offset)
        i += 1
    return tuple(out[:len(old)])


def _difflib_map(old: Sequence[str], new: Sequence[str]) -> tuple[int | None, ...]:
    out: list[int | None] = [None] * len(old)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for a, _b, size in matcher.get_matching_blocks():
        for k in range(size):
            out[a + k] = _b + k + 1
    return tuple(out)


def split_lines(text: str) -> tuple[str, ...]:
    return tuple(text.splitlines())


class HistoryVersions:
    """The versions of one memory file in memdeck's history, read lazily, each diffed against
    the current text once."""

    def __init__(self, home: CodexHome, path: str, current: Sequence[str]) -> None:
        self.path = path
        self.current = tuple(current)
        self.gitdir = home.history_git
        self._commits = _commits(self.gitdir)  # (time, sha), oldest first
        self._times = [t for t, _ in self._commits]
        self._versions: dict[str | None, Version] = {}
        self.identity = Version(None, self.current,
                                tuple(range(1, len(self.current) + 1)))

    @property
    def has_history(self) -> bool:
        return bool(self._commits)

    def commit_at(self, t: float | None) -> str | None:
        """The newest commit at or before `t` (the oldest before all of them)."""
        if not self._commits:
            return None
        if t is None:
            return self._commits[-1][1]
        i = bisect.bisect_right(self._times, t) - 1
        return self._commits[max(i, 0)][1]

    def at(self, t: float | None) -> Version:
        commit = self.commit_at(t)
        return self.identity if commit is None else self.at_commit(commit)

    def at_commit(self, commit: str) -> Version:
        v = self._versions.get(commit)
        if v is None:
            text = file_at(self.gitdir, commit, self.path)
            if text is None:  # the file was not in that state: count against today's text
                v = self.identity
            else:
                old = split_lines(text)
                v = self.identity if old == self.current else Version(
                    commit, old, line_map(old, self.current))
            self._versions[commit] = v
        return v

    @property
    def versions_read(self) -> int:
        """Older versions that differ from today's text and were diffed."""
        return sum(1 for v in self._versions.values() if v.commit is not None)


def git_output(gitdir: Path, *args: str, data: bytes | None = None) -> bytes | None:
    """What `git --git-dir=GITDIR ARGS` prints, None when it fails (no history, no git)."""
    try:
        r = subprocess.run(["git", f"--git-dir={gitdir}", *args], input=data,
                           capture_output=True, timeout=60,
                           env=git_env())
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def _commits(gitdir: Path) -> list[tuple[float, str]]:
    """Every commit of the history, oldest first, with its commit time. Read only: a home
    without history gets none (and no repository is created)."""
    if not (gitdir / "HEAD").exists():
        return []
    out = git_output(gitdir, "log", "--first-parent", "--format=%ct %H", "HEAD")
    if not out:
        return []
    rows: list[tuple[float, str]] = []
    for line in out.decode("ascii", "replace").splitlines():
        t, _, sha = line.partition(" ")
        if sha and t.isdigit():
            rows.append((float(t), sha))
    rows.reverse()  # git lists newest first
    rows.sort(key=lambda r: r[0])  # stable: commits of one second keep their order
    return rows


def file_at(gitdir: Path, commit: str, path: str) -> str | None:
    """The text of `path` at `commit`, None when that state has no such file."""
    out = git_output(gitdir, "show", f"{commit}:{path}")
    if out is None:
        return None
    return out.decode("utf-8", "replace")
