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
from .offline_digest import (
    generated,
    merge_generated,
    merge_rules,
    profile,
    ref,
    rules,
    size,
    tips,
    within,
)
from .offline_notes import Folding
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
# the merge's index lines, at every level of `_entry`
_ENTRY_V2 = re.compile(r"^- rollout_summaries/\S+\.md(?: — .*; thread_id=\S+| — .{1,60})?$")
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


def _entry(m: SelectedMemory, level: int = 0) -> str:
    """An index line, shorter at each level: the title and thread id (0), the title cut to
    60 characters (1), the file alone (2)."""
    path = f"- rollout_summaries/{m.file_stem}.md"
    if level >= 2:
        return path
    title = _title(m.rollout_summary)
    if level == 1:
        return f"{path} — {title if len(title) <= 60 else title[:59] + '…'}"
    return f"{path} — {title}; thread_id={m.thread_id}"


def _day(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def _scope(m: SelectedMemory) -> str:
    return m.cwd or "unknown folder"


# (recent days' level, older sessions' level): each step is shorter, so that every session
# stays indexed before any is left out
LEVELS = ((0, 0), (0, 1), (0, 2), (1, 2), (2, 2))


def _index(selected: list[SelectedMemory], limit: int) -> list[str]:
    """`### <project>` / `#### <day>` blocks for the newest days, older sessions under
    `### Older Memory Topics`. Every session is listed, the lines shortened level by level
    (`LEVELS`) to fit `limit` bytes; only when even the shortest do not fit are the oldest
    sessions left out (their files stay in the folder, and the index counts them)."""
    by_age = sorted(selected, key=lambda m: (-m.source_updated_at, m.thread_id))
    days = sorted({_day(m.source_updated_at) for m in by_age}, reverse=True)
    recent = set(days[:RECENT_DAYS])

    def render(k: int, level: tuple[int, int]) -> list[str]:
        keep = by_age[:k]
        return _render_index([m for m in keep if _day(m.source_updated_at) in recent],
                             [m for m in keep if _day(m.source_updated_at) not in recent],
                             len(selected) - k, level)

    def fits(lines: list[str]) -> bool:
        return len("\n".join(lines).encode("utf-8")) <= limit

    for level in LEVELS:
        whole = render(len(by_age), level)
        if fits(whole):
            return whole
    lo, hi = 0, len(by_age)  # the most sessions that fit, by bisection (size grows with k)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(render(mid, LEVELS[-1])):
            lo = mid
        else:
            hi = mid - 1
    return render(lo, LEVELS[-1])


def index_floor(selected: list[SelectedMemory]) -> int:
    """Bytes of the shortest index that lists every session."""
    lines = _render_index([], selected, 0, LEVELS[-1])
    return len("\n".join(lines).encode("utf-8"))


def _render_index(recent: list[SelectedMemory], older: list[SelectedMemory],
                  dropped: int, level: tuple[int, int] = (0, 0)) -> list[str]:
    out: list[str] = []
    scopes: dict[str, dict[str, list[str]]] = {}
    for m in recent:
        scopes.setdefault(_scope(m), {}).setdefault(_day(m.source_updated_at), []).append(
            _entry(m, level[0]))
    for scope, days in scopes.items():
        out.append(f"### {scope}")
        for day, entries in days.items():
            out += [f"#### {day}", *entries]
        out.append("")
    out.append(OLDER)
    out += [_entry(m, level[1]) for m in older] or [NONE_YET]
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
    """The V2 memory_summary.md: what a person wrote kept as written; the standing rules of
    newly consolidated sessions added with their sources, a rule said again folded into its
    line, a rule whose sessions are all gone dropped (forgetting); tips and profile rebuilt
    (offline_digest.py); notes folded in; and a fresh index that lists every selected
    rollout summary, all within Codex's 10,000-byte limit."""
    doc = parse_summary(text)
    old_index = doc.body.get(INDEX, [])
    present = {ref(m) for m in selected}
    indexed = set(re.findall(r"rollout_summaries/[^\s;\]]+\.md", "\n".join(old_index)))
    profile_h, prefs_h, tips_h = SUMMARY_SECTIONS
    sections = {
        profile_h: merge_generated(doc.kept(profile_h), profile(selected)),
        prefs_h: merge_rules(doc.kept(prefs_h), rules(selected), present, present - indexed),
        tips_h: merge_generated(doc.kept(tips_h), [t.render() for t in tips(selected)]),
    }
    fold_notes(sections, notes)
    foreign = _foreign_v2(old_index)
    need = index_floor(selected)
    while True:  # the merge's own lines give way until the index can list every session
        filled = {h: placeholder(sections[h]) for h in SUMMARY_SECTIONS}
        filled[INDEX] = [x for _, x in foreign]
        room = V2_BUDGET - len(render_summary(doc, filled).encode("utf-8"))
        if room >= need:
            break
        victim = next((h for h in (tips_h, profile_h, prefs_h)
                       if any(generated(x) for x in sections[h])), None)
        if victim is None:
            break
        sections[victim] = within(sections[victim], max(0, size(sections[victim]) - 1))
    filled[INDEX] = _put_back(_index(selected, max(room, 0)), foreign, selected)
    return render_summary(doc, filled)
