"""The offline consolidation's memory_summary.md (docs/codex-format.md "MEMORY.md and
memory_summary.md", "Memory versions"): merged, not regenerated. The v1 merge is here, with
what both versions share (the file as sections, notes folded in); v2's index is in
offline_summary_v2.py.

Both versions keep every line a person or another tool wrote: the lines between `v1` and
the first section, the lines of `## User Profile`, `## User preferences` and `## General
Tips`, and any other `## ` section, in its place. Ad-hoc notes are folded into those three
sections (backends/offline_notes.py). Only `## What's in Memory` is the merge's own, and even
there a line it did not write stays:

- v1 indexes MEMORY.md: an entry (`- <topic>: keyword, …` and its indented lines) stays as
  written; a task with no entry gets one under `### <cwd>` / `#### <day it was updated>`;
  the entries of a task that was forgotten go. An entry is a task's when it names the
  task's rollout summary or thread, starts with its title, or at least half of its keywords
  are the task's.
- v1 keeps its index within what Codex injects (2,500 tokens of the whole file): past that,
  the oldest days' entries are left out (whole days) and counted in `### Older Memory Topics`;
  the tasks stay in MEMORY.md, which the agent searches.
- v2 indexes the rollout summaries, rebuilt each time to fit Codex's size limit; lines it
  did not write are put back under their project (`### Older Memory Topics` when the
  project's sessions are listed there now).

In both, a `### <scope>` or `#### <day>` header stays only while something is under it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..codex.memory_layout import SelectedMemory
from .offline_digest import merge_generated, merge_rules, profile, ref, rules, tips, within
from .offline_memory_md import Group, parse_memory
from .offline_note_index import LineIndex
from .offline_notes import Folding, already_remembered, is_bullet, is_preference, note_bullet

FILE = "memory_summary.md"
SUMMARY_SECTIONS = ("## User Profile", "## User preferences", "## General Tips")
INDEX = "## What's in Memory"
HEADINGS = (*SUMMARY_SECTIONS, INDEX)  # the four of Codex's layout, in both versions
OLDER = "### Older Memory Topics"
NONE_YET = "- none yet"
# Codex injects memory_summary.md up to 2,500 tokens (4 bytes a token), cutting the middle out
# of a longer one (read_path/agent_view.py); the v1 index is kept within that
INJECTED_BYTES = 2_500 * 4
_LEFT_OUT = "older tasks are in MEMORY.md only"
# bytes the merge's own profile, preference and tip lines may take of the injected 10,000,
# so that the index keeps at least half (a person's lines are never cut)
V1_SHARES = (600, 2_800, 1_600)


# -- the file as sections ------------------------------------------------------------------
@dataclass
class Summary:
    pre: list[str]  # between `v1` and the first `## ` heading
    order: list[str]  # section keys in file order (a known heading, or an other one as written)
    body: dict[str, list[str]] = field(default_factory=dict)

    def kept(self, heading: str) -> list[str]:
        return [x for x in self.body.get(heading, []) if x.strip()]


def parse_summary(text: str) -> Summary:
    lines = text.splitlines()
    if lines and lines[0].strip() == "v1":
        lines = lines[1:]
    doc = Summary([], [])
    current: str | None = None
    for line in lines:
        if line.startswith("## "):
            key = line.strip() if line.strip() in HEADINGS else line.rstrip()
            if key in doc.body and key not in HEADINGS:
                key = f"{key}\0{len(doc.order)}"  # another section of the same name
            if key not in doc.body:
                doc.order.append(key)
                doc.body[key] = []
            current = key
        elif current is None:
            doc.pre.append(line)
        else:
            doc.body[current].append(line)
    return doc


def _trim(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _keys(order: list[str]) -> list[str]:
    """The file's sections, with any of the four known ones it lacks put in their place."""
    keys = list(order)
    for c, h in enumerate(HEADINGS):
        if h in keys:
            continue
        before = [keys.index(k) for k in HEADINGS[:c] if k in keys]
        after = [keys.index(k) for k in HEADINGS[c + 1:] if k in keys]
        keys.insert(max(before) + 1 if before else min(after) if after else len(keys), h)
    return keys


def render_summary(doc: Summary, filled: dict[str, list[str]]) -> str:
    out = ["v1", ""]
    pre = _trim(doc.pre)
    if pre:
        out += [*pre, ""]
    for key in _keys(doc.order):
        lines = filled[key] if key in filled else _trim(doc.body.get(key, []))
        out += [key.split("\0")[0], *lines, ""]
    return "\n".join(out).rstrip() + "\n"


