"""What memdeck remembers of its own extracts, which Codex's tables do not keep
(docs/codex-format.md "Pruning"): the raw memories its pruning removed, and the outcome of each
extraction it ran, and the sessions forgotten with memdeck. They live in memdeck's DB
(`pruned_memories`, `extract_outcomes`, store migration 6; `forgotten_sessions`, migration 7),
never in Codex's.

Why: pruning deletes a `stage1_outputs` row and keeps its job, so afterwards the pipeline DB
looks exactly like "phase 1 found nothing durable". A prune record (or an extraction memdeck
saw produce a raw memory, at the job's own watermark and finish time) is the evidence that a
memory existed and pruning removed it (index/status.py). Writing never fails an extraction;
reading never fails a listing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PrunedMemory:
    """A stage-1 row as pruning found it, and when and under which setting it was removed."""

    thread_id: str
    source_updated_at: int
    generated_at: int
    usage_count: int | None
    last_usage: int | None
    pruned_at: int
    max_unused_days: int

    @property
    def unused_since(self) -> int:
        """Codex's `COALESCE(last_usage, source_updated_at)`: what the age rule measures."""
        return self.last_usage if self.last_usage is not None else self.source_updated_at


@dataclass(frozen=True)
class ExtractOutcome:
    """One of memdeck's extractions: what it produced, at which watermark, finished when."""

    thread_id: str
    source_updated_at: int
    outcome: str  # extracted | no_output
    finished_at: int
    detail: str = ""  # for no_output: why nothing was kept, in one line


@dataclass(frozen=True)
class ForgottenSession:
    """A session the user forgot with memdeck: the `session_meta` line memdeck appended to
    switch its memories off, and whether its raw memory was in the consolidated memory then
    (so what it taught stays in MEMORY.md until a consolidation is accepted)."""

    thread_id: str
    forgotten_at: int
    line_no: int  # the appended line, 1-based
    was_consolidated: bool


@dataclass(frozen=True)
class ExtractLog:
    """By thread id: the newest prune, the newest extraction and the forget memdeck recorded;
    and when a consolidation was last accepted (0: never)."""

    pruned: dict[str, PrunedMemory] = field(default_factory=dict)
    outcomes: dict[str, ExtractOutcome] = field(default_factory=dict)
    forgotten: dict[str, ForgottenSession] = field(default_factory=dict)
    last_accepted_at: float = 0.0


def record_pruned(conn: sqlite3.Connection, version: str,
                  rows: Iterable[PrunedMemory]) -> None:
    conn.executemany(
        "INSERT INTO pruned_memories (version, thread_id, source_updated_at, generated_at, "
        "usage_count, last_usage, pruned_at, max_unused_days) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(version, r.thread_id, r.source_updated_at, r.generated_at, r.usage_count,
          r.last_usage, r.pruned_at, r.max_unused_days) for r in rows])


def record_outcome(conn: sqlite3.Connection, version: str, outcome: ExtractOutcome) -> None:
    conn.execute(
        "INSERT INTO extract_outcomes (version, thread_id, source_updated_at, outcome, "
        "finished_at, detail) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(version, thread_id) DO "
        "UPDATE SET source_updated_at = excluded.source_updated_at, "
        "outcome = excluded.outcome, finished_at = excluded.finished_at, "
        "detail = excluded.detail",
        (version, outcome.thread_id, outcome.source_updated_at, outcome.outcome,
         outcome.finished_at, outcome.detail))


def record_forgotten(conn: sqlite3.Connection, version: str, f: ForgottenSession) -> None:
    conn.execute(
        "INSERT INTO forgotten_sessions (version, thread_id, forgotten_at, line_no, "
        "was_consolidated) VALUES (?, ?, ?, ?, ?) ON CONFLICT(version, thread_id) DO UPDATE "
        "SET forgotten_at = excluded.forgotten_at, line_no = excluded.line_no, "
        "was_consolidated = excluded.was_consolidated",
        (version, f.thread_id, f.forgotten_at, f.line_no, int(f.was_consolidated)))


def read_extract_log(conn: sqlite3.Connection, version: str) -> ExtractLog:
    """The log for one memory version; empty when it cannot be read."""
    try:
        pruned = {}
        for r in conn.execute(
                "SELECT thread_id, source_updated_at, generated_at, usage_count, last_usage, "
                "pruned_at, max_unused_days FROM pruned_memories WHERE version = ? "
                "ORDER BY pruned_at, id", (version,)):
            pruned[r[0]] = PrunedMemory(r[0], int(r[1] or 0), int(r[2] or 0), r[3], r[4],
                                        int(r[5] or 0), int(r[6] or 0))
        outcomes = {
            r[0]: ExtractOutcome(r[0], int(r[1] or 0), r[2], int(r[3] or 0), r[4] or "")
            for r in conn.execute("SELECT thread_id, source_updated_at, outcome, finished_at, "
                                  "detail FROM extract_outcomes WHERE version = ?", (version,))
        }
        forgotten = {
            r[0]: ForgottenSession(r[0], int(r[1] or 0), int(r[2] or 0), bool(r[3]))
            for r in conn.execute("SELECT thread_id, forgotten_at, line_no, was_consolidated "
                                  "FROM forgotten_sessions WHERE version = ?", (version,))
        }
        accepted = conn.execute("SELECT MAX(decided_at) FROM proposals WHERE version = ? AND "
                                "status IN ('accepted', 'partial')", (version,)).fetchone()[0]
    except sqlite3.Error:
        return ExtractLog()
    return ExtractLog(pruned, outcomes, forgotten, float(accepted or 0))
