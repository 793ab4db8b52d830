"""When a memory line drops out under Codex's pruning rule (docs/codex-format.md "Pruning").

Codex deletes a stage-1 row that is not `selected_for_phase2` once
`COALESCE(last_usage, source_updated_at)` is older than `max_unused_days`; the next phase 2
then drops its summary file and what was learned from it. A line rests on the rows of the
threads it came from:

- in `MEMORY.md`, a `## Task` section rests on the threads its `### rollout_summary_files`
  bullets name (`thread_id=…`); the other lines of a `# Task Group` block on all of the
  block's threads (docs/codex-format.md "MEMORY.md and memory_summary.md");
- in a rollout summary file, every line on the file's own `thread_id:` (docs/codex-format.md
  "Rollout summary files");
- elsewhere (a v2 `memory_summary.md`), a line that names `thread_id=…` on that thread.

The line lasts as long as the longest-lived of its rows: kept while one is selected for
phase 2, else until the latest of their prune dates.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..codex.pipeline_snapshot import Stage1Output

DAY = 86400
THREAD_REF = re.compile(r"thread_id\s*=\s*([0-9A-Za-z][0-9A-Za-z-]*)")
SUMMARY_THREAD = re.compile(r"^thread_id:\s*(\S+)\s*$")
KEPT = "kept while selected for phase 2"


@dataclass(frozen=True)
class DropOut:
    date: float | None  # when Codex's pruning may delete the last row the line rests on
    note: str  # "" when the rule does not apply to the line


def line_threads(rel: str, lines: Sequence[str]) -> list[tuple[str, ...]]:
    """The threads each line rests on (empty where none)."""
    name = rel.rsplit("/", 1)[-1]
    if rel.startswith("rollout_summaries/"):
        for line in lines[:10]:
            m = SUMMARY_THREAD.match(line)
            if m:
                return [(m.group(1),)] * len(lines)
        return [()] * len(lines)
    if name == "MEMORY.md":
        return _memory_md_threads(lines)
    return [tuple(THREAD_REF.findall(line)) for line in lines]


def _memory_md_threads(lines: Sequence[str]) -> list[tuple[str, ...]]:
    group_of: list[int] = []  # line -> its `# ` block, -1 before the first
    task_of: list[int] = []  # line -> its `## Task` section, -1 outside one
    group_threads: list[list[str]] = []
    task_threads: list[list[str]] = []
    group = task = -1
    for line in lines:
        if line.startswith("# "):
            group_threads.append([])
            group, task = len(group_threads) - 1, -1
        elif line.startswith("## "):
            task = -1
            if line.startswith("## Task") and group >= 0:
                task_threads.append([])
                task = len(task_threads) - 1
        group_of.append(group)
        task_of.append(task)
        if task >= 0:
            for tid in THREAD_REF.findall(line):
                if tid not in task_threads[task]:
                    task_threads[task].append(tid)
                if tid not in group_threads[group]:
                    group_threads[group].append(tid)
    return [tuple(task_threads[t]) if t >= 0 else tuple(group_threads[g]) if g >= 0 else ()
            for g, t in zip(group_of, task_of, strict=True)]


def drop_out(threads: Sequence[str], rows: Mapping[str, Stage1Output],
             max_unused_days: int, now: float) -> DropOut:
    if not threads:
        return DropOut(None, "")
    present = [rows[t] for t in threads if t in rows]
    if not present:
        return DropOut(None, "no raw memory left for it (pruned, forgotten or not extracted)")
    if any(r.selected_for_phase2 for r in present):
        return DropOut(None, KEPT)
    last = max(r.last_usage if r.last_usage is not None else r.source_updated_at
               for r in present)
    date = float(last + max_unused_days * DAY)
    day = time.strftime("%Y-%m-%d", time.gmtime(date))
    if date <= now:
        since = time.strftime("%Y-%m-%d", time.gmtime(last))
        return DropOut(date, f"unused since {since} (max_unused_days = {max_unused_days}): "
                             "drops out at the next pipeline run")
    return DropOut(date, f"drops out {day} unless cited or consolidated (max_unused_days = "
                         f"{max_unused_days})")