def placeholder(lines: list[str]) -> list[str]:
    real = [x for x in lines if x.strip() and x.strip().lower() != NONE_YET]
    return real or [NONE_YET]


def fold_notes(sections: dict[str, list[str]], folding: Folding | None) -> None:
    """Forget notes out of the three sections' bullets, then remember notes in: a preference
    under `## User preferences`, anything else under `## General Tips`."""
    if folding is None or not folding.any:
        return
    for h in SUMMARY_SECTIONS:
        sections[h] = folding.forget_in(FILE, sections[h])
    held = LineIndex(x for h in SUMMARY_SECTIONS for x in sections[h] if is_bullet(x))
    cleared: set[str] = set()
    for i, note in folding.of("remember"):
        if folding.withdrawn(i):
            continue
        if already_remembered(note.text, held):
            continue
        line = note_bullet(note.text)
        target = SUMMARY_SECTIONS[1] if is_preference(note.text) else SUMMARY_SECTIONS[2]
        if target not in cleared:  # the placeholder gives way to the first real line
            sections[target] = [x for x in sections[target] if x.strip().lower() != NONE_YET]
            cleared.add(target)
        sections[target].append(line)
        held.add(line)
        folding.added(i, FILE, line)


# -- v1: the index of MEMORY.md ---------------------------------------------------------------
@dataclass
class _Block:
    head: str | None  # `### <scope>`; None: the lines before the first one
    lines: list[str] = field(default_factory=list)  # before its first `#### <day>`
    days: list[tuple[str, list[str]]] = field(default_factory=list)


def _parse_index(lines: list[str]) -> list[_Block]:
    blocks = [_Block(None)]
    for line in lines:
        if not line.strip():
            continue
        if line.startswith("#### ") and blocks[-1].head is not None:
            blocks[-1].days.append((line.rstrip(), []))
        elif line.startswith("### "):
            blocks.append(_Block(line.rstrip()))
        elif blocks[-1].days:
            blocks[-1].days[-1][1].append(line)
        else:
            blocks[-1].lines.append(line)
    return blocks


def _entries(lines: list[str]) -> list[list[str]]:
    """A `- ` line with the indented lines under it; any other line on its own."""
    out: list[list[str]] = []
    for line in lines:
        if out and out[-1][0].startswith("- ") and line[:1].isspace():
            out[-1].append(line)
        else:
            out.append([line])
    return out


@dataclass(frozen=True)
class _Topic:
    """What an index entry is matched on: a task of MEMORY.md."""

    title: str
    keywords: tuple[str, ...]
    marks: frozenset[str]  # its rollout summary stems and thread ids
    scope: str
    day: str | None

    def matches(self, entry: list[str]) -> bool:
        """The entry names one of its files or threads, starts with its title, or at least
        half of its keywords (after the first `:`, split at `,`/`;`) are the task's."""
        first, text = entry[0], "\n".join(entry)
        if not first.startswith("- "):
            return False
        if any(m in text for m in self.marks):
            return True
        body = first[2:].strip().casefold()
        title = self.title.casefold()
        if body == title or body.startswith(title + ":"):
            return True
        items = [k.strip() for k in re.split(r"[,;]", body.split(":", 1)[1])
                 if k.strip()] if ":" in body else []
        mine = {k.casefold() for k in self.keywords}
        return bool(items) and 2 * sum(k in mine for k in items) >= len(items)


_NO_MARKS: frozenset[str] = frozenset()  # one for the many tasks that cite no file


def _topics(memory_md: str) -> list[_Topic]:
    return memory_topics(parse_memory(memory_md)[1])


def memory_topics(groups: list[Group]) -> list[_Topic]:
    """What the index matches MEMORY.md's tasks on (small: no line of the file is kept)."""
    return [_Topic(t.title, tuple(t.keywords),
                   frozenset(m for m in t.stems | t.threads if len(m) >= 8) or _NO_MARKS,
                   g.cwd or g.title, t.day) for g in groups for t in g.tasks]


