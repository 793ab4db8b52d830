"""Each session's memory status and the reason, in words with numbers
(docs/architecture.md "Status").

The first rule that applies wins, in this order: unreadable, archived, not_interactive,
disabled, polluted, empty; then the pipeline's own states (running, failed, extracted,
pruned, no_output) while they still describe the session as it is on disk; then too_old,
too_recent, too_old_to_keep, eligible by Codex's selection rules (docs/codex-format.md
"Phase 1 selection") and the thresholds in config.toml.

Age after phase 1 follows docs/codex-format.md "Pruning" and "Phase 2 input selection": a raw
memory is consolidated only while `COALESCE(last_usage, source_updated_at)` is within
`max_unused_days`, and only the first `max_raw_memories_for_consolidation` of the ranking;
one outside that window and not in the last consolidation is pruned by the next pipeline run.
So `too_old_to_keep` is a session phase 1 would take whose memory phase 2 never would, and
`pruned` a session whose raw memory existed and was removed, told from "nothing durable" by
what memdeck recorded (index/extract_log.py), since Codex keeps the job and no trace.
"""

from __future__ import annotations

import time
from typing import Literal, NamedTuple, get_args

from ..codex.fragments import INTERACTIVE_SOURCES
from ..codex.pipeline_snapshot import Job, Stage1Output
from ..codex.settings import MemoriesConfig
from ..formatting import human_duration
from ..workers import dead_memdeck_worker
from .extract_log import ExtractOutcome, ForgottenSession, PrunedMemory

# every status a session can have, in the order the app lists them (index/status.py `explain`)
Status = Literal[
    "extracted", "pruned", "no_output", "failed", "running", "eligible", "too_recent",
    "too_old_to_keep", "too_old", "disabled", "polluted", "not_interactive", "archived",
    "empty", "unreadable",
]
STATUSES: tuple[Status, ...] = get_args(Status)
DAY = 86400


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
    pruned: PrunedMemory | None = None  # memdeck's record of pruning this thread's row
    logged: ExtractOutcome | None = None  # memdeck's record of its last extraction of it
    phase2_rank: int | None = None  # the row's place in phase 2's ranking; None: not ranked
    forgotten: ForgottenSession | None = None  # memdeck's record of the user forgetting it
    last_accepted_at: float = 0.0  # memdeck's last accepted consolidation (0: none)
    phase2_done_at: float | None = None  # the global job's finish while it is `done`


def _kind_in_words(label: str) -> str:
    """"sub-agent: review" as "sub-agent (review)", so that the reason reads as a sentence."""
    kind, sep, name = label.partition(": ")
    return f"{kind} ({name})" if sep else label


# statuses whose reason is about what Codex's pipeline will do next
PIPELINE = frozenset({"eligible", "too_recent", "too_old_to_keep", "extracted", "failed",
                      "running", "too_old", "pruned", "no_output"})
MEMORIES_OFF = ("memories are off (config.toml does not set [features] memories = true): "
                "Codex extracts, consolidates and uses nothing until they are on; then: ")


def explain(f: StatusFacts, cfg: MemoriesConfig, now: float) -> tuple[Status, str]:
    """The status and its reason, saying what Codex will actually do: with memories off it
    does nothing, whatever the session would be then."""
    status, reason = _explain(f, cfg, now)
    if not cfg.feature_enabled and status in PIPELINE:
        return status, MEMORIES_OFF + reason
    return status, reason


def _explain(f: StatusFacts, cfg: MemoriesConfig, now: float) -> tuple[Status, str]:
    if not f.readable:
        return "unreadable", f.unreadable_reason or "cannot be read as a rollout"
    if f.archived:
        return "archived", "archived: Codex never takes memories from archived sessions"
    if f.source not in INTERACTIVE_SOURCES:
        return "not_interactive", (f"{_kind_in_words(f.source_label)} session: Codex takes "
                                   "memories only from interactive sessions (CLI or VS Code)")
    if f.memory_mode == "disabled":
        if (fg := f.forgotten) is not None and f.memory_mode_origin == f"line {fg.line_no}":
            return "disabled", _forgotten(fg, f)
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
            return "extracted", (f"raw memory extracted {ago} ago, "
                                 f"{_standing(out, f.phase2_rank, cfg, now)}{used}")
        note = "; extracted before, changed since"
    if job is not None and job.status == "done" and out is None:
        if (job.last_success_watermark or 0) >= f.updated_at:
            return _no_row(f, job, cfg, now)
        if _pruned_record(f, job) is not None:
            note = "; pruned before, changed since"

    idle = now - f.updated_at
    max_age = cfg.max_rollout_age_days * DAY
    keep = cfg.max_unused_days * DAY
    if idle > max_age:
        also = (f"; phase 2 would not take it either (max_unused_days = "
                f"{cfg.max_unused_days})" if idle > keep else "")
        return "too_old", (f"last active {human_duration(idle)} ago, older than "
                           f"max_rollout_age_days = {cfg.max_rollout_age_days}{also}{note}")
    if not cfg.generate_memories:  # Codex still takes a session that started with them on
        note += ("; generate_memories is off, but that only switches new sessions off: "
                 "Codex still extracts this one")
    need = cfg.min_rollout_idle_hours * 3600
    if idle < need:
        return "too_recent", (f"idle {human_duration(idle)}, needs "
                              f"{cfg.min_rollout_idle_hours} h{note}")
    if idle > keep:
        return "too_old_to_keep", (
            f"last active {human_duration(idle)} ago: extractable (max_rollout_age_days = "
            f"{cfg.max_rollout_age_days}), but phase 2 only takes memories used or active in "
            f"the last {cfg.max_unused_days} d (max_unused_days = {cfg.max_unused_days}): its "
            f"raw memory would be pruned, never consolidated{note}")
    return "eligible", f"idle {human_duration(idle)}, ready for extraction{note}"


