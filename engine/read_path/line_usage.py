"""Use of a memory file, line by line: the gutter and the sessions that cited a line
(docs/architecture.md "The read path").

Citations follow Codex's rules (docs/codex-format.md "Citations", "Usage counts"; one event per
citing assistant message, a line counts once per event). A citation names lines of the file as
it was when it was made: `line_mapping` carries them through memdeck's history onto today's
lines; what no longer exists is "cited, since removed". Drop-out dates follow
docs/codex-format.md "Pruning" (`drop_out`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypedDict

from ..codex.citations import CitationEntry
from ..codex.home import CodexHome
from ..codex.pipeline_snapshot import Stage1Output
from ..errors import NotFound
from ..formatting import iso_utc
from ..index.sessions import project_name
from .citation_store import CitationStore
from .drop_out import drop_out, line_threads
from .line_mapping import HistoryVersions, Version


@dataclass(frozen=True)
class CitingMessage:
    """One citation event with what a person needs to open it: the session, the time, the
    message without its citation block, and its index in the session's transcript."""

    thread_id: str | None
    rollout_path: str
    project: str
    time: float | None
    item_index: int  # in `transcript(rollout)`, as `Engine.session` returns it
    text: str  # the assistant's message, citation block removed, shortened
    entries: tuple[CitationEntry, ...]
    rollout_ids: tuple[str, ...]


class RolloutRef(NamedTuple):
    path: str
    thread_id: str | None
    cwd: str | None


class CitingMessageCache:
    """Citing messages per rollout, from memdeck's store (citation_store.py): only rollouts
    the index flagged are looked at, and one is parsed again only when its size or mtime
    changed since it was last parsed."""

    def __init__(self, stored: CitationStore | None = None) -> None:
        self.stored = stored or CitationStore(None)

    def messages(self, rollouts: Iterable[RolloutRef]) -> list[CitingMessage]:
        refs: list[RolloutRef] = []
        seen: set[str] = set()
        for r in rollouts:  # the first of each path
            if r.path not in seen:
                seen.add(r.path)
                refs.append(r)
        found = self.stored.citations(r.path for r in refs)
        out: list[CitingMessage] = []
        for ref in refs:
            parsed = found.get(ref.path)
            if not parsed:
                continue
            project = project_name(ref.cwd) if ref.cwd else ""
            out.extend(CitingMessage(ref.thread_id, ref.path, project, m.time, m.item_index,
                                     m.text, m.entries, m.rollout_ids) for m in parsed)
        out.sort(key=lambda m: (m.time or 0.0, m.thread_id or "", m.item_index))
        return out


# -- results --------------------------------------------------------------------------
@dataclass(frozen=True)
class LineStat:
    line: int  # 1-based, in the file as it is now
    text: str
    count: int  # citation events that cited this line (or the line it was then)
    last_cited: float | None
    drops_out: float | None  # docs/codex-format.md "Pruning"; None where it does not apply
    drop_note: str  # "kept while selected for phase 2", "drops out 2027-01-03 …", or ""

    @property
    def never_cited(self) -> bool:
        return self.count == 0


@dataclass(frozen=True)
class RemovedCitation:
    """Lines cited in an older version that today's file no longer holds."""

    commit: str | None  # the history version the citation was made against (None: today's)
    line_start: int  # in that version
    line_end: int
    text: str  # those lines as they were ("" for lines past the end of the file)
    count: int
    last_cited: float | None


class LineStatJSON(TypedDict):
    line: int
    text: str
    count: int
    last_cited: str | None
    never_cited: bool
    drops_out: str | None
    drop_note: str


class RemovedCitationJSON(TypedDict):
    commit: str | None
    line_start: int
    line_end: int
    text: str
    count: int
    last_cited: str | None


class FileUsageJSON(TypedDict):
    """`memdeck usage FILE --json`."""

    path: str
    version: str
    events: int
    history_versions: int
    lines: list[LineStatJSON]
    removed: list[RemovedCitationJSON]


@dataclass(frozen=True)
class FileUsage:
    path: str  # relative to the active memory root
    version: str  # v1 | v2
    events: int  # citation events that cited this file
    history_versions: int  # older versions the citations were mapped from
    lines: tuple[LineStat, ...]
    removed: tuple[RemovedCitation, ...]

    def to_json(self) -> FileUsageJSON:
        return {
            "path": self.path, "version": self.version, "events": self.events,
            "history_versions": self.history_versions,
            "lines": [{"line": s.line, "text": s.text, "count": s.count,
                       "last_cited": iso_utc(s.last_cited), "never_cited": s.never_cited,
                       "drops_out": iso_utc(s.drops_out), "drop_note": s.drop_note}
                      for s in self.lines],
            "removed": [{"commit": r.commit, "line_start": r.line_start,
                         "line_end": r.line_end, "text": r.text, "count": r.count,
                         "last_cited": iso_utc(r.last_cited)} for r in self.removed],
        }