def _index_v1(lines: list[str], kept: list[_Topic], previous: list[_Topic],
              day: str, budget: int | None = None) -> list[str]:
    """The index of MEMORY.md's tasks; within `budget` bytes when given, the oldest days'
    entries left out first (whole days, never a line in part), and counted in the older
    topics' line (the tasks stay in MEMORY.md, which the agent searches)."""
    blocks = _parse_index(lines)
    kept_marks = {m for tp in kept for m in tp.marks}
    gone = [tp for tp in previous if tp.marks and not (tp.marks & kept_marks)]

    def keep(entry: list[str]) -> bool:
        return not (any(tp.matches(entry) for tp in gone)
                    and not any(tp.matches(entry) for tp in kept))

    def filtered(xs: list[str]) -> list[str]:
        return [x for e in _entries(xs) if keep(e) for x in e]

    for b in blocks:
        b.lines = filtered(b.lines)
        b.days = [(h, filtered(xs)) for h, xs in b.days]
    every = _EntryIndex([e for b in blocks for xs in [b.lines, *(xs for _, xs in b.days)]
                         for e in _entries(xs)])
    placing = _Placing(blocks)
    for tp in kept:
        if not every.has(tp):
            entry = f"- {tp.title}: {', '.join(tp.keywords)}"
            placing.place(f"### {tp.scope}", f"#### {tp.day or day}", entry)
    return _within_budget(blocks, budget)


def _within_budget(blocks: list[_Block], budget: int | None) -> list[str]:
    """The rendered index, its oldest days left out until it fits: whole days (the oldest
    first, the first block's on a tie), then, of the last day left, its first entries. The
    fewest such cuts that fit are found by halving, each try one render (one cut per render
    was quadratic: thousands of scopes took minutes)."""
    lines_out = _render_index_v1(blocks)
    if budget is None or _size(lines_out) <= budget:
        return lines_out
    days = sorted(((h, bi, di) for bi, b in enumerate(blocks) if b.head not in (None, OLDER)
                   for di, (h, _) in enumerate(b.days)), key=lambda d: d[0])
    if not days:
        return lines_out  # nothing to cut but what a person wrote outside the days
    *whole, (_, last_b, last_d) = days
    last = _entries(blocks[last_b].days[last_d][1])
    cuts = len(whole) + len(last)  # each whole day, then each entry of the last day

    def cut(n: int) -> list[str]:
        gone = {(bi, di) for _, bi, di in whole[:n]}
        dropped = sum(len(_entries(blocks[bi].days[di][1])) for bi, di in gone)
        rest = last[max(0, n - len(whole)):]
        dropped += len(last) - len(rest)
        view = []
        for bi, b in enumerate(blocks):
            kept = []
            for di, (h, xs) in enumerate(b.days):
                if (bi, di) == (last_b, last_d):
                    xs = [x for e in rest for x in e]
                    if not xs:
                        continue
                elif (bi, di) in gone:
                    continue
                kept.append((h, xs))
            view.append(_Block(b.head, b.lines, kept))
        return _render_index_v1(view, dropped)

    low, high = 1, cuts  # the index with `high` cuts fits, or nothing more can be cut
    while low < high:
        mid = (low + high) // 2
        if _size(cut(mid)) <= budget:
            high = mid
        else:
            low = mid + 1
    return cut(high)


def _size(lines: list[str]) -> int:
    return sum(len(x.encode("utf-8")) + 1 for x in lines)


class _EntryIndex:
    """The index's entries, for `_Topic.matches` against all of them at once (a home with
    thousands of tasks asked it of every entry for every task)."""

    def __init__(self, entries: list[list[str]]) -> None:
        self.entries = [e for e in entries if e[0].startswith("- ")]
        self.text = "\n\0".join("\n".join(e) for e in self.entries)  # no mark spans two
        self.bodies: set[str] = set()
        self.heads: set[str] = set()
        self.items: list[list[str]] = []
        self.by_item: dict[str, list[int]] = {}
        for n, e in enumerate(self.entries):
            body = e[0][2:].strip().casefold()
            self.bodies.add(body)
            items = [k.strip() for k in re.split(r"[,;]", body.split(":", 1)[1])
                     if k.strip()] if ":" in body else []
            if ":" in body:
                self.heads.add(body.split(":", 1)[0])
            self.items.append(items)
            for k in set(items):
                self.by_item.setdefault(k, []).append(n)

    def has(self, tp: _Topic) -> bool:
        """`any(tp.matches(e) for e in entries)`."""
        if any(m in self.text for m in tp.marks):
            return True
        title = tp.title.casefold()
        if title in self.bodies or title in self.heads:
            return True
        if ":" in title and any(e[0][2:].strip().casefold().startswith(title + ":")
                                for e in self.entries):
            return True
        hits: dict[int, int] = {}
        for k in {k.casefold() for k in tp.keywords}:
            for n in self.by_item.get(k, ()):
                hits[n] = hits.get(n, 0) + self.items[n].count(k)
        return any(2 * c >= len(self.items[n]) for n, c in hits.items())


