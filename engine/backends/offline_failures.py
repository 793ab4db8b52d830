"""What the offline backends remember of failed commands: each failure with the fix that followed
it, or, when nothing fixed it, the failure once as an open problem.

The outcomes come from exit codes (`codex/command_outcomes.py`); this module only pairs them. A
failed command is resolved by a later passing run of the same command, or of a broader one (the
same program and subcommand with no target, or a target that contains the failing one:
`pytest` or `pytest tests/` resolves `pytest tests/test_a.py::test_b`). The fix is what changed
in between: the files patched, else the commands that changed something, else nothing ("passed
on a later run"). A failure that was followed by a patch but never run again is `unverified`.
A look-up that failed (`cat`, `ls`, `rg`, `git log`…) is a `probe`: it is shown in the session's
summary but never remembered as a problem, and it never makes a task `partial`.

The reason given for a failure is a line the command printed; it describes the failure, it never
decides whether there was one.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from functools import lru_cache

from ..codex.command_outcomes import (
    FAILED,
    SUCCESS,
    CommandRun,
    SessionCommands,
    last_segment,
    simple_commands,
    without_redirects,
)

FIXED, UNVERIFIED, OPEN = "fixed", "unverified", "open"
MAX_FILES = 5
_QUOTE = 120

_READ_ONLY = frozenset({
    "cat", "head", "tail", "less", "more", "wc", "ls", "tree", "pwd", "stat", "file", "which",
    "where", "type", "whereis", "nl", "du", "df", "realpath", "readlink", "basename", "dirname",
    "echo", "printf", "true", "cd", "pushd", "popd", "test", "[", "rg", "grep", "egrep", "fgrep",
    "ag", "ack", "find", "fd", "findstr", "select-string", "sls", "get-content", "gc",
    "get-childitem", "gci", "dir", "get-item", "test-path", "get-location", "jq", "diff",
    "sort", "uniq", "cut", "column", "xxd", "od", "hexdump", "strings", "man", "printenv",
    "uname", "id", "whoami", "date", "lsof", "ps", "awk",
})
_READ_ONLY_SUBCOMMANDS = {
    "git": {"status", "log", "show", "diff", "rev-parse", "blame", "ls-files", "grep",
            "describe", "reflog", "shortlog", "branch", "remote"},
    "npm": {"ls", "list", "view", "info", "outdated", "why", "explain"},
    "pnpm": {"ls", "list", "view", "info", "outdated", "why"},
    "yarn": {"list", "info", "why", "outdated"},
    "pip": {"show", "list", "freeze"}, "pip3": {"show", "list", "freeze"},
    "cargo": {"tree", "metadata"}, "go": {"list", "env", "version", "doc"},
    "docker": {"ps", "images", "inspect", "logs"},
    "kubectl": {"get", "describe", "logs"},
}
_VERSION_FLAGS = frozenset({"--version", "-V", "version", "--help", "-h"})
_LISTS_ONLY = {"branch", "remote"}  # `git branch -a` looks; `git branch -D x` does not
_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint"})
MAX_CHANGE_LINES = 2  # a fix that adds this few lines is quoted in the memory
_COMMENT = re.compile(r"^\s*(#|//|--|/\*|\*|;)")
_SEPARATOR = re.compile(r"^[\W_]+$|^[=\-_*#~]{3,}.*[=\-_*#~]{3,}$")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure)\b")
_ERROR_START = re.compile(r"^(?:E\s{2,}|-{2,3} FAIL:|error\b|error\[|fatal\b|ERROR\b|FAILED\b|"
                          r"FAIL\b|panicked\b|thread '.*' panicked|npm ERR!|✗|×)", re.I)
_SECOND = re.compile(r"^(?:Error|ERROR):")
_BARE_VERDICT = re.compile(r"^(?:FAIL|FAILED|ERROR|error)\b\S*(?:\s+\S+){0,2}$")
_ERROR_WORD = re.compile(r"\b(error|failed|failure|exception|denied|not found|no such|"
                         r"cannot|can't|unable|invalid|refused|timed out|expired)\b", re.I)


@dataclass(frozen=True)
class FailureStory:
    command: str  # the command that failed (its first failing run)
    exit_code: int
    reason: str  # a line it printed, for the reader; "" when it printed nothing telling
    runs: int  # how many times it failed before it passed (or in all)
    status: str  # FIXED | UNVERIFIED | OPEN
    probe: bool  # a look-up, not a step of the work
    index: int  # where it first failed, in the items
    files: tuple[str, ...] = ()  # patched after the failure (before the pass, when it passed)
    helpers: tuple[str, ...] = ()  # commands that changed something before the pass
    passed: str = ""  # the command that then passed
    change: tuple[str, ...] = ()  # the lines a small fix added, quoted

    def text(self) -> str:
        """One line for the memory: the failure, why, and what fixed it."""
        cmd = f"`{_short(self.command)}`"
        times = f" {self.runs} times" if self.runs > 1 else ""
        if self.status == OPEN:
            why = f": {self.reason}" if self.reason else f" (exit code {self.exit_code})"
            return f"{cmd} failed{times}{why}; it did not pass later in the session"
        head = f"{cmd} failed{times}" + (f" ({self.reason})" if self.reason else "")
        files = ", ".join(self.files[:MAX_FILES]) + (
            " and others" if len(self.files) > MAX_FILES else "")
        if self.status == UNVERIFIED:
            return f"{head}; {files} changed afterwards, not re-run in the session"
        same = _norm(self.passed) == _norm(self.command)
        then = "it then passed" if same else f"`{_short(self.passed)}` then passed"
        if self.files:
            quoted = ", ".join(f"`{_short(c, 100)}`" for c in self.change)
            return f"{head}; fixed by changing {files}{': ' + quoted if quoted else ''}; {then}"
        if self.helpers:
            ran = ", ".join(f"`{_short(h)}`" for h in self.helpers)
            return f"{head}; fixed after running {ran}; {then}"
        return f"{head}; {then} with nothing changed in between"


def failure_stories(session: SessionCommands) -> list[FailureStory]:
    """Each command that failed, once, in the order it first failed, with what became of it."""
    runs = session.commands
    norms = [_norm(r.command) for r in runs]
    failed_at: dict[str, list[int]] = {}  # command → positions of its failed runs
    passed_at: dict[str, list[int]] = {}  # program key (or the command) → passing runs
    doers: list[int] = []  # passing runs that did more than look
    for k, r in enumerate(runs):
        if r.outcome == FAILED:
            failed_at.setdefault(norms[k], []).append(k)
        elif r.outcome == SUCCESS:
            passed_at.setdefault(_bucket(r.command), []).append(k)
            if not is_probe(r.command):
                doers.append(k)
    stories: list[FailureStory] = []
    for positions in failed_at.values():
        k = positions[0]
        run = runs[k]
        if run.exit_code is None:
            continue
        later = passed_at.get(_bucket(run.command), [])
        p = next((j for j in later[bisect_right(later, k):]
                  if resolves(run.command, runs[j].command)), None)
        fails = [j for j in positions if p is None or j < p]
        story = FailureStory(run.command, run.exit_code, reason(run.output), len(fails), OPEN,
                             is_probe(run.command), run.index)
        if p is not None:
            passed = runs[p]
            helpers: list[str] = []
            for j in reversed(doers[bisect_right(doers, k):bisect_left(doers, p)][-50:]):
                other = runs[j].command
                if not resolves(run.command, other) and not resolves(other, run.command):
                    helpers.insert(0, other)
                    if len(helpers) == 2:
                        break
            story = replace(story, status=FIXED, passed=passed.command, helpers=tuple(helpers),
                            files=_patched(session, run.index, passed.index),
                            change=_change(session, run.index, passed.index))
        else:
            after = _patched(session, runs[fails[-1]].index, None)
            if after:
                story = replace(story, status=UNVERIFIED, files=after)
        stories.append(story)
    return sorted(stories, key=lambda st: st.index)


def _bucket(command: str) -> str:
    """Where a passing run that could resolve `command` is filed: by program key."""
    key, _ = _key(command)
    return key or "\0" + _norm(command)


def _patched(session: SessionCommands, start: int, end: int | None) -> tuple[str, ...]:
    """The files patched (and applied) between two items."""
    return tuple(dict.fromkeys(f for p in session.patches
                               if p.applied and p.index > start and (end is None or p.index < end)
                               for f in p.files))


def _change(session: SessionCommands, start: int, end: int) -> tuple[str, ...]:
    """The lines the fix added, when it added only a few (comments and blank lines aside)."""
    added = [ln.strip() for p in session.patches if p.applied and start < p.index < end
             for ln in p.added if ln.strip() and not _COMMENT.match(ln)]
    return tuple(added) if len(added) <= MAX_CHANGE_LINES else ()


def changed_files(session: SessionCommands) -> list[str]:
    """Every file a patch that applied touched, in the order first touched."""
    return list(dict.fromkeys(f for p in session.patches if p.applied for f in p.files))


def checks(session: SessionCommands, limit: int = 2) -> list[CommandRun]:
    """The last commands that passed and did more than look (after the last change, when
    there was one): how the work was run or checked."""
    last_patch = max((p.index for p in session.patches if p.applied), default=-1)
    seen: dict[str, CommandRun] = {}
    for r in session.commands:
        if r.outcome == SUCCESS and r.index > last_patch and not is_probe(r.command):
            seen.pop(_norm(r.command), None)
            seen[_norm(r.command)] = r
    return list(seen.values())[-limit:]


def remembered(stories: list[FailureStory]) -> list[FailureStory]:
    """The stories worth a line in the memory: every one but a failed look-up."""
    return [s for s in stories if not s.probe]


@lru_cache(maxsize=8192)
def resolves(failed: str, later: str) -> bool:
    """Whether a pass of `later` shows that `failed` passes too."""
    if _norm(failed) == _norm(later):
        return True
    key_a, targets_a = _key(failed)
    key_b, targets_b = _key(later)
    if not key_a or key_a != key_b:
        return False
    return all(any(a.startswith(b) for a in targets_a) for b in targets_b)


@lru_cache(maxsize=8192)
def is_probe(command: str) -> bool:
    """A command that only looks: every part of it reads, lists, searches or prints, and
    nothing is written to a file."""
    for part in simple_commands(command):
        words, written = without_redirects(part)
        if written:
            return False
        if not words:
            continue
        name = re.split(r"[\\/]", words[0])[-1].lower().removesuffix(".exe")
        if len(words) == 2 and words[1] in _VERSION_FLAGS:
            continue  # `node --version`, `go version`
        if name in _READ_ONLY_SUBCOMMANDS:
            if len(words) < 2 or words[1] not in _READ_ONLY_SUBCOMMANDS[name]:
                return False
            if name == "git" and words[1] in _LISTS_ONLY and not all(
                    w in ("-a", "-r", "-v", "-vv", "--list", "--all") for w in words[2:]):
                return False
        elif name == "find" and _FIND_ACTIONS & set(words):
            return False
        elif name == "sed":
            if any(w.startswith(("-i", "--in-place")) for w in words) or "-n" not in words:
                return False
        elif name not in _READ_ONLY:
            return False
    return True


def reason(output: str, limit: int = 200) -> str:
    """The line of a failed command's output that says best what went wrong (with a second
    `Error:` line when the tool printed two, as terraform does: the second is often the
    cause)."""
    lines = [ln.strip().lstrip("│|>*╷╵ ").strip() for ln in output.splitlines()]
    lines = [ln for ln in lines if ln and not _SEPARATOR.match(ln)]
    if not lines:
        return ""
    if any(ln.startswith("Traceback (most recent call last)") for ln in lines):
        exc = [ln for ln in lines if _EXCEPTION.match(ln)]
        pick = exc[-1] if exc else lines[-1]
    else:
        # a bare verdict (`FAIL`, `FAILED`, `ERROR`) says less than the line that names what
        # failed (go test's `--- FAIL: TestX`, the `ok`/`FAIL` package lines around it)
        starts = sorted((ln for ln in lines if _ERROR_START.match(ln)),
                        key=lambda ln: _BARE_VERDICT.match(ln) is not None)
        pick = next(iter(starts), next((ln for ln in lines if _ERROR_WORD.search(ln)),
                                       lines[-1]))
        more = [ln for ln in starts[1:] if ln != pick and _SECOND.match(ln)]
        if more and _SECOND.match(pick):
            pick = f"{pick} / {more[0]}"
    return pick if len(pick) <= limit else pick[: limit - 1] + "…"


def _norm(command: str) -> str:
    return " ".join(command.split())


@lru_cache(maxsize=8192)
def _key(command: str) -> tuple[str, tuple[str, ...]]:
    """(program and subcommand words, the other non-flag words): `cargo test -p core` →
    ("cargo test", ("core",))."""
    words, _ = without_redirects(last_segment(command))
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]
    key: list[str] = []
    rest = words
    for k, w in enumerate(words):
        if w.startswith("-") or any(c in w for c in "/\\.=:") or (key and len(key) >= 3):
            rest = words[k:]
            break
        key.append(w)
    else:
        rest = []
    targets = tuple(w.removeprefix("./") for w in rest if not w.startswith("-"))
    return " ".join(key), targets


def _short(command: str, limit: int = _QUOTE) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