def _forgotten(fg: ForgottenSession, f: StatusFacts) -> str:
    """The line that switched memories off is the one memdeck appended when the user forgot
    the session: say that, not "switched off during the session". A forget of a consolidated
    memory left the global job pending; it is `done` again once a consolidation ran."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(fg.forgotten_at))
    why = f"forgotten with memdeck {when}: raw memory deleted, never extracted again"
    since = ((f.phase2_done_at is not None and f.phase2_done_at >= fg.forgotten_at)
             or f.last_accepted_at > fg.forgotten_at)
    if fg.was_consolidated and not since:
        why += ("; MEMORY.md keeps what it taught until the next consolidation is accepted "
                "(c, then Review)")
    return why


def local_date(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


def _standing(out: Stage1Output, rank: int | None, cfg: MemoriesConfig, now: float) -> str:
    """Where an extracted memory stands with phase 2 (docs/codex-format.md "Phase 2 input
    selection", "Pruning")."""
    sel = out.selected_for_phase2
    unused = now - (out.last_usage if out.last_usage is not None else out.source_updated_at)
    days = cfg.max_unused_days
    if unused > days * DAY:
        why = f"unused for {human_duration(unused)} > max_unused_days = {days}"
        if sel:
            return f"in the consolidated memory until the next consolidation drops it ({why})"
        return f"never to be consolidated ({why}; the next extract prunes it)"
    cap = cfg.max_raw_memories_for_consolidation
    if rank is not None and rank > cap:
        where = ("in the consolidated memory until the next consolidation leaves it out" if sel
                 else "left out of consolidation")
        return (f"{where} (it ranks {rank} by citations and recency; phase 2 takes the first "
                f"{cap}, max_raw_memories_for_consolidation)")
    return "in the consolidated memory" if sel else "waiting for consolidation"


def _pruned_record(f: StatusFacts, job: Job) -> PrunedMemory | None:
    """memdeck's prune record for the row this job produced: same watermark, pruned after the
    job finished (an older record, from before a reset, is not evidence)."""
    p = f.pruned
    if (p is not None and p.source_updated_at == (job.last_success_watermark or 0)
            and p.pruned_at >= (job.finished_at or 0)):
        return p
    return None


def _no_row(f: StatusFacts, job: Job, cfg: MemoriesConfig, now: float) -> tuple[Status, str]:
    """Phase 1 ran at this version and no row is left: nothing durable, or pruned since.
    Codex's tables look the same either way; memdeck's records tell them apart."""
    ago = human_duration(now - (job.finished_at or now))
    p = _pruned_record(f, job)
    if p is not None:
        cited = (f"last cited {local_date(p.last_usage)}" if p.last_usage is not None
                 else "never cited")
        return "pruned", (f"pruned {local_date(p.pruned_at)}: unused for "
                          f"{human_duration(p.pruned_at - p.unused_since)} > max_unused_days = "
                          f"{p.max_unused_days} ({cited}, not in the last consolidation); "
                          "extracted again only if the session changes")
    wm = job.last_success_watermark or 0
    log = f.logged
    mine = (log is not None and log.source_updated_at == wm
            and log.finished_at == (job.finished_at or 0))
    days = cfg.max_unused_days
    if mine and log is not None and log.outcome == "extracted":
        earliest = wm + days * DAY
        when = f" on or after {local_date(earliest)}" if earliest <= now else ""
        return "pruned", (f"pruned by Codex{when} (Codex keeps no date): memdeck extracted a "
                          f"raw memory {ago} ago, unused for more than max_unused_days = {days} "
                          "since; extracted again only if the session changes")
    if not mine and now - wm > days * DAY:
        return "no_output", (f"extracted {ago} ago, no raw memory left: nothing durable, or "
                             f"pruned after {days} d unused (max_unused_days); Codex's tables "
                             "do not say which")
    why = log.detail if mine and log is not None and log.detail else "nothing durable to remember"
    return "no_output", f"extracted {ago} ago: {why}"


def _owner(worker_id: str | None) -> str:
    if not worker_id:
        return "unknown worker"
    if worker_id.startswith("memdeck:"):
        return "memdeck"
    return f"Codex session {worker_id[:8]}"
