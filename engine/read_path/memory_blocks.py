"""The block a memory line belongs to, and the rollout summary files it names
(docs/codex-format.md "MEMORY.md and memory_summary.md", "Rollout summary files").

- `MEMORY.md`: the `# Task Group:` block and the `## Task <n>:` section holding the line. A
  line of a group's `## User preferences` / `## Reusable knowledge` / `## Failures …` section
  belongs to the tasks its `[Task n]` tags name (all the group's tasks without a tag). The
  summary files are the `- rollout_summaries/<file>.md (cwd=…, rollout_path=…, updated_at=…,
  thread_id=…)` bullets of those tasks; any field may be missing.
- `memory_summary.md`: a bullet naming `rollout_summaries/<file>` (v2: `- rollout_summaries/<f>
  — <sentence>; thread_id=<id>`) links to that file; a v1 topic bullet (`- <topic>: keyword,
  …` with its `desc:` / `learnings:` lines) links to the summary files sharing its keywords,
  those of its `### <cwd>` scope first.
- `rollout_summaries/<file>.md`: the file itself; its header gives the fields.
- `raw_memories.md`: the `## Thread` block with its `rollout_summary_file:` line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from .turn_match import keyword_set

FIELDS = ("cwd", "rollout_path", "updated_at", "thread_id")
_REF = re.compile(r"rollout_summaries/([^\s(),;`]+?\.md)")
_FIELD = re.compile(r"\b(cwd|rollout_path|updated_at|thread_id|git_branch)\s*[=:]\s*")
_TASK = re.compile(r"^##\s+Task\s+(\d+)\s*:", re.IGNORECASE)
_TAG = re.compile(r"\[(Tasks?\s+[\d,\s&andTask]+)\]", re.IGNORECASE)
MAX_TOPIC_MATCHES = 3


@dataclass(frozen=True)
class SummaryRef:
    """A rollout summary file a block names, with what the bullet says of it."""

    file: str  # relative to the root: rollout_summaries/<stem>.md
    line: int | None  # the bullet's line in the traced file; None when found by keywords
    cwd: str | None = None
    rollout_path: str | None = None
    updated_at: str | None = None
    thread_id: str | None = None
    matched_keywords: tuple[str, ...] = ()  # v1 summary topics: why this file

    def to_json(self) -> SummaryRefJSON:
        return {"file": self.file, "line": self.line, "cwd": self.cwd,
                "rollout_path": self.rollout_path, "updated_at": self.updated_at,
                "thread_id": self.thread_id, "matched_keywords": list(self.matched_keywords)}


class SummaryRefJSON(TypedDict):
    file: str
    line: int | None
    cwd: str | None
    rollout_path: str | None
    updated_at: str | None
    thread_id: str | None
    matched_keywords: list[str]


@dataclass(frozen=True)
class MemoryBlock:
    kind: str  # task | group | topic | rollout_summary | thread | file
    group: str | None  # `# Task Group:` title (MEMORY.md), `###` scope (summary)
    group_lines: tuple[int, int] | None  # 1-based, inclusive
    section: str | None  # `## Task <n>: …`, or the heading the line is under
    section_lines: tuple[int, int] | None
    text: str  # the section's text (what a short line is matched with)
    refs: tuple[SummaryRef, ...]
    note: str = ""

    def to_json(self) -> MemoryBlockJSON:
        return {"kind": self.kind, "group": self.group,
                "group_lines": list(self.group_lines) if self.group_lines else None,
                "section": self.section,
                "section_lines": list(self.section_lines) if self.section_lines else None,
                "refs": [r.to_json() for r in self.refs], "note": self.note}


class MemoryBlockJSON(TypedDict):
    kind: str
    group: str | None
    group_lines: list[int] | None
    section: str | None
    section_lines: list[int] | None
    refs: list[SummaryRefJSON]
    note: str


def parse_fields(text: str) -> dict[str, str]:
    """`key=value` pairs of a bullet, values running to the next key (a Windows path or a
    cwd holding `, ` stays whole); a trailing `)` or `,` is not part of a value."""
    out: dict[str, str] = {}
    found = list(_FIELD.finditer(text))
    for k, m in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(text)
        value = text[m.end():end].strip().rstrip(",;").strip()
        if k + 1 == len(found):
            value = value.rstrip(")").strip() if "(" in text[:m.start()] else value
        out.setdefault(m.group(1), value)
    return {k: v for k, v in out.items() if v}


def parse_ref(line: str, line_no: int | None) -> SummaryRef | None:
    """A bullet naming a rollout summary file, as MEMORY.md, the v2 summary and
    raw_memories.md write it; None when the line names none."""
    m = _REF.search(line)
    if m is None:
        m2 = re.search(r"rollout_summary_file:\s*(\S+\.md)", line)
        if m2 is None:
            return None
        return SummaryRef(f"rollout_summaries/{m2.group(1)}", line_no)
    f = parse_fields(line[m.end():])
    return SummaryRef(f"rollout_summaries/{m.group(1)}", line_no, f.get("cwd"),
                      f.get("rollout_path"), f.get("updated_at"), f.get("thread_id"))


def header_fields(text: str) -> dict[str, str]:
    """The `key: value` header of a rollout summary file (up to its first empty line)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if sep and key.strip() in (*FIELDS, "git_branch") and value.strip():
            out[key.strip()] = value.strip()
    return out