@dataclass(frozen=True)
class CitingSession:
    thread_id: str | None
    time: float | None
    project: str
    message: str  # the citing message, citation block removed, shortened
    item_index: int  # the message's index in the session's transcript
    note: str  # the citation entry's note
    rollout_path: str


# -- mapping citations onto today's lines -----------------------------------------------
@dataclass(frozen=True)
class _Mapped:
    message: CitingMessage
    lines: frozenset[int]  # today's lines this event cited
    notes: Mapping[int, str]  # today's line -> the note of the entry that cited it
    removed: frozenset[tuple[str | None, int, int]]  # (commit, start, end) in that version


def cites_file(entry_path: str, rel: str, root: str) -> bool:
    """Whether a citation's path names `rel`: relative to the root as Codex asks, or the
    absolute path (POSIX or Windows separators) some agents write."""
    p = entry_path.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    if p == rel:
        return True
    base = root.replace("\\", "/").rstrip("/") + "/"
    return p.startswith(base) and p[len(base):] == rel


def _runs(lines: Sequence[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for n in sorted(set(lines)):
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def map_events(versions: HistoryVersions, rel: str, root: str,
               messages: Iterable[CitingMessage]) -> list[_Mapped]:
    out: list[_Mapped] = []
    for m in messages:
        entries = [e for e in m.entries if cites_file(e.path, rel, root)]
        if not entries:
            continue
        v: Version = versions.at(m.time)
        lines: set[int] = set()
        notes: dict[int, str] = {}
        gone: dict[str | None, list[int]] = {}
        for e in entries:
            lo, hi = min(e.line_start, e.line_end), max(e.line_start, e.line_end)
            hi = min(hi, lo + max(len(v.lines), 1))  # a range far past the end: one removed run
            for n in range(lo, hi + 1):
                cur = v.map_line(n)
                if cur is None:
                    gone.setdefault(v.commit, []).append(n)
                else:
                    lines.add(cur)
                    notes.setdefault(cur, e.note)
        removed = frozenset((c, a, b) for c, ns in gone.items() for a, b in _runs(ns))
        out.append(_Mapped(m, frozenset(lines), notes, removed))
    return out


def file_usage(home: CodexHome, rel: str, text: str, messages: Sequence[CitingMessage],
               rows: Mapping[str, Stage1Output], max_unused_days: int,
               now: float) -> FileUsage:
    current = tuple(text.splitlines())
    versions = HistoryVersions(home, rel, current)
    mapped = map_events(versions, rel, str(home.memory_root), messages)
    counts = [0] * len(current)
    last: list[float | None] = [None] * len(current)
    removed: dict[tuple[str | None, int, int], tuple[int, float | None]] = {}
    for ev in mapped:
        t = ev.message.time
        for n in ev.lines:
            counts[n - 1] += 1
            if t is not None and (last[n - 1] is None or t > (last[n - 1] or 0.0)):
                last[n - 1] = t
        for key in ev.removed:
            c, lt = removed.get(key, (0, None))
            removed[key] = (c + 1, t if t is not None and (lt is None or t > lt) else lt)
    threads = line_threads(rel, current)
    stats: list[LineStat] = []
    for i, line in enumerate(current):
        d = drop_out(threads[i], rows, max_unused_days, now)
        stats.append(LineStat(i + 1, line, counts[i], last[i], d.date, d.note))
    gone = []
    for (commit, a, b), (c, lt) in sorted(removed.items(),
                                          key=lambda kv: (-(kv[1][1] or 0.0), kv[0][1])):
        v = versions.identity if commit is None else versions.at_commit(commit)
        old = [v.text(n) for n in range(a, b + 1)]
        gone.append(RemovedCitation(commit, a, b, "\n".join(x for x in old if x is not None),
                                    c, lt))
    return FileUsage(rel, home.memory_version, len(mapped), versions.versions_read,
                     tuple(stats), tuple(gone))


def citing_sessions(home: CodexHome, rel: str, text: str, line: int,
                    messages: Sequence[CitingMessage]) -> list[CitingSession]:
    """The sessions that cited today's line `line` (mapped through history), newest first."""
    current = tuple(text.splitlines())
    if not 1 <= line <= len(current):
        raise NotFound(f"{rel} has no line {line} (it has {len(current)})")
    versions = HistoryVersions(home, rel, current)
    out = [CitingSession(ev.message.thread_id, ev.message.time, ev.message.project,
                         ev.message.text, ev.message.item_index, ev.notes.get(line, ""),
                         ev.message.rollout_path)
           for ev in map_events(versions, rel, str(home.memory_root), messages)
           if line in ev.lines]
    out.sort(key=lambda c: (-(c.time or 0.0), c.thread_id or "", c.item_index))
    return out
