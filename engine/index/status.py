"""Each session's memory status and the reason, in words with numbers
(docs/architecture.md "Status").

The first rule that applies wins, in this order: unreadable, archived, not_interactive,
disabled, polluted, empty; then the pipeline's own states (running, failed, extracted,
no_output) while they still describe the session as it is on disk; then too_old, too_recent,
eligible by Codex's selection rules (docs/codex-format.md "Phase 1 selection") and the
thresholds in config.toml.
"""

from __future__ import annotations

from typing import NamedTuple

from ..codex.fragments import INTERACTIVE_SOURCES
from ..codex.pipeline_snapshot import Job, Stage1Output
from ..codex.settings import MemoriesConfig
from ..formatting import human_duration
from ..workers import dead_memdeck_worker

STATUSES = (
    "extracted", "no_output", "failed", "running", "eligible", "too_recent", "too_old",
    "disabled", "polluted", "not_interactive", "archived", "empty", "unreadable",
)


class StatusFacts(NamedTuple):
    """What the explainer needs to know about one session."""

    readable: bool
    unreadable_reason: str | None
    archived: bool
    source: str | None
    source_label: str  # what the user ran, in words (fragments.source_label)
    memory_mode: str  # effective: enabled | disabled | polluted
    memory_mode_origin: str  # "start", "line N", "catalogue"
    has_user_message: bool
    updated_at: int  # seconds (the rollout's mtime, as Codex takes it)
    output: Stage1Output | None
    job: Job | None


def explain(f: StatusFacts, cfg: MemoriesConfig, now: float) -> tuple[str, str]:
    if not f.readable:
        return "unreadable", f.unreadable_reason or "cannot be read as a rollout"
    if f.archived:
        return "archived", "archived: Codex never takes memories from archived sessions"
    if f.source not in INTERACTIVE_SOURCES:
        return "not_interactive", (f"{f.source_label} session: Codex takes memories only from "
                                   "interactive sessions (source cli or vscode)")
    if f.memory_mode == "disabled":
        if f.memory_mode_origin == "start":
            why = "memory generation was off when this session started"
        elif f.memory_mode_origin == "catalogue":
            why = "memories are off for this session in Codex's thread catalogue"
        else:
            why = f"memories were switched off during the session ({f.memory_mode_origin})"
        return "disabled", why
    if f.memory_mode == "polluted":
        return "polluted", ("used outside context (web search or MCP) while "
                            "disable_on_external_context is on")
    if f.memory_mode != "enabled":
        return "disabled", f"unknown memory mode {f.memory_mode!r}; Codex only reads 'enabled'"
    if not f.has_user_message:
        return "empty", "no user message: nothing to learn from"

    note = ""
    job, out = f.job, f.output
    if (job is not None and job.status == "running" and (job.lease_until or 0) > now
            and not dead_memdeck_worker(job.worker_id)):
        left = human_duration((job.lease_until or 0) - now)
        owner = _owner(job.worker_id)
        return "running", f"extraction running ({owner}), lease ends in {left}"
    if job is not None and job.status == "error":
        covered = (job.input_watermark or 0) >= f.updated_at
        if covered:
            err = (job.last_error or "unknown error").splitlines()[0][:160]
            if job.retry_remaining <= 0:
                return "failed", (f"phase 1 failed: {err}; no retries left until the "
                                  f"session changes")
            wait = (job.retry_at or 0) - now
            when = f"retry in {human_duration(wait)}" if wait > 0 else "retry due now"
            return "failed", f"phase 1 failed: {err}; {when}, {job.retry_remaining} left"
        note = "; failed before, changed since"
    if out is not None:
        if out.source_updated_at >= f.updated_at:
            ago = human_duration(now - out.generated_at)
            used = (f", cited {out.usage_count}×" if out.usage_count else ", never cited yet")
            sel = "in the consolidated memory" if out.selected_for_phase2 else (
                "waiting for consolidation")
            return "extracted", f"raw memory extracted {ago} ago, {sel}{used}"
        note = "; extracted before, changed since"
    if (job is not None and job.status == "done"
            and (job.last_success_watermark or 0) >= f.updated_at and out is None):
        ago = human_duration(now - (job.finished_at or now))
        return "no_output", f"extracted {ago} ago: nothing durable to remember"

    idle = now - f.updated_at
    max_age = cfg.max_rollout_age_days * 86400
    if idle > max_age:
        return "too_old", (f"last active {human_duration(idle)} ago, older than "
                           f"max_rollout_age_days = {cfg.max_rollout_age_days}{note}")
    need = cfg.min_rollout_idle_hours * 3600
    if idle < need:
        return "too_recent", (f"idle {human_duration(idle)}, needs "
                              f"{cfg.min_rollout_idle_hours} h{note}")
    return "eligible", f"idle {human_duration(idle)}, ready for extraction{note}"


def _owner(worker_id: str | None) -> str:
    if not worker_id:
        return "unknown worker"
    if worker_id.startswith("memdeck:"):
        return "memdeck"
    return f"Codex session {worker_id[:8]}"
