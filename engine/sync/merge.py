"""The three-way merge a pull proposes (issue 26, item 5): the remote's shared state and this
machine's, against their common base, file by file.

- A file only one side changed takes that side (added, changed or deleted).
- A rollout summary both sides have is append-only: this machine's copy stays.
- `memory_summary.md`'s index (`## What's in Memory`) merges as a union: every entry of
  either side, once, under its `### <project>` block.
- Any other text is merged line by line (`git merge-file`). Where both sides changed the same
  lines, the merged file keeps this machine's lines and the region is a `Conflict` (both
  sides and the base), for the user to resolve in Review; no conflict marker is ever written
  into a memory file.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..phase2.conflicts import Conflict

INDEX = "## What's in Memory"
_MARK = 13  # marker size: `<<<<<<<<<<<<<` cannot be a line a person wrote by chance


@dataclass
class Merged:
    files: dict[str, bytes]
    conflicts: list[Conflict] = field(default_factory=list)
    taken: list[str] = field(default_factory=list)  # files that came from the remote


def merge_trees(base: Mapping[str, bytes], ours: Mapping[str, bytes],
                theirs: Mapping[str, bytes]) -> Merged:
    out = Merged({})
    for rel in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(rel), ours.get(rel), theirs.get(rel)
        if o == t or t == b:
            result = o
        elif o == b:
            result = t
            out.taken.append(rel)
        elif rel.startswith("rollout_summaries/"):
            result = o if o is not None else t
        elif o is None or t is None:  # deleted on one side, changed on the other
            result = o if o is not None else t
        else:
            result, conflicts = merge_text(rel, b or b"", o, t)
            out.conflicts += conflicts
            out.taken.append(rel)
        if result is not None:
            out.files[rel] = result
    return out


def merge_text(rel: str, base: bytes, ours: bytes, theirs: bytes
               ) -> tuple[bytes, list[Conflict]]:
    if rel == "memory_summary.md":
        b, o, t = (x.decode("utf-8", "replace") for x in (base, ours, theirs))
        (bh, bi), (oh, oi), (th, ti) = _split_index(b), _split_index(o), _split_index(t)
        head, conflicts = _merge_lines(rel, bh, oh, th)
        index = _union_index(oi, ti, bi)
        return (head + index).encode("utf-8"), conflicts
    text, conflicts = _merge_lines(rel, *(x.decode("utf-8", "replace")
                                          for x in (base, ours, theirs)))
    return text.encode("utf-8"), conflicts


def _split_index(text: str) -> tuple[str, str]:
    at = text.find(f"\n{INDEX}\n")
    return (text, "") if at < 0 else (text[:at + 1], text[at + 1:])


def _union_index(ours: str, theirs: str, base: str) -> str:
    """Every entry of either side once, under its `### <project>` / `#### <day>` block; an
    entry the remote removed from the base goes (its session was forgotten there)."""
    if not theirs:
        return ours
    if not ours:
        return theirs
    gone = {ln for ln in base.splitlines() if ln.startswith("- ")} - set(theirs.splitlines())
    lines = [ln for ln in ours.splitlines() if ln not in gone]
    have = set(lines)
    project: str | None = None
    day: str | None = None
    for ln in theirs.splitlines():
        if ln.startswith("### "):
            project, day = ln, None
            if ln not in lines:
                older = lines.index(OLDER) if OLDER in lines else len(lines)
                lines[older:older] = [ln, ""]
            continue
        if ln.startswith("#### "):
            day = ln
            start = lines.index(project) + 1 if project in lines else len(lines)
            end = _block_end(lines, start)
            if ln not in lines[start:end]:
                lines.insert(end, ln)
            continue
        if not ln.startswith("- ") or ln in have or ln.strip().lower() == NONE:
            continue
        start = lines.index(project) + 1 if project in lines else len(lines)
        end = _block_end(lines, start)
        if day is not None and day in lines[start:end]:
            start = lines.index(day, start) + 1
            end = start
            while end < len(lines) and lines[end].startswith("- "):
                end += 1
        lines.insert(end, ln)
        have.add(ln)
    out: list[str] = []
    for i, ln in enumerate(lines):  # a placeholder goes once its block has an entry
        if ln.strip().lower() == NONE and _block_has_entries(lines, i):
            continue
        out.append(ln)
    return "\n".join(out) + "\n"


OLDER = "### Older Memory Topics"
NONE = "- none yet"


def _block_end(lines: list[str], start: int) -> int:
    end = start
    while end < len(lines) and not lines[end].startswith("### ") and lines[end].strip():
        end += 1
    return end


def _block_has_entries(lines: list[str], i: int) -> bool:
    j = i
    while j > 0 and not lines[j - 1].startswith("### "):
        j -= 1
    return any(x.startswith("- ") and x.strip().lower() != NONE
               for x in lines[j:_block_end(lines, j)])


def _merge_lines(rel: str, base: str, ours: str, theirs: str) -> tuple[str, list[Conflict]]:
    with tempfile.TemporaryDirectory(prefix="memdeck-merge-") as d:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(d) / name
            p.write_text(text, encoding="utf-8")
            paths.append(str(p))
        r = subprocess.run(["git", "merge-file", "-p", "--diff3", f"--marker-size={_MARK}",
                            "-L", "ours", "-L", "base", "-L", "theirs", *paths],
                           capture_output=True, text=True, encoding="utf-8")
    if r.returncode < 0 or r.returncode > 127:
        raise RuntimeError(f"git merge-file failed on {rel}: {r.stderr.strip()}")
    return _resolve_markers(rel, r.stdout)


def _resolve_markers(rel: str, merged: str) -> tuple[str, list[Conflict]]:
    out: list[str] = []
    conflicts: list[Conflict] = []
    part: str | None = None
    sides: dict[str, list[str]] = {}
    for line in merged.splitlines(keepends=True):
        bare = line.rstrip("\n")
        if bare.startswith("<" * _MARK + " "):
            part, sides = "ours", {"ours": [], "base": [], "theirs": []}
        elif part and bare.startswith("|" * _MARK):
            part = "base"
        elif part and bare == "=" * _MARK:
            part = "theirs"
        elif part and bare.startswith(">" * _MARK + " "):
            conflicts.append(Conflict(rel, len(out), [x.rstrip("\n") for x in sides["ours"]],
                                      [x.rstrip("\n") for x in sides["theirs"]],
                                      [x.rstrip("\n") for x in sides["base"]]))
            out += sides["ours"]
            part = None
        elif part:
            sides[part].append(line)
        else:
            out.append(line)
    return "".join(out), conflicts


def resolve(text: str, conflict: Conflict, lines: list[str]) -> str:
    """`text` with the conflict's region (this machine's lines, as merged) replaced by
    `lines`."""
    parts = text.splitlines(keepends=True)
    end = conflict.at + len(conflict.ours)
    if [x.rstrip("\n") for x in parts[conflict.at:end]] != conflict.ours:
        raise ValueError(f"{conflict.path} changed where the conflict was")
    new = [ln + "\n" for ln in lines]
    return "".join(parts[:conflict.at] + new + parts[end:])
