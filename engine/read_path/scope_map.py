"""The scope map (issue 26, item 1): for every block of the memory, the projects it applies to
and the projects it was taught in, and whether it leaks from one project into another.

A block is a `MEMORY.md` task group (v1), a section of `memory_summary.md` (`## User
preferences`, `## General Tips`, `## User Profile`; an index `### <cwd>` block), or a rollout
summary. What it applies to is what Codex is told: a group's `applies_to: cwd=…`, an index
block's `### <cwd>`, a rollout summary's `cwd:`; the first three summary sections are
injected into every session, so they apply to every project (`*`). What it was taught in is
the cwds of the sessions it cites (their rollout summaries' `cwd`).

A block leaks when its text names a path inside another known project than the ones it
applies to or was taught in, or when it is shown to every project while each of its lines
was taught in one project only (the line says which; a tip that names its project in its
text does not count: the reader sees whose it is).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypedDict

from .memory_blocks import _REF, header_fields, parse_fields

EVERY = "*"  # applies to every project: injected into every session
SUMMARY_SECTIONS = ("## User Profile", "## User preferences", "## General Tips")
_GROUP = re.compile(r"^# Task Group:\s*(.*)$")
_APPLIES = re.compile(r"^applies_to:\s*cwd=([^;]*)")
_PATH = re.compile(r"(?<![\w.])(?:/[\w.@+-]+){2,}|[A-Za-z]:\\[\w.\\ -]+")


class ScopedBlockJSON(TypedDict):
    path: str
    line: int
    title: str
    kind: str
    applies_to: list[str]
    taught_in: list[str]
    leaks: list[str]


@dataclass
class ScopedBlock:
    path: str  # relative to the memory root
    line: int  # 1-based, the block's first line
    title: str
    kind: str  # task_group | summary_section | index_scope | rollout_summary
    applies_to: list[str] = field(default_factory=list)  # cwds, or [EVERY]
    taught_in: list[str] = field(default_factory=list)  # cwds of the sessions it cites
    leaks: list[str] = field(default_factory=list)  # one line each
    body: list[str] = field(default_factory=list, repr=False)  # its lines, to look for paths

    def to_json(self) -> ScopedBlockJSON:
        return {"path": self.path, "line": self.line, "title": self.title, "kind": self.kind,
                "applies_to": self.applies_to, "taught_in": self.taught_in,
                "leaks": self.leaks}


def _name(cwd: str) -> str:
    return re.split(r"[\\/]", cwd.rstrip("/\\"))[-1] or cwd


def _cwds_cited(lines: Iterable[str], summary_cwd: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    for ln in lines:
        if not _REF.search(ln):
            continue
        stated = parse_fields(ln).get("cwd")  # a MEMORY.md bullet says its cwd
        cwds = [stated] if stated else [summary_cwd.get(f"rollout_summaries/{m.group(1)}")
                                        for m in _REF.finditer(ln)]
        out += [c for c in cwds if c and c not in out]
    return out


def _memory_md(text: str, summary_cwd: Mapping[str, str]) -> list[ScopedBlock]:
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if _GROUP.match(ln)]
    out = []
    for k, i in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        body = lines[i:end]
        applies = [c.strip() for ln in body[:6] if (m := _APPLIES.match(ln))
                   for c in m.group(1).split(", ")]  # a re-scope lists several
        head = _GROUP.match(lines[i])
        title = head.group(1).strip() if head else lines[i]
        block = ScopedBlock("MEMORY.md", i + 1, title, "task_group",
                            [a for a in applies if a] or [EVERY],
                            _cwds_cited(body, summary_cwd), body=body)
        out.append(block)
    return out


def _summary_md(text: str, summary_cwd: Mapping[str, str]) -> list[ScopedBlock]:
    lines = text.splitlines()
    out: list[ScopedBlock] = []
    current: ScopedBlock | None = None
    body: list[tuple[int, str]] = []

    def close() -> None:
        if current is None:
            return
        current.taught_in = _cwds_cited((ln for _, ln in body), summary_cwd)
        current.body = [ln for _, ln in body]
        if current.applies_to == [EVERY]:
            current.leaks += _one_project_lines(body, summary_cwd)
        out.append(current)

    for i, ln in enumerate(lines):
        head = ln.strip()
        if head.startswith("## ") or head.startswith("### "):
            close()
            current, body = None, []
            if head in SUMMARY_SECTIONS:
                current = ScopedBlock("memory_summary.md", i + 1, head[3:], "summary_section",
                                      [EVERY])
            elif head.startswith("### ") and head != "### Older Memory Topics":
                cwd = head[4:].strip()
                current = ScopedBlock("memory_summary.md", i + 1, cwd, "index_scope", [cwd])
        elif current is not None:
            body.append((i + 1, ln))
    close()
    return out


def _one_project_lines(body: list[tuple[int, str]],
                       summary_cwd: Mapping[str, str]) -> list[str]:
    """Lines of a section every session gets, each taught in one project only and not
    saying so."""
    out = []
    for no, ln in body:
        if not ln.startswith("- "):
            continue
        cwds = _cwds_cited([ln], summary_cwd)
        if len(cwds) == 1 and _name(cwds[0]).casefold() not in ln.casefold():
            out.append(f"line {no}: taught only in {_name(cwds[0])} ({cwds[0]}), shown to "
                       "every project")
    return out


def _path_leaks(block: ScopedBlock, known: set[str]) -> list[str]:
    """Paths the block's text names inside another known project than its own."""
    own = [c for c in block.applies_to + block.taught_in if c != EVERY]
    found: list[str] = []
    leaks: list[str] = []
    for ln in block.body:
        if _REF.search(ln) or ln.lstrip().startswith(("applies_to:", "scope:", "cwd:",
                                                       "rollout_path:")):
            continue  # the block's own references name its cwds, as they must
        for m in _PATH.finditer(ln):
            path = m.group(0)
            other = next((c for c in known if c not in own and _under(path, c)
                          and not any(_under(path, o) for o in own)), None)
            if other and path not in found:
                found.append(path)
                leaks.append(f"names {path}, inside {_name(other)} ({other})")
    return leaks


def _under(path: str, cwd: str) -> bool:
    a, b = path.replace("\\", "/").rstrip("/"), cwd.replace("\\", "/").rstrip("/")
    return bool(b) and (a == b or a.startswith(b + "/"))


def scope_map(files: Mapping[str, str], projects: Iterable[str] = ()) -> list[ScopedBlock]:
    """Every block of the memory folder's `files` (root-relative path → text), with its
    scope; `projects`: cwds of the home's sessions (a path inside one of them that is not
    the block's own is a leak)."""
    summaries = {p: t for p, t in files.items() if p.startswith("rollout_summaries/")}
    summary_cwd = {p: header_fields(t).get("cwd", "") for p, t in summaries.items()}
    known = {c for c in [*projects, *summary_cwd.values()] if c}
    out: list[ScopedBlock] = []
    if "MEMORY.md" in files:
        out += _memory_md(files["MEMORY.md"], summary_cwd)
    if "memory_summary.md" in files:
        out += _summary_md(files["memory_summary.md"], summary_cwd)
    for p in sorted(summaries):
        cwd = summary_cwd[p]
        title = next((ln[2:].strip() for ln in summaries[p].splitlines()
                      if ln.startswith("# ")), p)
        out.append(ScopedBlock(p, 1, title, "rollout_summary", [cwd] if cwd else [EVERY],
                               [cwd] if cwd else [], body=summaries[p].splitlines()))
    for b in out:
        b.leaks = _path_leaks(b, known) + b.leaks
    return out