class _Placing:
    """New entries into the index's blocks: under their scope (a new block before the older
    entries when there is none), under their day (newest first)."""

    def __init__(self, blocks: list[_Block]) -> None:
        self.blocks = blocks
        self.by_head = {b.head: b for b in reversed(blocks)}  # the first block of a head
        self.tidy: set[int] = set()  # days whose "none yet" placeholder is gone
        self.older = next((i for i, b in enumerate(blocks) if b.head == OLDER), len(blocks))

    def place(self, scope: str, day: str, entry: str) -> None:
        block = self.by_head.get(scope)
        if block is None:
            block = _Block(scope)
            self.blocks.insert(self.older, block)  # new scopes go before the older entries
            self.older += 1
            self.by_head[scope] = block
        for head, xs in block.days:
            if head == day:
                if id(xs) not in self.tidy:
                    xs[:] = [x for x in xs if x.strip().lower() != NONE_YET]
                    self.tidy.add(id(xs))
                xs.append(entry)
                return
        at = next((k for k, (head, _) in enumerate(block.days) if head < day),
                  len(block.days))
        block.days.insert(at, (day, [entry]))  # newest day first


def _render_index_v1(blocks: list[_Block], dropped: int = 0) -> list[str]:
    out: list[str] = []
    older: list[str] = []
    for b in blocks:
        days = [(h, xs) for h, xs in b.days if any(x.strip() for x in xs)]
        if b.head == OLDER:
            older = [x for x in b.lines + [x for _, xs in days for x in xs]
                     if x.strip().lower() != NONE_YET and _LEFT_OUT not in x]
            continue
        if b.head is None:
            out += b.lines
            continue
        if not (days or b.lines):
            continue  # a scope left with nothing under it
        out += [b.head, *b.lines]
        for h, xs in days:
            out += [h, *xs]
    if dropped:
        older = [*older, f"- {dropped} {_LEFT_OUT} (left out of this index to keep it "
                         "within what Codex injects): search MEMORY.md"]
    return [*out, "", OLDER, *(older or [NONE_YET])]


def merge_summary(text: str, memory_md: str, now: float, previous_memory: str | None = None,
                  notes: Folding | None = None,
                  previous_topics: list[_Topic] | None = None,
                  selected: list[SelectedMemory] | None = None,
                  new: set[str] | None = None,
                  topics: list[_Topic] | None = None) -> str:
    """The v1 memory_summary.md beside `memory_md` (the merged MEMORY.md; `previous_memory`
    the one before the merge, to tell which tasks were forgotten, or its `memory_topics`
    taken before the merge, so that a big file is not held twice). With `selected`, the
    profile, preferences and tips are merged from the sessions (offline_digest.py; `new`: the
    summaries this merge takes in), each within its share of what Codex injects. `topics`:
    the merged MEMORY.md's `memory_topics`, in place of its text (a big file is not parsed
    again)."""
    doc = parse_summary(text)
    sections = {h: doc.kept(h) for h in SUMMARY_SECTIONS}
    if selected is not None:  # what holds across sessions (offline_digest.py)
        present = {ref(m) for m in selected}
        profile_h, prefs_h, tips_h = SUMMARY_SECTIONS
        sections[profile_h] = within(merge_generated(sections[profile_h], profile(selected)),
                                     V1_SHARES[0])
        sections[prefs_h] = within(merge_rules(sections[prefs_h], rules(selected), present,
                                               present if new is None else new), V1_SHARES[1])
        sections[tips_h] = within(merge_generated(
            sections[tips_h], [t.render() for t in tips(selected)]), V1_SHARES[2])
    fold_notes(sections, notes)
    day = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")
    filled = {h: placeholder(sections[h]) for h in SUMMARY_SECTIONS}
    previous = previous_topics if previous_topics is not None else _topics(previous_memory or "")
    rest = _size(render_summary(doc, {**filled, INDEX: []}).splitlines())
    kept = topics if topics is not None else _topics(memory_md)
    filled[INDEX] = _index_v1(doc.body.get(INDEX, []), kept, previous, day,
                              budget=max(0, INJECTED_BYTES - rest))
    return render_summary(doc, filled)
