"""The offline consolidation (`OfflinePhase2`, a Phase2Backend): a deterministic merge into
Codex's MEMORY.md and memory_summary.md layouts
(docs/codex-format.md "MEMORY.md and memory_summary.md"). Labelled heuristic, like the offline
phase 1.

MEMORY.md is merged, not regenerated: every existing task group, task and bullet is kept as
written (edits in it are authoritative); a task whose rollout summaries are all gone is
removed with the bullets that cite only it (forgetting); a selected memory no task cites yet
becomes a new task in its project's group. memory_summary.md keeps the lines of its first
three sections and is given a fresh "What's in Memory" index of MEMORY.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from ..codex.memory_layout import SelectedMemory
from ..formatting import rfc3339_utc
from ..phase2.backend import Phase2Result
from .offline_phase1 import MODEL_NAME

_REF = re.compile(r"rollout_summaries/([^\s)]+)\.md")
_TASK_CITE = re.compile(r"\[Task (\d+)\]")
BLOCKS = ("## User preferences", "## Reusable knowledge", "## Failures and how to do differently")
SUMMARY_SECTIONS = ("## User Profile", "## User preferences", "## General Tips")


@dataclass
class Task:
    lines: list[str]  # the `## Task n: …` line and everything up to the next section

    @property
    def stems(self) -> set[str]:
        return {m.group(1) for line in self.lines for m in _REF.finditer(line)}


@dataclass
class Group:
    head: list[str]  # `# Task Group: …`, scope, applies_to, anything before the first task
    tasks: list[Task] = field(default_factory=list)
    blocks: dict[str, list[str]] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return self.head[0].removeprefix("# Task Group:").strip()


def parse_memory(text: str) -> tuple[list[str], list[Group]]:
    preamble: list[str] = []
    groups: list[Group] = []
    section: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("# Task Group:"):
            groups.append(Group([line]))
            section = groups[-1].head
        elif not groups:
            preamble.append(line)
            continue
        elif line.startswith("## Task "):
            groups[-1].tasks.append(Task([line]))
            section = groups[-1].tasks[-1].lines
        elif line.strip() in BLOCKS:
            section = groups[-1].blocks.setdefault(line.strip(), [])
        elif section is not None:
            section.append(line)
    return preamble, groups


def _frontmatter(raw: str) -> dict[str, str]:
    m = re.match(r"---\n(.*?)\n---", raw, re.S)
    out = {}
    for line in (m.group(1).splitlines() if m else []):
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def _bullets(raw: str, prefix: str) -> list[str]:
    return [ln.split(":", 1)[1].strip() for ln in raw.splitlines()
            if ln.startswith(f"- {prefix}:")]


def _new_task(m: SelectedMemory, n: int) -> tuple[Task, dict[str, list[str]]]:
    fm = _frontmatter(m.raw_memory)
    title = fm.get("description") or fm.get("task") or m.file_stem
    ref = (f"- rollout_summaries/{m.file_stem}.md (cwd={m.cwd}, rollout_path="
           f"{m.rollout_path}, updated_at={rfc3339_utc(m.source_updated_at)}, "
           f"thread_id={m.thread_id})")
    keywords = fm.get("keywords") or title
    task = Task([f"## Task {n}: {title}, {fm.get('task_outcome', 'uncertain')}",
                 "### rollout_summary_files", ref, "### keywords", f"- {keywords}", ""])
    blocks = {
        BLOCKS[0]: [f"- {p} [Task {n}]" for p in _bullets(m.raw_memory, "user preference")],
        BLOCKS[1]: [f"- {p} [Task {n}]" for p in _bullets(m.raw_memory, "fact")],
        BLOCKS[2]: [f"- {p} [Task {n}]" for p in _bullets(m.raw_memory, "failure")],
    }
    return task, blocks


def _forget(group: Group, present: set[str]) -> None:
    """Drop tasks whose summaries are all gone, and bullets citing only them; renumber."""
    renumber: dict[int, int] = {}
    kept: list[Task] = []
    for i, task in enumerate(group.tasks, 1):
        if task.stems and not (task.stems & present):
            continue
        kept.append(task)
        renumber[i] = len(kept)
    for i, task in enumerate(kept, 1):
        task.lines[0] = re.sub(r"^## Task \d+", f"## Task {i}", task.lines[0])
    group.tasks = kept
    for name, lines in group.blocks.items():
        out = []
        for line in lines:
            cited = [int(n) for n in _TASK_CITE.findall(line)]
            if cited and not any(n in renumber for n in cited):
                continue  # supported only by forgotten tasks
            out.append(_TASK_CITE.sub(lambda mt: f"[Task {renumber.get(int(mt.group(1)), 0)}]"
                                      if int(mt.group(1)) in renumber else "", line).rstrip())
        group.blocks[name] = out


def merge_memory(text: str, selected: list[SelectedMemory], present: set[str]) -> str:
    preamble, groups = parse_memory(text)
    for g in groups:
        _forget(g, present)
    groups = [g for g in groups if g.tasks or any(x.strip() for b in g.blocks.values()
                                                  for x in b)]
    cited = {s for g in groups for t in g.tasks for s in t.stems}
    for m in selected:
        if m.file_stem in cited:
            continue
        project = PurePosixPath(m.cwd).name if m.cwd else "unknown"
        group = next((g for g in groups if g.title.split(" (")[0] == project
                      or f"cwd={m.cwd};" in "\n".join(g.head)), None)
        if group is None:
            group = Group([f"# Task Group: {project}", f"scope: work in {m.cwd or project}",
                           f"applies_to: cwd={m.cwd}; reuse_rule=tasks in this folder", ""])
            groups.append(group)
        task, blocks = _new_task(m, len(group.tasks) + 1)
        group.tasks.append(task)
        for name, lines in blocks.items():
            existing = group.blocks.setdefault(name, [])
            if lines:  # a "none recorded" placeholder gives way to real bullets
                existing[:] = [x for x in existing if x.strip()
                               and x.strip().lower() != "- none recorded"] + lines
    out = list(preamble)
    for g in groups:
        out += g.head
        for t in g.tasks:
            out += t.lines
        for name in BLOCKS:
            lines = [x for x in g.blocks.get(name, []) if x.strip()]
            out += [name, *(lines or ["- none recorded"]), ""]
    return "\n".join(out).rstrip() + "\n"


def merge_summary(text: str, memory_md: str, now: float) -> str:
    """Keep the first three sections' lines; rebuild the index of what is in MEMORY.md."""
    kept: dict[str, list[str]] = {h: [] for h in SUMMARY_SECTIONS}
    current = None
    for line in text.splitlines()[1:]:
        if line.startswith("## "):
            current = line.strip() if line.strip() in kept else None
        elif current and line.strip():
            kept[current].append(line)
    _, groups = parse_memory(memory_md)
    day = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")
    out = ["v1", ""]
    for h in SUMMARY_SECTIONS:
        out += [h, *(kept[h] or ["- none yet"]), ""]
    out.append("## What's in Memory")
    for g in groups:
        cwd = next((ln.split("cwd=", 1)[1].split(";", 1)[0] for ln in g.head
                    if ln.startswith("applies_to:") and "cwd=" in ln), g.title)
        out += [f"### {cwd}", f"#### {day}"]
        for t in g.tasks:
            title = t.lines[0].split(":", 1)[1].strip() if ":" in t.lines[0] else t.lines[0]
            kw = next((t.lines[i + 1].lstrip("- ") for i, ln in enumerate(t.lines[:-1])
                       if ln.strip() == "### keywords"), "")
            out.append(f"- {title}: {kw}")
    out += ["", "### Older Memory Topics", "- none yet", ""]
    return "\n".join(out)


