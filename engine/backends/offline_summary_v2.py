"""The offline consolidation's v2 memory_summary.md: the summary is the whole memory
(docs/codex-format.md "Memory versions"). The sections a person writes are kept as
offline_summary.py keeps them; `## What's in Memory` indexes the selected rollout summaries,
rebuilt each time to stay under Codex's 10,000-byte limit, with the lines the merge did not
write put back under their project.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from ..codex.memory_layout import SelectedMemory
from .offline_notes import Folding
from .offline_rules import standing_rule
from .offline_summary import (
    HEADINGS,
    INDEX,
    NONE_YET,
    OLDER,
    SUMMARY_SECTIONS,
    fold_notes,
    parse_summary,
    placeholder,
    render_summary,
)

V2_HEADINGS = HEADINGS  # Codex's v2 validation requires them (docs/codex-format.md "Validation")
V2_LIMIT = 10_000  # Codex requires the file to stay under this many bytes
V2_BUDGET = 9_600  # what the offline merge aims for, leaving room for hand edits
RECENT_DAYS = 3  # the newest days get their own `#### <date>` blocks
_SOURCE = re.compile(r"\[(rollout_summaries/[^\]\s]+\.md)\]\s*$")
# the rules line of offline_phase1_v2.py; `Stated by the user` is what earlier memdeck
# releases wrote: every durable sentence, so its quotes are sorted again (offline_rules.py)
_STATED = re.compile(r"^- (Standing rules the user set|Stated by the user) \(their words\): "
                     r"(.+)$", re.M)
_QUOTED = re.compile(r"\"([^\"]{4,200})\"")
_ENTRY_V2 = re.compile(r"^- rollout_summaries/\S+\.md — .*; thread_id=\S+$")
_DROPPED_V2 = re.compile(r"^- \d+ older sessions are in rollout_summaries/ but not listed here$")


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
    for _, line in _STATED.findall(m.rollout_summary):
        found += [q.strip().rstrip(";,") for q in _QUOTED.findall(line)]
    return list(dict.fromkeys(f for f in found if f and standing_rule(f)))


def _entry(m: SelectedMemory) -> str:
    return (f"- rollout_summaries/{m.file_stem}.md — {_title(m.rollout_summary)}; "
            f"thread_id={m.thread_id}")


def _day(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def _scope(m: SelectedMemory) -> str:
    return m.cwd or "unknown folder"


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


def _render_index(recent: list[SelectedMemory], older: list[SelectedMemory],
                  dropped: int) -> list[str]:
    out: list[str] = []
    scopes: dict[str, dict[str, list[str]]] = {}
    for m in recent:
        scopes.setdefault(_scope(m), {}).setdefault(_day(m.source_updated_at), []).append(
            _entry(m))
    for scope, days in scopes.items():
        out.append(f"### {scope}")
        for day, entries in days.items():
            out += [f"#### {day}", *entries]
        out.append("")
    out.append(OLDER)
    out += [_entry(m) for m in older] or [NONE_YET]
    if dropped:
        out.append(f"- {dropped} older sessions are in rollout_summaries/ but not listed here")
    return out


def _foreign_v2(lines: list[str]) -> list[tuple[str | None, str]]:
    """The index lines the v2 merge did not write, each with the `### ` block it was in."""
    out: list[tuple[str | None, str]] = []
    scope: str | None = None
    for line in lines:
        s = line.strip()
        if line.startswith("### "):
            scope = line.rstrip()
        elif not s or line.startswith("#### ") or s.lower() == NONE_YET \
                or _ENTRY_V2.match(s) or _DROPPED_V2.match(s):
            continue
        else:
            out.append((scope, line))
    return out


def _put_back(index: list[str], foreign: list[tuple[str | None, str]],
              selected: list[SelectedMemory]) -> list[str]:
    """Each foreign line at the end of its block: the same `### <project>` if it is still
    there, else `### Older Memory Topics` while the project's sessions are listed there; a
    project with no session left keeps its header for the lines a person wrote under it."""
    out = list(index)
    scopes = {f"### {_scope(m)}" for m in selected}
    top: list[str] = []
    for scope, line in foreign:
        if scope is None:
            top.append(line)
            continue
        if scope not in out:
            if scope in scopes:
                scope = OLDER
            else:
                at = out.index(OLDER)
                out[at:at] = [scope, ""]
        at = out.index(scope) + 1
        while at < len(out) and out[at].strip() and not out[at].startswith("### "):
            at += 1
        out.insert(at, line)
    return top + out


def merge_summary_v2(text: str, selected: list[SelectedMemory],
                     notes: Folding | None = None) -> str:
    """The V2 memory_summary.md: what a person wrote kept as written, preferences quoted from
    newly consolidated sessions added with their source, a preference whose source is gone
    dropped (forgetting), notes folded in, and a fresh index of every selected rollout
    summary, cut to stay under Codex's 10,000-byte limit."""
    doc = parse_summary(text)
    old_index = doc.body.get(INDEX, [])
    present = {f"rollout_summaries/{m.file_stem}.md" for m in selected}
    indexed = set(re.findall(r"rollout_summaries/[^\s;]+\.md", "\n".join(old_index)))
    prefs: list[str] = []
    for line in doc.kept(SUMMARY_SECTIONS[1]):
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
    foreign = _foreign_v2(old_index)
    sections = {SUMMARY_SECTIONS[0]: doc.kept(SUMMARY_SECTIONS[0]),
                SUMMARY_SECTIONS[1]: prefs + added,
                SUMMARY_SECTIONS[2]: doc.kept(SUMMARY_SECTIONS[2])}
    fold_notes(sections, notes)
    quotes = [x for x in sections[SUMMARY_SECTIONS[1]] if x in added]
    while True:
        filled = {h: placeholder(sections[h]) for h in SUMMARY_SECTIONS}
        filled[INDEX] = [x for _, x in foreign]
        room = V2_BUDGET - len(render_summary(doc, filled).encode("utf-8"))
        if room >= 1_000 or not quotes:
            break
        sections[SUMMARY_SECTIONS[1]].remove(quotes.pop())  # new quotes give way to the index
    filled[INDEX] = _put_back(_index(selected, max(room, 0)), foreign, selected)
    return render_summary(doc, filled)
