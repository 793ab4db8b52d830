"""Sessions as the user sees them: the index joined with the pipeline state, memdeck's own
extract log and the config."""

from __future__ import annotations

import os
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
from .status import StatusFacts, explain


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
    status: str
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
        return source_label(self.source, self.originator)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rollout_path": self.rollout_path,
            "source": self.source,
            "source_label": self.source_label,
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
        # os.path, not Path: called for every row of a 10,000-session listing
        return os.path.basename(self.cwd.rstrip("/\\")) or self.cwd if self.cwd else "?"

    @property
    def started_ts(self) -> float | None:
        return parse_iso(self.started_at)


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
    out = []
    for row, (mode, origin) in zip(rows, modes, strict=True):
        tid = row.thread_id or ""
        thread = state.threads.get(tid)
        facts = StatusFacts(
            readable=row.file_problem is None and row.thread_id is not None,
            unreadable_reason=row.file_problem or "no thread id",
            archived=row.archived or bool(thread and thread.archived),
            source=row.source,
            source_label=source_label(row.source, row.originator),
            memory_mode=mode,
            memory_mode_origin=origin,
            has_user_message=bool(row.preview),
            updated_at=row.updated_at,
            output=pipeline.outputs.get(tid),
            job=pipeline.stage1_jobs.get(tid),
            pruned=log.pruned.get(tid),
            logged=log.outcomes.get(tid),
            phase2_rank=ranks.get(tid),
        )
        status, reason = explain(facts, cfg, now)
        if row.bad_lines and status != "unreadable":
            reason += f" ({row.bad_lines} bad line{'s' if row.bad_lines > 1 else ''})"
        out.append(Session(
            id=row.thread_id, rollout_path=row.path, source=row.source, cwd=row.cwd,
            started_at=row.started_at, updated_at=row.updated_at, memory_mode=mode,
            preview=row.preview, status=status, reason=reason, bad_lines=row.bad_lines,
            archived=facts.archived, model=row.model, format=row.format, size=row.size,
            git_branch=row.git_branch, originator=row.originator,
        ))
    out.sort(key=lambda s: (-s.updated_at, s.rollout_path))
    return out


def find_session(sessions: list[Session], key: str) -> Session:
    """By full id, unique id prefix (4+ characters) or rollout path."""
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
            raise NotFound(f"{key!r} matches {len(pref)} sessions; give more of the id")
    raise NotFound(f"no session {key!r} in this home (see `memdeck sessions`)")
