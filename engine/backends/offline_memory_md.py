"""The offline consolidation's merge into v1's MEMORY.md (docs/codex-format.md "MEMORY.md and
memory_summary.md"): merged, not regenerated.

- Every task group, task and bullet is kept as written, wherever it came from (edits in
  MEMORY.md are authoritative, and a line someone added outside memdeck is theirs).
- Forgetting: a task whose rollout summaries are all gone is removed with the bullets that
  cite only it; the tasks left are renumbered.
- A selected memory no task cites yet becomes a new task in its project's group.
- Ad-hoc notes (backends/offline_notes.py): forget notes remove the bullets they match,
  remember notes become `[ad-hoc note]` bullets in the group they fit.
- Nothing empty is left: a group with no task and no line of its own is removed. The three
  blocks Codex's layout asks of every group stay, with Codex's `- none recorded` when bare.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..codex.memory_layout import SelectedMemory
from ..formatting import rfc3339_utc
from .offline_digest import tips
from .offline_note_index import LineIndex, WordBag
from .offline_notes import (
    Folding,
    already_remembered,
    group_score,
    is_bullet,
    is_preference,
    note_bullet,
)

_REF = re.compile(r"rollout_summaries/([^\s)]+)\.md")
_TASK_CITE = re.compile(r"\[Task (\d+)\]")
_THREAD = re.compile(r"thread_id=([0-9A-Za-z-]+)")
_TRAILING_SPACE = re.compile(r"[^\S\n]$", re.M)
_UPDATED = re.compile(r"updated_at=(\d{4}-\d{2}-\d{2})")
BLOCKS = ("## User preferences", "## Reusable knowledge", "## Failures and how to do differently")
FILE = "MEMORY.md"
NOTES_GROUP = "ad-hoc notes"  # the group of remember notes that fit no project
_HEAD_KEYS = ("# Task Group:", "scope:", "applies_to:")


@dataclass(slots=True)
class Task:
    lines: list[str]  # the `## Task n: …` line and everything up to the next section

    @property
    def stems(self) -> set[str]:
        return {m.group(1) for line in self.lines for m in _REF.finditer(line)}

    @property
    def title(self) -> str:
        head = self.lines[0]
        return head.split(":", 1)[1].strip() if ":" in head else head

    @property
    def keywords(self) -> list[str]:
        """The items of its `### keywords` bullets."""
        out: list[str] = []
        inside = False
        for line in self.lines[1:]:
            if line.startswith("###"):
                inside = line.strip() == "### keywords"
            elif inside and line.strip().startswith("- "):
                out += [k.strip() for k in line.strip()[2:].split(",") if k.strip()]
        return out

    @property
    def threads(self) -> set[str]:
        return {m.group(1) for line in self.lines for m in _THREAD.finditer(line)}

    @property
    def day(self) -> str | None:
        """The day its newest rollout summary was updated, from the reference line."""
        days = [m.group(1) for line in self.lines for m in _UPDATED.finditer(line)]
        return max(days) if days else None


@dataclass(slots=True)
class Group:
    head: list[str]  # `# Task Group: …`, scope, applies_to, anything before the first task
    tasks: list[Task] = field(default_factory=list)
    # its blocks as parsed, one string each, until something needs their lines (`blocks`):
    # a big MEMORY.md held as a million strings cost three times its size
    packed: dict[str, str] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=dict)
    tidy: frozenset[str] = frozenset()  # blocks `_append` has cleared of filler

    @property
    def blocks(self) -> dict[str, list[str]]:
        """Its blocks' lines, to read or change (unpacked once, here)."""
        for name, text in self.packed.items():
            self.lists.setdefault(name, []).extend(text.split("\n") if text else [])
        self.packed.clear()
        return self.lists

    def pack(self) -> None:
        for name, lines in self.lists.items():
            self.packed[name] = "\n".join(lines)
        self.lists = {}

    def block_lines(self, name: str) -> list[str]:
        """One block's lines, read without unpacking the group."""
        text = self.packed.get(name)
        return (text.split("\n") if text else []) if text is not None \
            else self.lists.get(name, [])

    def names(self) -> list[str]:
        return list(self.packed or self.lists)

    @property
    def title(self) -> str:
        return self.head[0].removeprefix("# Task Group:").strip()

    @property
    def cwd(self) -> str | None:
        return next((ln.split("cwd=", 1)[1].split(";", 1)[0].strip() for ln in self.head
                     if ln.startswith("applies_to:") and "cwd=" in ln), None)

    @property
    def project(self) -> str:
        cwd = self.cwd
        return PurePosixPath(cwd).name if cwd and cwd != "*" else self.title.split(" (")[0]

    def has_own_lines(self) -> bool:
        """A line besides its heading, scope, applies_to and Codex's placeholders: a bullet
        of a block, or something a person wrote in its head."""
        head = [x for x in self.head if x.strip() and not x.startswith(_HEAD_KEYS)]
        return bool(head) or any(x.strip() and x.strip().lower() != "- none recorded"
                                 for n in self.names() for x in self.block_lines(n))

    def text(self) -> str:
        return "\n".join(self.head + [x for t in self.tasks for x in t.lines]
                         + [x for n in self.names() for x in self.block_lines(n)])


