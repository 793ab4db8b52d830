"""A proposal's changes as hunks that can be accepted one by one.

Hunks are difflib's grouped opcodes (git's diff for a big file: line_diff.py) with three
lines of context, the same hunks `memdeck diff` prints, numbered per file from 0. Applying a
subset takes each chosen hunk's new lines and keeps the old lines everywhere else. A hunk
names the ad-hoc notes behind it: those that added one of its `+` lines or removed one of
its `-` lines (phase2/notes.py). `note_changes` names the user's note files a proposal would
delete or change, which Review flags (notes are never deleted: docs/codex-format.md
"Extensions and notes").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ..line_diff import grouped
from .notes import Note, NoteEffect
from .paths import is_user_note

CONTEXT = 3


@dataclass(frozen=True)
class Hunk:
    path: str
    index: int
    header: str  # @@ -a,b +c,d @@
    old_range: tuple[int, int]  # 1-based first line, count
    new_range: tuple[int, int]
    lines: tuple[str, ...]  # with ' ', '-', '+' prefixes
    notes: tuple[Note, ...] = ()  # the ad-hoc notes that caused a line of it


def _read(p: Path) -> list[str]:
    if not p.is_file():
        return []
    return p.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)


def _groups(old: list[str], new: list[str]) -> list[list[tuple[str, int, int, int, int]]]:
    return grouped(old, new, CONTEXT)


def file_hunks(path: str, old: list[str], new: list[str]) -> list[Hunk]:
    out = []
    for i, group in enumerate(_groups(old, new)):
        a0, a1, b0, b1 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + x for x in old[i1:i2]]
            else:
                lines += ["-" + x for x in old[i1:i2]] + ["+" + x for x in new[j1:j2]]
        out.append(Hunk(path, i, f"@@ -{a0 + 1},{a1 - a0} +{b0 + 1},{b1 - b0} @@",
                        (a0 + 1, a1 - a0), (b0 + 1, b1 - b0), tuple(lines)))
    return out


def proposal_hunks(live: Path, ws: Path, files: list[dict[str, str]],
                   effects: Iterable[NoteEffect] = ()) -> list[Hunk]:
    out: list[Hunk] = []
    for f in files:
        out += file_hunks(f["path"], _read(live / f["path"]), _read(ws / f["path"]))
    return attribute(out, effects)


def attribute(hunks: list[Hunk], effects: Iterable[NoteEffect]) -> list[Hunk]:
    """Each hunk with the notes whose added lines it adds or whose removed lines it removes."""
    effects = list(effects)
    if not effects:
        return hunks
    out = []
    for h in hunks:
        plus = {x[1:].rstrip("\n") for x in h.lines if x.startswith("+")}
        minus = {x[1:].rstrip("\n") for x in h.lines if x.startswith("-")}
        notes = tuple(dict.fromkeys(
            e.note for e in effects
            if any(f == h.path and line in plus for f, line in e.added)
            or any(f == h.path and line in minus for f, line in e.removed)))
        out.append(replace(h, notes=notes) if notes else h)
    return out


def apply_hunks(old: list[str], new: list[str], chosen: set[int]) -> list[str]:
    """`old` with the chosen hunks of old -> new applied, nothing else."""
    result: list[str] = []
    pos = 0
    for index, group in enumerate(_groups(old, new)):
        if index not in chosen:
            continue
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                continue
            result += old[pos:i1]
            result += new[j1:j2]
            pos = i2
    return result + old[pos:]


def note_changes(files: Iterable[dict[str, str]]) -> list[tuple[str, str]]:
    """(path, "D" | "M") for each of the user's note files (any spelling of the path,
    phase2/paths.py `is_user_note`) that a proposal's changed files delete or modify."""
    return [(f["path"], f["change"]) for f in files
            if f.get("change") in ("D", "M") and is_user_note(f.get("path"))]
