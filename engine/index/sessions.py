"""Sessions as the user sees them: the index joined with the pipeline state, memdeck's own
extract log and the config."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from typing import Any, NamedTuple

from ..clock import parse_iso
from ..codex.fragments import source_label
from ..codex.pipeline_snapshot import PipelineSnapshot, Stage1Output
from ..codex.settings import MemoriesConfig
from ..codex.state_db import StateSnapshot
from ..errors import NotFound
from ..formatting import iso_utc
from .extract_log import ExtractLog
from .session_index import IndexedSession
from .status import Status, StatusFacts, explain


class Session(NamedTuple):
    """A session as the user sees it. Immutable; a NamedTuple because listings hold 10,000."""

    id: str | None
    rollout_path: str
    source: str | None
    cwd: str | None
    started_at: str | None  # as the rollout's session_meta wrote it
    updated_at: int
    memory_mode: str
    preview: str
    status: Status
    reason: str
    bad_lines: int
    archived: bool = False
    model: str | None = None
    format: str | None = None
    size: int = 0
    git_branch: str | None = None
    originator: str | None = None

    @property
    def source_label(self) -> str:
        """What the user ran: "Codex TUI", "VS Code", "exec", "CLI", "sub-agent: review", …"""
        return _label(self.source, self.originator)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rollout_path": self.rollout_path,
            "source": self.source,
            "source_label": _label(self.source, self.originator),
            "cwd": self.cwd,
            "started_at": normalize_iso(self.started_at),
            "updated_at": iso_utc(self.updated_at),
            "memory_mode": self.memory_mode,
            "preview": self.preview,
            "status": self.status,
            "reason": self.reason,
            "bad_lines": self.bad_lines,
        }

    @property
    def project(self) -> str:
        return project_name(self.cwd)

    @property
    def started_ts(self) -> float | None:
        return parse_iso(self.started_at)


@lru_cache(maxsize=256)
def _label(source: str | None, originator: str | None) -> str:
    """`source_label`, once per (source, originator): a home has a handful of them."""
    return source_label(source, originator)


class ThreadLabel(NamedTuple):
    """What names a session where its status is not shown (`Engine.thread_labels`)."""

    project: str
    preview: str


def project_name(cwd: str | None) -> str:
    """The cwd's last folder, for a POSIX and a Windows path alike (`C:\\Users\\me\\shop` →
    `shop`); string methods, not Path: called for every row of a 10,000-session listing."""
    if not cwd:
        return "?"
    trimmed = cwd.rstrip("/\\")
    return trimmed[max(trimmed.rfind("/"), trimmed.rfind("\\")) + 1:] or cwd


def normalize_iso(text: str | None) -> str | None:
    """Codex's `2026-08-20T14:03:11.497Z` as the CLI's `2026-08-20T14:03:11Z`."""
    if text is None:
        return None
    if len(text) == 24 and text[10] == "T" and text[-1] == "Z":  # Codex's own format
        return text[:19] + "Z"
    return iso_utc(parse_iso(text))


def effective_memory_mode(row: IndexedSession, state: StateSnapshot) -> tuple[str, str]:
    """(mode, origin). The rollout's last session_meta decides; Codex's catalogue adds
    `polluted` (which it records only there) and fills in when the rollout says nothing."""
    thread = state.threads.get(row.thread_id or "")
    if thread is not None and thread.memory_mode == "polluted":
        return "polluted", "catalogue"
    if row.memory_mode:
        line = row.memory_mode_line or 1
        return row.memory_mode, "start" if line <= 1 else f"line {line}"
    if thread is not None and thread.memory_mode != "enabled":
        return thread.memory_mode, "catalogue"
    return "enabled", "start"


def phase2_ranks(outputs: dict[str, Stage1Output], enabled: set[str], max_unused_days: int,
                 now: float) -> dict[str, int]:
    """Each row's place (1 = first) in phase 2's ranking (docs/codex-format.md "Phase 2 input
    selection", as phase2/workspace.py `select_inputs` applies it): rows of enabled threads
    used or extracted within `max_unused_days`, by citations, then recency, then watermark,
    then thread id, all descending. Rows outside the window are not ranked. (The listing does
    not read the texts, so a blank row ranks here though phase 2 would skip it.)"""
    cutoff = int(now) - max_unused_days * 86400

    def last(o: Stage1Output) -> int:
        return o.last_usage if o.last_usage is not None else o.source_updated_at

    ranked = [o for o in outputs.values() if o.thread_id in enabled and last(o) >= cutoff]
    ranked.sort(key=lambda o: o.thread_id, reverse=True)
    ranked.sort(key=lambda o: (o.usage_count or 0, last(o), o.source_updated_at), reverse=True)
    return {o.thread_id: i for i, o in enumerate(ranked, 1)}


def build_sessions(rows: list[IndexedSession], cfg: MemoriesConfig, pipeline: PipelineSnapshot,
                   state: StateSnapshot, now: float,
                   log: ExtractLog | None = None) -> list[Session]:
    log = log or ExtractLog()
    modes = [effective_memory_mode(row, state) for row in rows]
    enabled = {row.thread_id for row, (mode, _) in zip(rows, modes, strict=True)
               if mode == "enabled" and row.thread_id}
    ranks = phase2_ranks(pipeline.outputs, enabled, cfg.max_unused_days, now)
    g = pipeline.global_job
    phase2_done_at = float(g.finished_at or 0) if g is not None and g.status == "done" else None
    out = []
    threads, outputs, jobs = state.threads, pipeline.outputs, pipeline.stage1_jobs
    pruned, outcomes, forgotten = log.pruned, log.outcomes, log.forgotten
    accepted_at = log.last_accepted_at
    # positional construction below: keywords cost a 10,000-row listing 20 ms (the fields'
    # order is StatusFacts' and Session's)
    for row, (mode, origin) in zip(rows, modes, strict=True):
        tid = row.thread_id or ""
        thread = threads.get(tid)
        job = jobs.get(tid)
        if job is not None and job.last_error:  # Codex's own (or an older memdeck's) words
            from ..redact import redact  # only then: most listings have no failed job

            job = replace(job, last_error=redact(job.last_error))
        archived = row.archived or bool(thread and thread.archived)
        facts = StatusFacts(
            row.file_problem is None and row.thread_id is not None,  # readable
            row.file_problem or "no thread id",  # unreadable_reason
            archived, row.source, _label(row.source, row.originator), mode, origin,
            bool(row.preview),  # has_user_message
            row.updated_at, outputs.get(tid), job, pruned.get(tid), outcomes.get(tid),
            ranks.get(tid), forgotten.get(tid), accepted_at, phase2_done_at,
        )
        status, reason = explain(facts, cfg, now)
        if row.bad_lines and status != "unreadable":
            reason += f" ({row.bad_lines} bad line{'s' if row.bad_lines > 1 else ''})"
        out.append(Session(
            row.thread_id, row.path, row.source, row.cwd, row.started_at, row.updated_at,
            mode, row.preview, status, reason, row.bad_lines, archived, row.model,
            row.format, row.size, row.git_branch, row.originator,
        ))
    out.sort(key=lambda s: (-s.updated_at, s.rollout_path))
    return out


def find_session(sessions: list[Session], key: str) -> Session:
    """By full id, unique id prefix (4+ characters, any length up to the full id) or rollout
    path. An ambiguous prefix names, in one line, the sessions it matches."""
    k = key.strip().lower()
    exact = [s for s in sessions if s.id == k or s.rollout_path == key
             or os.path.basename(s.rollout_path) == key]
    if exact:
        return min(exact, key=lambda s: (s.archived, -s.updated_at))
    if len(k) >= 4:
        pref = [s for s in sessions if s.id and s.id.startswith(k)]
        if pref and len({s.id for s in pref}) == 1:  # one thread (maybe also in archive)
            return min(pref, key=lambda s: (s.archived, -s.updated_at))
        if len(pref) > 1:
            raise NotFound(_ambiguous(key, pref))
    raise NotFound(f"no session {key!r} in this home (see `memdeck sessions`)")


SHORT_ID = 8  # the fewest characters of an id shown where ids are shown short


def short_id_length(ids: Iterable[str | None], shortest: int = SHORT_ID) -> int:
    """How many leading characters (at least `shortest`) tell these ids apart: sub-agents
    spawned in the same second share their first 8 (ids are UUIDv7, time first)."""
    distinct = sorted({i for i in ids if i})
    n = shortest
    # sorted: each id shares its longest prefix with a neighbour
    for a, b in zip(distinct, distinct[1:], strict=False):
        n = max(n, len(os.path.commonprefix([a, b])) + 1)
    return min(n, max(map(len, distinct), default=n))


def _ambiguous(key: str, matches: list[Session], shown: int = 4) -> str:
    by_id = {s.id: s for s in sorted(matches, key=lambda s: (s.archived, -s.updated_at))}
    width = short_id_length(by_id)
    parts = [f"{i[:width]} ({_one_line(s.preview) or s.project})"
             for i, s in list(by_id.items())[:shown] if i]
    more = f", and {len(by_id) - shown} more" if len(by_id) > shown else ""
    return (f"{key!r} matches {len(by_id)} sessions: {', '.join(parts)}{more}; "
            "give more of the id")


def _one_line(text: str, width: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