def _heading(line: str) -> int:
    s = line.lstrip()
    n = len(s) - len(s.lstrip("#"))
    return n if 0 < n <= 6 and s[n:n + 1] in (" ", "") else 0


def _span(lines: Sequence[str], i: int, level: int) -> tuple[int, int]:
    """0-based [start, end) of the heading at or above `i` of exactly `level`, up to the next
    heading of that level or higher; (-1, -1) when there is none."""
    start = next((k for k in range(i, -1, -1) if 0 < _heading(lines[k]) <= level), -1)
    if start < 0 or _heading(lines[start]) != level:
        return -1, -1
    end = next((k for k in range(start + 1, len(lines)) if 0 < _heading(lines[k]) <= level),
               len(lines))
    return start, end


def _refs_in(lines: Sequence[str], start: int, end: int) -> list[SummaryRef]:
    return [r for k in range(start, end) if (r := parse_ref(lines[k], k + 1)) is not None]


def _title(line: str) -> str:
    return line.lstrip("#").strip()


def memory_md_block(lines: Sequence[str], line: int) -> MemoryBlock:
    i = line - 1
    g0, g1 = _span(lines, i, 1)
    if g0 < 0:
        return MemoryBlock("file", None, None, None, None, "", (),
                           "outside any `# Task Group:` block")
    group, grange = _title(lines[g0]), (g0 + 1, g1)
    tasks: dict[int, tuple[int, int]] = {}  # task number -> its section
    for k in range(g0, g1):
        m = _TASK.match(lines[k].lstrip())
        if m:
            tasks.setdefault(int(m.group(1)), _span(lines, k, 2))
    s0, s1 = _span(lines, i, 2)
    m = _TASK.match(lines[s0].lstrip()) if s0 >= 0 else None
    if m is not None:
        return MemoryBlock("task", group, grange, _title(lines[s0]), (s0 + 1, s1),
                           "\n".join(lines[s0:s1]), tuple(_refs_in(lines, s0, s1)))
    named = sorted({int(n) for tag in _TAG.findall(lines[i]) for n in re.findall(r"\d+", tag)})
    chosen = [tasks[n] for n in named if n in tasks] or sorted(tasks.values())
    refs: dict[str, SummaryRef] = {}
    for a, b in chosen:
        for r in _refs_in(lines, a, b):
            refs.setdefault(r.file, r)
    text = "\n".join("\n".join(lines[a:b]) for a, b in chosen)
    note = (f"the line's tag names Task {', '.join(map(str, named))}" if named and chosen
            else "no [Task n] tag: every task of the group")
    if s0 < 0 or s0 < g0:  # the group's own lines (scope, applies_to)
        return MemoryBlock("group", group, grange, None, None, text, tuple(refs.values()),
                           "the group's header: every task of the group")
    return MemoryBlock("group", group, grange, _title(lines[s0]), (s0 + 1, s1), text,
                       tuple(refs.values()), note)


