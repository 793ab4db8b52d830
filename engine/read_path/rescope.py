"""Re-scope a block of the memory (issue 26, item 2): narrow a v1 task group to the projects
it was taught in, or widen it to every project, by rewriting its `applies_to: cwd=…` line the
way Codex's consolidation writes it (docs/codex-format.md "MEMORY.md and memory_summary.md").
The new MEMORY.md is returned; the facade makes it a proposal reviewed in Review like any
change (phase2/file_proposal.py), never a write of the live folder."""

from __future__ import annotations

import re

from ..errors import MemdeckError
from .scope_map import _GROUP, EVERY, ScopedBlock

_APPLIES = re.compile(r"^applies_to:\s*cwd=([^;]*)(.*)$")  # and what follows the cwds
WAYS = ("narrow", "widen")


class RescopeError(MemdeckError):
    """A re-scope that cannot be made: one line saying why."""


def rescoped(text: str, block: ScopedBlock, way: str) -> str:
    """MEMORY.md's `text` with the task group `block` (from the scope map of that text)
    narrowed to `block.taught_in` or widened to every project."""
    if block.path != "MEMORY.md" or block.kind != "task_group":
        raise RescopeError(f"{block.path}:{block.line} is a {block.kind.replace('_', ' ')}; "
                           "only a MEMORY.md task group has a scope Codex reads (applies_to)")
    if way == "narrow":
        if not block.taught_in:
            raise RescopeError(f"MEMORY.md:{block.line} ({block.title}) cites no session whose "
                               "project is known; narrow it by editing its applies_to line")
        cwd = ", ".join(block.taught_in)
    elif way == "widen":
        cwd = EVERY
    else:
        raise RescopeError(f"re-scope is {' or '.join(WAYS)}, not {way!r}")
    if [c.strip() for c in block.applies_to] == [c.strip() for c in cwd.split(", ")]:
        raise RescopeError(f"MEMORY.md:{block.line} ({block.title}) already applies to "
                           f"{'every project' if cwd == EVERY else cwd}")
    lines = text.split("\n")
    start = block.line - 1
    if not (0 <= start < len(lines) and _GROUP.match(lines[start])):
        raise RescopeError(f"MEMORY.md changed: line {block.line} is no longer a task group")
    end = next((i for i in range(start + 1, len(lines)) if _GROUP.match(lines[i])
                or lines[i].startswith("## ")), len(lines))
    for i in range(start + 1, end):
        m = _APPLIES.match(lines[i])
        if m:
            rest = m.group(2) or "; reuse_rule=tasks in these folders"
            lines[i] = f"applies_to: cwd={cwd}{rest}"
            break
    else:  # a group without one: it goes after its scope line, as Codex places it
        at = next((i + 1 for i in range(start + 1, end) if lines[i].startswith("scope:")),
                  start + 1)
        lines.insert(at, f"applies_to: cwd={cwd}; reuse_rule=tasks in these folders")
    return "\n".join(lines)