# -- memory V2: the summary is the whole memory (docs/codex-format.md "Memory versions") -----
V2_HEADINGS = ("## User Profile", "## User preferences", "## General Tips", "## What's in Memory")
V2_LIMIT = 10_000  # Codex requires the file to stay under this many bytes
V2_BUDGET = 9_600  # what the offline merge aims for, leaving room for hand edits
RECENT_DAYS = 3  # the newest days get their own `#### <date>` blocks
_SOURCE = re.compile(r"\[(rollout_summaries/[^\]\s]+\.md)\]\s*$")
_STATED = re.compile(r"^- Stated by the user \(their words\): (.+)$", re.M)
_QUOTED = re.compile(r"\"([^\"]{4,200})\"")


def _sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {h: [] for h in V2_HEADINGS}
    current = None
    for line in text.splitlines()[1:]:
        if line.startswith("## "):
            current = line.strip() if line.strip() in out else None
        elif current and line.strip():
            out[current].append(line)
    return out


def _title(summary: str) -> str:
    """The one sentence an index entry gives a rollout summary: its `# title`, else its first
    line of text."""
    for line in summary.splitlines():
        s = line.strip().lstrip("#").strip()
        if s:
            s = " ".join(s.split()).rstrip(".")
            return s if len(s) <= 140 else s[:139] + "…"
    return "a session"


def _stated_preferences(m: SelectedMemory) -> list[str]:
    """The user's own words the offline V2 extractor quoted as how they want to work."""
    found = []
    for line in _STATED.findall(m.rollout_summary):
        found += [q.strip().rstrip(";,") for q in _QUOTED.findall(line)]
    return list(dict.fromkeys(f for f in found if f))


def _entry(m: SelectedMemory) -> str:
    return (f"- rollout_summaries/{m.file_stem}.md — {_title(m.rollout_summary)}; "
            f"thread_id={m.thread_id}")


