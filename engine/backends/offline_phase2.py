"""The offline consolidation (`OfflinePhase2`, a Phase2Backend): a deterministic merge into
Codex's MEMORY.md and memory_summary.md layouts
(docs/codex-format.md "MEMORY.md and memory_summary.md"). Labelled heuristic, like the offline
phase 1.

Nothing is regenerated: every line already in MEMORY.md and memory_summary.md stays unless a
forget takes it out (offline_memory_md.py: MEMORY.md; offline_summary.py and
offline_summary_v2.py: the summary of each version). The ad-hoc notes added or changed since
the last consolidation (the workspace diff lists them, phase2/notes.py) are folded in as
Codex's consolidation would: remember notes become `[ad-hoc note]` lines, forget notes remove
the lines they match (offline_notes.py says how), and the note files stay. What each note did
is returned with the result, so the proposal can show which note caused which hunk.
"""

from __future__ import annotations

from pathlib import Path

from ..codex.memory_layout import SelectedMemory
from ..phase2.backend import Phase2Result
from ..phase2.notes import pending_notes, replaced_notes
from .offline_memory_md import (
    BLOCKS,
    Group,
    Task,
    merge_groups,
    merge_memory,
    parse_memory,
    rendered,
)
from .offline_notes import Folding
from .offline_phase1 import MODEL_NAME
from .offline_summary import SUMMARY_SECTIONS, memory_topics, merge_summary
from .offline_summary_v2 import RECENT_DAYS, V2_BUDGET, V2_HEADINGS, V2_LIMIT, merge_summary_v2

__all__ = ["BLOCKS", "RECENT_DAYS", "SUMMARY_SECTIONS", "V2_BUDGET", "V2_HEADINGS", "V2_LIMIT",
           "Group", "OfflinePhase2", "Task", "merge_memory", "merge_summary", "merge_summary_v2",
           "parse_memory"]


class OfflinePhase2:
    """Phase2Backend for the deterministic merge: no network, no prompt, no tokens."""

    name = "offline"

    def consolidate(self, workspace: Path, selected: list[SelectedMemory], now: float,
                    version: str) -> Phase2Result:
        summary = workspace / "memory_summary.md"
        notes = Folding(pending_notes(workspace), replaced_notes(workspace))
        # v2: the summary is the whole memory (docs/codex-format.md "Memory versions")
        if version == "v2":
            summary.write_text(merge_summary_v2(_read(summary), selected, notes),
                               encoding="utf-8")
            return Phase2Result(MODEL_NAME, notes=notes.effects())
        present = {p.stem for p in (workspace / "rollout_summaries").glob("*.md")}
        # read line by line and parsed once: a big MEMORY.md is not held whole beside its
        # lines, nor parsed twice (the index needs what it held before the merge)
        memory_md = workspace / "MEMORY.md"
        if memory_md.is_file():
            with open(memory_md, encoding="utf-8") as f:
                preamble, groups = parse_memory(f)
        else:
            preamble, groups = [], []
        topics = memory_topics(groups)
        cited = {s for g in groups for t in g.tasks for s in t.stems}
        new = {f"rollout_summaries/{m.file_stem}.md" for m in selected
               if m.file_stem not in cited}
        preamble, groups = merge_groups(preamble, groups, selected, present, notes)
        with open(memory_md, "w", encoding="utf-8") as f:  # the workspace's copy
            f.writelines(f"{line}\n" for line in rendered(preamble, groups))
        kept = memory_topics(groups)
        del preamble, groups
        summary.write_text(merge_summary(_read(summary) or "v1\n", "", now, notes=notes,
                                         previous_topics=topics, selected=selected, new=new,
                                         topics=kept),
                           encoding="utf-8")
        return Phase2Result(MODEL_NAME, notes=notes.effects())


def _read(p: Path) -> str:
    return p.read_text(encoding="utf-8") if p.is_file() else ""
