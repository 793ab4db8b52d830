"""Line diffs that stay fast on a big file.

difflib compares every line with every other one it might match: fine for a memory file of a
few thousand lines, minutes for one of a million (a 50 MB MEMORY.md, issue 29). Above
`SMALL` lines the edit script comes from git's diff instead (its default, myers: git's
histogram took minutes on that rewrite) (`git diff --no-index
-U0`, in a temporary folder outside the home), turned into difflib's opcodes, so everything
built on them (unified diffs, hunks, line maps) reads the same either way.

Foundation module: imports nothing from the engine.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

SMALL = 5000  # lines (old and new together) below which difflib is used
BIG_BYTES = 1 << 20  # files (old and new together) whose unified diff git writes directly
Opcode = tuple[str, int, int, int, int]  # difflib's: tag, i1, i2, j1, j2

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


def git_env() -> dict[str, str]:
    return {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _write_lines(path: Path, lines: Sequence[str]) -> None:
    with open(path, "wb") as f:
        for line in lines:
            f.write(line.rstrip("\n").encode("utf-8", "surrogatepass") + b"\n")


def git_hunks(old: Sequence[str], new: Sequence[str], algorithm: str = "myers"
              ) -> list[tuple[int, int, int, int]] | None:
    """(old start, old count, new start, new count) per hunk of git's diff of the two texts
    (`algorithm`: git's default, myers, stays fast on a rewrite of a million lines, where
    histogram took minutes); None when git cannot say."""
    with tempfile.TemporaryDirectory(prefix="memdeck-diff-") as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        _write_lines(a, old)
        _write_lines(b, new)
        try:
            r = subprocess.run(["git", "diff", "--no-index", "--no-color", "--no-ext-diff",
                                f"--diff-algorithm={algorithm}", "-U0", "--text", "a", "b"],
                               cwd=tmp,
                               capture_output=True, timeout=600, env=git_env())
        except (OSError, subprocess.SubprocessError):
            return None
    if r.returncode not in (0, 1):
        return None
    return [(int(m[1]), 1 if m[2] is None else int(m[2]), int(m[3]),
             1 if m[4] is None else int(m[4])) for m in _HUNK.finditer(r.stdout)]


def git_unified_lines(old: Path, new: Path, a_name: str, b_name: str,
                      context: int = 3) -> Iterator[str] | None:
    """git's unified diff of two files, line by line as it runs (nothing held whole), its
    `---`/`+++` lines naming `a_name`/`b_name` and git's own header lines left out; None
    when git cannot run."""
    try:
        proc = subprocess.Popen(["git", "diff", "--no-index", "--no-color", "--no-ext-diff",
                                 "--diff-algorithm=myers", f"-U{context}", "--text", "--",
                                 str(old), str(new)], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=git_env())
    except OSError:
        return None

    def lines() -> Iterator[str]:
        assert proc.stdout is not None
        header = 0  # 0: git's own header lines; 1: `---` seen; 2: in the hunks
        try:
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace")
                if header == 0:
                    if line.startswith("--- "):
                        header = 1
                        yield f"--- {a_name}\n"
                elif header == 1:
                    header = 2
                    yield f"+++ {b_name}\n"
                elif not line.startswith("\\"):  # "\ No newline at end of file"
                    yield line
        finally:
            proc.stdout.close()
            proc.wait()
    return lines()


def _git_opcodes(n_old: int, n_new: int,
                 hunks: list[tuple[int, int, int, int]]) -> list[Opcode]:
    out: list[Opcode] = []
    i = j = 0
    for a, b, c, d in hunks:
        i1 = a - 1 if b else a  # git names the line before an insertion
        j1 = c - 1 if d else c
        if i1 > i:
            out.append(("equal", i, i1, j, j + (i1 - i)))
        tag = "replace" if b and d else "delete" if b else "insert"
        out.append((tag, i1, i1 + b, j1, j1 + d))
        i, j = i1 + b, j1 + d
    if i < n_old or j < n_new:
        out.append(("equal", i, n_old, j, n_new))
    return out


def opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    """difflib's `get_opcodes` for the two line lists; git's diff for big ones."""
    if len(old) + len(new) > SMALL:
        hunks = git_hunks(old, new)
        if hunks is not None:
            return _git_opcodes(len(old), len(new), hunks)
    return list(difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes())


class _Given(difflib.SequenceMatcher):
    """A SequenceMatcher that answers with opcodes computed elsewhere."""

    def __init__(self, codes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self._codes = codes

    def get_opcodes(self) -> list[Opcode]:  # type: ignore[override]
        return list(self._codes)


def grouped(old: Sequence[str], new: Sequence[str], context: int = 3) -> list[list[Opcode]]:
    """difflib's `get_grouped_opcodes`: the changes with `context` lines around each."""
    codes = opcodes(old, new)
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    return list(_Given(codes).get_grouped_opcodes(context))


def _range(start: int, stop: int) -> str:
    """A unified diff's range, as difflib writes it."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def unified(old: Sequence[str], new: Sequence[str], a_name: str, b_name: str,
            context: int = 3) -> Iterator[str]:
    """`difflib.unified_diff(old, new, a_name, b_name)` (lines with their line ends)."""
    started = False
    for group in grouped(old, new, context):
        if not any(tag != "equal" for tag, *_ in group):
            continue
        if not started:
            started = True
            yield f"--- {a_name}\n"
            yield f"+++ {b_name}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in old[i1:i2]:
                    yield " " + line
                continue
            if tag in ("replace", "delete"):
                for line in old[i1:i2]:
                    yield "-" + line
            if tag in ("replace", "insert"):
                for line in new[j1:j2]:
                    yield "+" + line