def parse_memory(text: str | Iterable[str]) -> tuple[list[str], list[Group]]:
    """MEMORY.md's preamble and task groups, from its text or its lines (a file read line by
    line: a big one is never held whole as well, and each group's blocks are packed as it
    ends)."""
    preamble: list[str] = []
    groups: list[Group] = []
    section: list[str] | None = None
    for raw in (text.splitlines() if isinstance(text, str) else text):
        line = raw.rstrip("\r\n")
        if line.startswith("# Task Group:"):
            if groups:
                groups[-1].pack()
            groups.append(Group([line]))
            section = groups[-1].head
        elif not groups:
            preamble.append(line)
            continue
        elif line.startswith("## Task "):
            groups[-1].tasks.append(Task([line]))
            section = groups[-1].tasks[-1].lines
        elif line.strip() in BLOCKS:
            section = groups[-1].lists.setdefault(line.strip(), [])
        elif section is not None:
            section.append(line)
    if groups:
        groups[-1].pack()
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
        # what the task's user said holds, then the checks that passed in it (and the fix
        # each proved): knowledge the next task in this folder can reuse
        BLOCKS[1]: [f"- {p} [Task {n}]" for p in _bullets(m.raw_memory, "fact")]
        + [f"- {t.text} [Task {n}]" for t in tips([m])],
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
    same = len(kept) == len(group.tasks)  # every number stays what it was
    group.tasks = kept
    if same and all(_cites_only(text, renumber) for text in group.packed.values()):
        return  # nothing in its blocks changes: they stay packed
    for name, lines in group.blocks.items():
        out = []
        for line in lines:
            cited = [int(n) for n in _TASK_CITE.findall(line)]
            if cited and not any(n in renumber for n in cited):
                continue  # supported only by forgotten tasks
            out.append(_TASK_CITE.sub(lambda mt: f"[Task {renumber.get(int(mt.group(1)), 0)}]"
                                      if int(mt.group(1)) in renumber else "", line).rstrip())
        group.blocks[name] = out


def _cites_only(text: str, tasks: dict[int, int]) -> bool:
    """A packed block `_forget` leaves as it is: it cites only tasks there are, and no line
    ends in spaces."""
    return (not _TRAILING_SPACE.search(text)
            and all(int(m.group(1)) in tasks for m in _TASK_CITE.finditer(text)))


def _non_empty(groups: list[Group]) -> list[Group]:
    return [g for g in groups if g.tasks or g.has_own_lines()]


def _add_selected(groups: list[Group], selected: list[SelectedMemory]) -> None:
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
            _append(group, name, lines)


def _append(group: Group, block: str, lines: list[str]) -> None:
    """`lines` at the end of a block; a "none recorded" placeholder and blank lines give way
    to them (once: the block stays tidy as more are appended)."""
    existing = group.blocks.setdefault(block, [])
    if lines:
        if block not in group.tidy:
            existing[:] = [x for x in existing if x.strip()
                           and x.strip().lower() != "- none recorded"]
            group.tidy |= {block}
        existing.extend(lines)