def summary_md_block(lines: Sequence[str], line: int,
                     summaries: Mapping[str, str]) -> MemoryBlock:
    """`summaries`: rollout summary file (relative path) -> its text, for v1 topics."""
    i = line - 1
    s0, s1 = _span(lines, i, 3)
    scope = _title(lines[s0]) if s0 >= 0 else None
    # the bullet holding the line: a `- ` line at or above it, with its indented lines
    b0 = next((k for k in range(i, -1, -1)
               if lines[k].lstrip().startswith(("- ", "* ")) or _heading(lines[k])
               or not lines[k].strip()), i)
    if not lines[b0].lstrip().startswith(("- ", "* ")):
        b0 = i
    b1 = b0 + 1
    while b1 < len(lines) and lines[b1].startswith((" ", "\t")) and lines[b1].strip():
        b1 += 1
    bullet = "\n".join(lines[b0:max(b1, i + 1)])
    ref = parse_ref(lines[b0], b0 + 1) or parse_ref(lines[i], line)
    srange = (s0 + 1, s1) if s0 >= 0 else None
    if ref is not None:
        return MemoryBlock("topic", scope, srange, _title(lines[b0]) or None,
                           (b0 + 1, max(b1, i + 1)), bullet, (ref,))
    if _heading(lines[i]) or not lines[b0].lstrip().startswith(("- ", "* ")):
        return MemoryBlock("file", scope, srange, None, None, "", (),
                           "not a topic bullet: it names no rollout summary file")
    words = keyword_set(bullet)
    scored = []
    for f, text in summaries.items():
        shared = tuple(sorted(words & keyword_set(text)))
        if not shared:
            continue
        in_scope = bool(scope) and header_fields(text).get("cwd") == scope
        scored.append((not in_scope, -len(shared), f, shared))
    scored.sort()
    if any(not out for out, *_ in scored):  # files of the topic's own scope: only those
        scored = [s for s in scored if not s[0]]
    else:
        scored = [s for s in scored if len(s[3]) >= 2]
    refs = tuple(SummaryRef(f, None, matched_keywords=shared)
                 for _, _, f, shared in scored[:MAX_TOPIC_MATCHES])
    return MemoryBlock("topic", scope, srange, lines[b0].strip(), (b0 + 1, max(b1, i + 1)),
                       bullet, refs,
                       "summary files sharing the topic's keywords" if refs
                       else "no rollout summary file shares its keywords")


def rollout_summary_block(path: str, text: str) -> MemoryBlock:
    h = header_fields(text)
    n = len(text.splitlines())
    return MemoryBlock("rollout_summary", None, None, path, (1, n), text,
                       (SummaryRef(path, None, h.get("cwd"), h.get("rollout_path"),
                                   h.get("updated_at"), h.get("thread_id")),),
                       "the rollout summary file itself")


def raw_memories_block(lines: Sequence[str], line: int) -> MemoryBlock:
    s0, s1 = _span(lines, line - 1, 2)
    if s0 < 0:
        return MemoryBlock("file", None, None, None, None, "", (), "outside any thread block")
    body = "\n".join(lines[s0:s1])
    f = header_fields("\n".join(lines[s0 + 1:s1]))
    tid = re.search(r"`([^`]+)`", lines[s0])
    refs = tuple(SummaryRef(r.file, r.line, f.get("cwd"), f.get("rollout_path"),
                            f.get("updated_at"), tid.group(1) if tid else None)
                 for r in _refs_in(lines, s0, s1))
    return MemoryBlock("thread", None, None, _title(lines[s0]), (s0 + 1, s1), body, refs)


def block_of(path: str, text: str, line: int, summaries: Mapping[str, str]) -> MemoryBlock:
    """The block of `line` (1-based, in range) of the memory file `path` holding `text`."""
    lines = text.splitlines()
    if path == "MEMORY.md":
        return memory_md_block(lines, line)
    if path == "memory_summary.md":
        return summary_md_block(lines, line, summaries)
    if path.startswith("rollout_summaries/"):
        return rollout_summary_block(path, text)
    if path == "raw_memories.md":
        return raw_memories_block(lines, line)
    ref = parse_ref(lines[line - 1], line)
    return MemoryBlock("file", None, None, None, None, "", (ref,) if ref else (),
                       "" if ref else "this file has no task blocks")