def _index(selected: list[SelectedMemory], limit: int) -> list[str]:
    """`### <project>` / `#### <day>` blocks for the newest days, older sessions under
    `### Older Memory Topics`; the oldest sessions leave the index until it fits `limit`
    bytes (their files stay in the folder)."""
    by_age = sorted(selected, key=lambda m: (-m.source_updated_at, m.thread_id))
    days = sorted({_day(m.source_updated_at) for m in by_age}, reverse=True)
    recent = set(days[:RECENT_DAYS])

    def render(k: int) -> list[str]:
        keep = by_age[:k]
        return _render_index([m for m in keep if _day(m.source_updated_at) in recent],
                             [m for m in keep if _day(m.source_updated_at) not in recent],
                             len(selected) - k)

    def fits(k: int) -> bool:
        return len("\n".join(render(k)).encode("utf-8")) <= limit

    lo, hi = 0, len(by_age)  # the most sessions that fit, by bisection (size grows with k)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return render(lo)


def _day(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def _render_index(recent: list[SelectedMemory], older: list[SelectedMemory],
                  dropped: int) -> list[str]:
    out: list[str] = []
    scopes: dict[str, dict[str, list[str]]] = {}
    for m in recent:
        scopes.setdefault(m.cwd or "unknown folder", {}).setdefault(
            _day(m.source_updated_at), []).append(_entry(m))
    for scope, days in scopes.items():
        out.append(f"### {scope}")
        for day, entries in days.items():
            out += [f"#### {day}", *entries]
        out.append("")
    out.append("### Older Memory Topics")
    out += [_entry(m) for m in older] or ["- none yet"]
    if dropped:
        out.append(f"- {dropped} older sessions are in rollout_summaries/ but not listed here")
    return out


def merge_summary_v2(text: str, selected: list[SelectedMemory]) -> str:
    """The V2 memory_summary.md: the first three sections kept as written (a person's edits
    stand), preferences quoted from newly consolidated sessions added with their source, a
    preference whose source is gone dropped (forgetting), and a fresh index of every selected
    rollout summary, cut to stay under Codex's 10,000-byte limit."""
    kept = _sections(text)
    present = {f"rollout_summaries/{m.file_stem}.md" for m in selected}
    indexed = set(re.findall(r"rollout_summaries/[^\s;]+\.md", "\n".join(kept[V2_HEADINGS[3]])))
    prefs: list[str] = []
    for line in kept[V2_HEADINGS[1]]:
        src = _SOURCE.search(line)
        if src and src.group(1) not in present:
            continue  # supported only by a session memory no longer holds
        prefs.append(line)
    added: list[str] = []
    for m in selected:
        ref = f"rollout_summaries/{m.file_stem}.md"
        if ref in indexed:
            continue  # already taken in: a person may have edited or removed its lines
        for p in _stated_preferences(m):
            if not any(p in x for x in prefs + added):
                added.append(f"- {p} [{ref}]")
    while True:
        head = ["v1", ""]
        for h, lines in zip(V2_HEADINGS[:3], (kept[V2_HEADINGS[0]], prefs + added,
                                              kept[V2_HEADINGS[2]]), strict=True):
            head += [h, *_placeholder(lines), ""]
        head.append(V2_HEADINGS[3])
        room = V2_BUDGET - len("\n".join(head).encode("utf-8")) - 1
        if room >= 1_000 or not added:
            break
        added.pop()  # new quotes give way to the index
    return "\n".join(head + _index(selected, max(room, 0))).rstrip() + "\n"


def _placeholder(lines: list[str]) -> list[str]:
    real = [x for x in lines if x.strip() and x.strip().lower() != "- none yet"]
    return real or ["- none yet"]


class OfflinePhase2:
    """Phase2Backend for the deterministic merge: no network, no prompt, no tokens."""

    name = "offline"

    def consolidate(self, workspace: Path, selected: list[SelectedMemory], now: float,
                    version: str) -> Phase2Result:
        summary = workspace / "memory_summary.md"
        # v2: the summary is the whole memory (docs/codex-format.md "Memory versions")
        if version == "v2":
            summary.write_text(merge_summary_v2(_read(summary), selected), encoding="utf-8")
            return Phase2Result(MODEL_NAME)
        present = {p.stem for p in (workspace / "rollout_summaries").glob("*.md")}
        memory = merge_memory(_read(workspace / "MEMORY.md"), selected, present)
        (workspace / "MEMORY.md").write_text(memory, encoding="utf-8")
        summary.write_text(merge_summary(_read(summary) or "v1\n", memory, now),
                           encoding="utf-8")
        return Phase2Result(MODEL_NAME)


def _read(p: Path) -> str:
    return p.read_text(encoding="utf-8") if p.is_file() else ""
