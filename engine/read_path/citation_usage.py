"""Which memory lines later sessions cited, and how often (docs/architecture.md "The read path").

One event per assistant message that carries `<oai-mem-citation>` blocks (all its blocks
together, as Codex parses them). Usage counts each valid-UUID rollout id once per event;
invalid ids stay in the event and count for nothing. A line range counts once per event."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from ..codex.citations import OPEN, CitationEntry, CitationEntryJSON, entry_json  # noqa: F401
from ..formatting import iso_utc
from ..index.sessions import Session

if TYPE_CHECKING:
    from .citation_store import CitationStore

SKIP = ("unreadable", "empty")


@dataclass(frozen=True)
class CitationEvent:
    citing_thread: str | None
    time: float | None
    entries: tuple[CitationEntry, ...]
    rollout_ids: tuple[str, ...]


@dataclass(frozen=True)
class LineUsage:
    path: str
    line_start: int
    line_end: int
    count: int
    last_cited: float | None


class CitationEventJSON(TypedDict):
    citing_thread: str | None
    time: str | None
    entries: list[CitationEntryJSON]
    rollout_ids: list[str]


class LineUsageJSON(TypedDict):
    path: str
    line_start: int
    line_end: int
    count: int
    last_cited: str | None


class UsageJSON(TypedDict):
    threads: dict[str, int]
    lines: list[LineUsageJSON]


class CitationReportJSON(TypedDict):
    """`memdeck citations --json`."""

    events: list[CitationEventJSON]
    usage: UsageJSON


@dataclass(frozen=True)
class CitationReport:
    events: tuple[CitationEvent, ...]
    threads: dict[str, int]
    lines: tuple[LineUsage, ...]

    def to_json(self) -> CitationReportJSON:
        return {
            "events": [{
                "citing_thread": e.citing_thread, "time": iso_utc(e.time),
                "entries": [entry_json(c) for c in e.entries],
                "rollout_ids": list(e.rollout_ids)} for e in self.events],
            "usage": {
                "threads": dict(self.threads),
                "lines": [{"path": u.path, "line_start": u.line_start, "line_end": u.line_end,
                           "count": u.count, "last_cited": iso_utc(u.last_cited)}
                          for u in self.lines]},
        }


def _may_cite(path: str, chunk: int = 1 << 20) -> bool:
    from .citation_store import may_cite

    return may_cite(path, chunk)


def citation_events(sessions: Iterable[Session],
                    stored: CitationStore | None = None) -> list[CitationEvent]:
    """One event per citing assistant message of the sessions' rollouts; `stored` reads them
    from memdeck's store, parsing only the flagged rollouts that changed (citation_store.py)."""
    from .citation_store import CitationStore

    readable = [s for s in sessions if s.status not in SKIP]
    found = (stored or CitationStore(None)).citations(s.rollout_path for s in readable)
    events = [CitationEvent(s.id, m.time, m.entries, m.rollout_ids)
              for s in readable for m in found.get(s.rollout_path, ())]
    events.sort(key=lambda e: (e.time or 0.0, e.citing_thread or ""))
    return events


def citation_report(sessions: Iterable[Session],
                    stored: CitationStore | None = None) -> CitationReport:
    from ..codex.citations import MemoryCitation

    events = citation_events(sessions, stored)
    threads: dict[str, int] = {}
    lines: dict[tuple[str, int, int], tuple[int, float | None]] = {}  # (count, last cited)
    for ev in events:
        for tid in MemoryCitation(ev.entries, ev.rollout_ids).valid_thread_ids:
            threads[tid] = threads.get(tid, 0) + 1
        for key in {(c.path, c.line_start, c.line_end) for c in ev.entries}:
            count, last = lines.get(key, (0, None))
            if ev.time is not None and (last is None or ev.time > last):
                last = ev.time
            lines[key] = (count + 1, last)
    usage = tuple(LineUsage(p, a, b, n, last) for (p, a, b), (n, last) in sorted(lines.items()))
    return CitationReport(tuple(events), threads, usage)
