"""The lines of today's memory that come from one session (docs/architecture.md "The read
path", "Said vs remembered"; docs/codex-format.md "MEMORY.md and memory_summary.md",
"Rollout summary files"):

- `MEMORY.md`: the `## Task <n>:` sections whose `### rollout_summary_files` bullets name
  the session (its thread id or its summary file), and the lines of their group that belong
  to those tasks (`[Task n]` tags; untagged lines belong to every task of the group), as
  `memory_blocks.memory_md_block` decides for a trace;
- `memory_summary.md`: the bullets naming its thread or its summary file, and the v1 topic
  bullets that link to that file by shared keywords (`summary_md_block`);
- `rollout_summaries/<file>.md`: the file itself (its stage-1 row's name, or a file whose
  header names the thread).
Only reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from ..codex.memory_layout import rollout_summary_file_stem
from ..codex.pipeline_snapshot import Stage1Output
from .memory_blocks import SummaryRef, header_fields, memory_md_block, summary_md_block
from .turn_match import keyword_set

_TASK_HEADING = re.compile(r"^##\s+Task\s+\d+\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class FedLines:
    """A run of lines of a memory file that comes from the session."""

    file: str  # relative to the root
    lines: tuple[int, int]  # 1-based, inclusive
    text: str
    why: str  # how it is tied to the session
    counted: bool  # part of what the verdicts compare with

    @property
    def location(self) -> str:
        a, b = self.lines
        return f"{self.file}:{a}" if a == b else f"{self.file}:{a}-{b}"

    def to_json(self) -> FedLinesJSON:
        return {"file": self.file, "lines": list(self.lines), "location": self.location,
                "text": self.text, "why": self.why, "counted": self.counted}


class FedLinesJSON(TypedDict):
    file: str
    lines: list[int]
    location: str
    text: str
    why: str
    counted: bool


def read_memory_file(root: Path, rel: str) -> str | None:
    p = root / rel
    if not p.is_file() or p.is_symlink():
        return None
    try:
        return p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def rollout_summaries(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    folder = root / "rollout_summaries"
    if folder.is_dir():
        for f in sorted(folder.glob("*.md")):
            text = read_memory_file(root, f"rollout_summaries/{f.name}")
            if text is not None:
                out[f"rollout_summaries/{f.name}"] = text
    return out


def summary_files_of(thread_id: str | None, row: Stage1Output | None,
                     summaries: dict[str, str]) -> list[str]:
    """The rollout summary files of the session: the name its stage-1 row gives, and any
    file whose header names its thread."""
    out: list[str] = []
    if row is not None:
        stem = rollout_summary_file_stem(row.thread_id, row.source_updated_at, row.rollout_slug)
        if f"rollout_summaries/{stem}.md" in summaries:
            out.append(f"rollout_summaries/{stem}.md")
    if thread_id:
        out += [f for f, text in summaries.items()
                if f not in out and header_fields(text[:4096]).get("thread_id") == thread_id]
    return out


def names_session(ref: SummaryRef, thread_id: str | None, files: Sequence[str]) -> bool:
    return bool(thread_id and ref.thread_id == thread_id) or ref.file in files


def _runs(lines: Sequence[str], picked: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive 1-based line numbers as (first, last) runs."""
    runs: list[tuple[int, int]] = []
    for n in sorted(set(picked)):
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def piece(file: str, lines: Sequence[str], run: tuple[int, int], why: str,
           counted: bool = True) -> FedLines:
    a, b = run
    return FedLines(file, run, "\n".join(lines[a - 1:b]), why, counted)


def memory_md_pieces(text: str, thread_id: str | None, files: Sequence[str]) -> list[FedLines]:
    """The task sections of MEMORY.md that list the session, and the lines of their groups
    that belong to those tasks."""
    lines = text.splitlines()
    out: list[FedLines] = []
    tasks: list[tuple[int, int]] = []  # (section start, end), 1-based inclusive
    k = 0
    while k < len(lines):
        if _TASK_HEADING.match(lines[k].lstrip()):
            b = memory_md_block(lines, k + 1)
            if b.section_lines and any(names_session(r, thread_id, files) for r in b.refs):
                a, z = b.section_lines
                while z > a and not lines[z - 1].strip():
                    z -= 1
                tasks.append((a, z))
                out.append(piece("MEMORY.md", lines, (a, z),
                                  f"{b.section}: its rollout_summary_files name the session"))
                k = z
                continue
        k += 1
    if not tasks:
        return out
    in_task = {n for a, z in tasks for n in range(a, z + 1)}
    picked: list[int] = []
    groups = {memory_md_block(lines, a).group_lines for a, _ in tasks}
    for g in sorted(x for x in groups if x):
        for n in range(g[0], g[1] + 1):
            line = lines[n - 1]
            if n in in_task or not line.strip() or line.lstrip().startswith("#"):
                continue
            b = memory_md_block(lines, n)
            if b.kind == "group" and b.section and any(names_session(r, thread_id, files)
                                                        for r in b.refs):
                picked.append(n)
    for run in _runs(lines, picked):
        section = memory_md_block(lines, run[0]).section or "the group"
        out.append(piece("MEMORY.md", lines, run,
                          f"{section}: lines of the session's task"))
    return sorted(out, key=lambda f: f.lines)


def summary_md_pieces(text: str, thread_id: str | None, files: Sequence[str],
                      summaries: dict[str, str]) -> list[FedLines]:
    """Bullets of memory_summary.md naming the session's thread or summary file, and v1
    topic bullets linked to its summary file by shared keywords."""
    lines = text.splitlines()
    mine = set().union(*(keyword_set(summaries[f]) for f in files if f in summaries))
    out: list[FedLines] = []
    seen: set[tuple[int, int]] = set()
    for n, line in enumerate(lines, 1):
        s = line.lstrip()
        named = bool(thread_id and thread_id in line) or any(f in line for f in files)
        if not named and not (s.startswith(("- ", "* ")) and mine & keyword_set(line)):
            continue
        b = summary_md_block(lines, n, summaries)
        refs = [r for r in b.refs if names_session(r, thread_id, files)]
        if not named and not refs:
            continue
        run = b.section_lines or (n, n)
        if any(a <= n <= z for a, z in seen):
            continue
        seen.add(run)
        why = ("names the session" if named or any(r.line for r in refs) else
               "shares keywords with its rollout summary: "
               + ", ".join(refs[0].matched_keywords[:6]))
        out.append(piece("memory_summary.md", lines, run, why))
    return out


__all__ = ["FedLines", "memory_md_pieces", "names_session", "piece", "read_memory_file",
           "rollout_summaries", "summary_files_of", "summary_md_pieces"]