def _fold_notes(preamble: list[str], groups: list[Group], folding: Folding) -> list[str]:
    """Forget notes out of every knowledge bullet, then remember notes in (module
    docstring of offline_notes.py); returns the new preamble."""
    preamble = folding.forget_in(FILE, preamble)
    for g in groups:
        for name in list(g.blocks):
            g.blocks[name] = folding.forget_in(FILE, g.blocks[name])
    remember = folding.of("remember")
    if not remember:
        return preamble
    held = LineIndex(x for x in preamble + [y for g in groups for b in g.blocks.values()
                                            for y in b] if is_bullet(x))
    bags: dict[int, WordBag] = {}
    keep = len(remember) > 8  # a few notes read the groups again; many share their words

    def bag(g: Group) -> WordBag:
        found = bags.get(id(g))
        if found is None:
            found = WordBag(g.text)
            if keep:
                bags[id(g)] = found
        return found

    for i, note in remember:
        if folding.withdrawn(i):
            continue
        if already_remembered(note.text, held):
            continue
        scored = [(group_score(note.text, bag(g), g.project), -k, g)
                  for k, g in enumerate(groups) if g.title != NOTES_GROUP]
        best = max(scored, key=lambda s: (s[0], s[1]), default=None)
        group = best[2] if best and best[0] > 0 else None
        if group is None:
            group = next((g for g in groups if g.title == NOTES_GROUP), None)
        if group is None:
            group = Group([f"# Task Group: {NOTES_GROUP}",
                           "scope: what the user asked memory to keep, in ad-hoc notes",
                           "applies_to: cwd=*; reuse_rule=any task: these are the user's own "
                           "requests", ""])
            groups.append(group)
        line = note_bullet(note.text)
        _append(group, BLOCKS[0] if is_preference(note.text) else BLOCKS[1], [line])
        held.add(line)
        if id(group) in bags:
            bags[id(group)].add(line)
        folding.added(i, FILE, line)
    return preamble


def merge_memory(text: str, selected: list[SelectedMemory], present: set[str],
                 notes: Folding | None = None) -> str:
    return merge_parsed(*parse_memory(text), selected, present, notes)


def merge_parsed(preamble: list[str], groups: list[Group], selected: list[SelectedMemory],
                 present: set[str], notes: Folding | None = None) -> str:
    """`merge_memory` on a MEMORY.md already parsed (the groups are changed in place)."""
    preamble, groups = merge_groups(preamble, groups, selected, present, notes)
    return "".join(f"{line}\n" for line in rendered(preamble, groups))


def merge_groups(preamble: list[str], groups: list[Group], selected: list[SelectedMemory],
                 present: set[str], notes: Folding | None = None
                 ) -> tuple[list[str], list[Group]]:
    """The merge on parsed groups (changed in place): the preamble and groups to render."""
    for g in groups:
        _forget(g, present)
    groups = _non_empty(groups)
    _add_selected(groups, selected)
    if notes is not None and notes.any:
        preamble = _fold_notes(preamble, groups, notes)
        groups = _non_empty(groups)
    return preamble, groups


def rendered(preamble: list[str], groups: list[Group]) -> Iterator[str]:
    """MEMORY.md's lines, one at a time (a big file is written as it is rendered, never
    joined whole), without trailing blank lines or trailing spaces on its last line."""
    pending: str | None = None  # the last line with text, written once the next one comes
    blank: list[str] = []  # blank lines after it, written only if a line with text follows
    for line in _lines(preamble, groups):
        if not line.strip():
            blank.append(line)
            continue
        if pending is not None:
            yield pending
        yield from blank
        blank.clear()
        pending = line
    yield "" if pending is None else pending.rstrip()


def _lines(preamble: list[str], groups: list[Group]) -> Iterator[str]:
    yield from preamble
    for g in groups:
        yield from g.head
        for t in g.tasks:
            yield from t.lines
        for name in BLOCKS:
            lines = [x for x in g.block_lines(name) if x.strip()]
            yield from (name, *(lines or ["- none recorded"]), "")
