"""memdeck's engine: everything except drawing. The CLI and the TUI both talk to `Engine`.

The engine never imports Textual or Rich (a test proves it). Its methods are plain
synchronous calls, safe from any thread, returning frozen dataclasses; warnings travel with
the result they were found with (`Listing`, `MemoryRows`), never on the engine. The facade
builds the model backends and hands each pipeline stage exactly what it needs; no module
below receives the `Engine`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .clock import Clock, SystemClock, parse_iso
from .codex.home import CodexHome
from .codex.pipeline_snapshot import read_snapshot
from .codex.settings import SettingValue
from .codex.state_db import read_threads
from .errors import ConfigError, HomeError, MemdeckError, NotFound, os_error_text
from .exports import LAZY as _LAZY
from .facade_changes import MemoryFolderMethods
from .facade_projects import ProjectMethods
from .facade_reads import ReadPathMethods
from .facade_sync import SyncMethods
from .index.extract_log import read_extract_log
from .index.rollout_names import not_regular_warning
from .index.session_index import RefreshStats, SessionIndex
from .index.sessions import Session, ThreadLabel, build_sessions, find_session
from .results import Listing, MemoryRows, RolloutProblem, SessionDetail, home_warnings
from .settings_access import Settings
from .store import Store

if TYPE_CHECKING:  # the lazily re-exported names below, for the type checker
    import threading
    from collections.abc import Callable

    from .backends.openai_client import BackendConfig
    from .codex.citations import strip_citations
    from .codex.external_import import ImportScope
    from .codex.home_info import HomeInfo
    from .codex.pipeline_snapshot import Stage1Output
    from .codex.rollout import Rollout
    from .codex.settings import KeySpec, all_keys, resolve_key, toml_literal
    from .codex.transcript import BASE_INSTRUCTIONS, TranscriptEntry
    from .formatting import (
        ago,
        human_duration,
        human_size,
        iso_utc,
        local_time,
        local_time_with_seconds,
        rfc3339_utc,
        time_of_day,
    )
    from .index.listing_head import ListingHead
    from .index.sessions import short_id_length
    from .index.status import STATUSES
    from .memory_folder.accept import AcceptRefused
    from .memory_folder.backup import Backup
    from .memory_folder.edits import (
        MemoryConflict,
        MemoryFileInfo,
        MemoryFileText,
        MemoryNote,
        MemorySaved,
        SecretInText,
    )
    from .memory_folder.history import HistoryEntry
    from .memory_folder.purge import Purged
    from .memory_folder.writer import MemoryFolderWriter
    from .phase1.backend import Phase1Backend, Phase1Output
    from .phase1.forget import ForgetResult
    from .phase1.runner import ExtractReport, ExtractResult, Progress
    from .phase2.backend import Phase2Backend, Phase2Result
    from .phase2.conflicts import Conflict
    from .phase2.hunks import Hunk
    from .phase2.notes import Note, NoteEffect
    from .phase2.proposals import AddedSecret, Proposal
    from .phase2.review import ProposalState
    from .read_path.agent_view import InjectedSummary
    from .read_path.citation_usage import CitationEvent, CitationReport, LineUsage
    from .read_path.fed_lines import FedLines
    from .read_path.line_usage import (
        CitingMessage,
        CitingSession,
        FileUsage,
        LineStat,
        RemovedCitation,
    )
    from .read_path.memory_blocks import MemoryBlock, SummaryRef
    from .read_path.preview import Preview, ReceivedSummary
    from .read_path.said_remembered import (
        RawLine,
        SaidMessage,
        SaidRemembered,
        Verdict,
    )
    from .read_path.scope_map import ScopedBlock
    from .read_path.trace import (
        LineChange,
        Stage1Row,
        SummaryTrace,
        Trace,
        TracedSession,
        TraceLineError,
    )
    from .read_path.turn_match import TurnMatch
    from .redact import redact_stream
    from .sync.push_pull import PushResult, SyncStatus
    from .sync.repo import Remote, SyncError
    from .watch import Listener, WatchActions, Watcher, WatchEvent

__all__ = [
    "ConfigError", "Engine", "HomeError", "Listing", "MemdeckError", "MemoryRows", "NotFound",
    "RefreshStats", "RolloutProblem", "Session", "SessionDetail", "SettingValue", "ThreadLabel",
    "demo_home", "os_error_text",
]

__all__ += sorted(_LAZY)


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


class Engine(SyncMethods, ReadPathMethods, ProjectMethods):
    """One Codex home. Build once, share across threads. The changes of the memory folder
    (facade_changes.py) and the read path (facade_reads.py) are its methods too."""

    # told what `open` recovered (a change a killed memdeck left, finished or undone): the
    # CLI prints it on stderr, the app shows it; None: nobody is told
    announce: Callable[[str], None] | None = None

    def __init__(self, home: CodexHome, clock: Clock | None = None) -> None:
        self.home = home
        self.clock = clock or SystemClock()
        self._store: Store | None = None
        self._settings = Settings(home)
        self.read_only_reason = ""  # set when the home cannot be written: the index is scratch

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None,
             clock: Clock | None = None) -> Engine:
        """The engine on a home, after recovering what a killed memdeck left in it: every
        command that opens a home finishes an interrupted change first."""
        engine = cls(CodexHome.open(home), clock)
        try:
            done = engine.recover()
        except MemdeckError:  # reads go on; a change tries again first and says why it can't
            done = None
        if done and cls.announce is not None:
            cls.announce(done)
        return engine

    @property
    def store(self) -> Store:
        if self._store is None:
            if self.home.read_only():
                # a read-only home (a mount, another user's): reads go on with an index kept
                # for this run only (a copy of memdeck's own when there is one); every change
                # is refused as before
                self.read_only_reason = f"{self.home.root} is read-only"
                self._store = Store.scratch(self.home.memdeck_db)
            else:
                self.home.ensure_memdeck_dir()
                self._store = Store(self.home.memdeck_db)
        return self._store

    @property
    def index(self) -> SessionIndex:
        return SessionIndex(self.home, self.store, clock=self.clock)

    # -- sessions ---------------------------------------------------------------------
    def refresh(self) -> RefreshStats:
        return self.index.refresh()

    def listing(self, refresh: bool = True,
                on_progress: Callable[[int, int], None] | None = None) -> Listing:
        """The sessions, newest first (the index caught up with the disk first unless
        `refresh` is false), and what is worth a warning about the home. `on_progress(done,
        total)` is called, in this thread, as the rollouts being indexed are stored: a
        `listing(refresh=False)` made then holds the ones indexed so far."""
        rows = self.index.sessions(refresh=refresh, on_batch=on_progress)
        pipeline = read_snapshot(self.home.pipeline_db)
        state = read_threads(self.home.state_db)
        warnings = home_warnings(self.home, self.index, pipeline, state)
        skipped = not_regular_warning((r.rel, r.file_problem) for r in rows)
        if skipped:  # a FIFO or a device named like a rollout: never opened, but said
            warnings += (skipped,)
        if self.read_only_reason:
            warnings += (f"{self.home.root} cannot be written: memdeck shows it with an "
                         "index kept for this run only, and can change nothing here",)
        log = read_extract_log(self.store.conn(), self.home.memory_version)
        return Listing(build_sessions(rows, self.home.config, pipeline, state,
                                      self.clock.now(), log), warnings)

    def listing_head(self) -> ListingHead | None:
        """The head of the last listing the app kept (index/listing_head.py), to paint at
        once while the listing of now is made; None when there is none to trust. Reads one
        small file: cheap enough for the moment before the app's first frame."""
        from .index.listing_head import read_head

        return read_head(self.home.memdeck_dir)

    def keep_listing_head(self, listing: Listing) -> None:
        """Keep `listing`'s head for the next start (not for a home memdeck cannot write)."""
        from .index.listing_head import save_head

        if self.read_only_reason or self.home.read_only():
            return
        try:
            save_head(self.home.memdeck_dir, listing.sessions, self.clock.now())
        except OSError:  # a cache: the next start waits for its listing instead
            pass

    def sessions(self, refresh: bool = True) -> list[Session]:
        """`listing(refresh).sessions`, for callers that show no warnings."""
        return self.listing(refresh).sessions

    def thread_labels(self) -> dict[str, ThreadLabel]:
        """Thread id -> its project (the cwd's last folder, "" without one) and preview, from
        the index as it is: for panes that only name sessions (Raw memories, Review's inputs);
        `sessions()` also decides every status, a few times slower on a big home."""
        from .index.sessions import project_name

        return {s.thread_id: ThreadLabel(project_name(s.cwd) if s.cwd else "", s.preview)
                for s in self.index.sessions(refresh=False) if s.thread_id}

    def session(self, key: str, refresh: bool = True) -> SessionDetail:
        """One session with its transcript (read from the rollout now). `refresh=False`
        looks it up in the index as it is (the app: its listing is kept current)."""
        listing = self.listing(refresh=refresh)
        try:
            s = find_session(listing.sessions, key)
        except NotFound:
            if refresh:
                raise
            listing = self.listing()  # not indexed yet: read the disk after all
            s = find_session(listing.sessions, key)
        return self.session_of(s, listing.warnings)

    def session_of(self, s: Session, warnings: tuple[str, ...] = ()) -> SessionDetail:
        """The transcript of a session the caller holds from a listing (no look-up: on a big
        home that costs more than reading a 3 MB rollout)."""
        from .codex.rollout import read_rollout
        from .codex.transcript import transcript

        rollout = read_rollout(s.rollout_path)
        problems = [RolloutProblem(line=p.line_no, kind=p.kind, message=p.message)
                    for p in rollout.problems]
        return SessionDetail(s, rollout, transcript(rollout), rollout.pending_bytes, problems,
                             tuple(warnings))

    # -- phase 1 ----------------------------------------------------------------------
    def phase1_backend(self, name: str | None = None) -> Phase1Backend:
        """The backend to extract with: `offline`, `openai`, or memdeck's setting (auto)."""
        from .backends.choice import phase1_backend

        return phase1_backend(self.backend_name(name), self._backend_config())

    def phase2_backend(self, name: str | None = None) -> Phase2Backend:
        """The backend to consolidate with: `offline` (the deterministic merge), `openai` (the
        agent), or memdeck's setting (auto)."""
        from .backends.choice import phase2_backend

        return phase2_backend(self.backend_name(name), self._backend_config(), self.store)

    def backend_name(self, name: str | None = None) -> str:
        """`offline` or `openai`: the one given, else memdeck.backend (auto: openai when an
        endpoint or a key is configured)."""
        from .backends.openai_client import choose_backend

        return choose_backend(name or self.config_get("memdeck.backend").value,
                              self._backend_config())

    def _backend_config(self) -> BackendConfig:
        from .backends.openai_client import resolve_backend_config

        return resolve_backend_config(self._settings.memdeck(), self.home.config)

    def extract(self, ids: list[str] | None = None, backend: str | None = None,
                limit: int | None = None, progress: Progress | None = None,
                cancel: threading.Event | None = None,
                slot_wait: float | None = None,
                on_wait: Callable[[str], None] | None = None) -> ExtractReport:
        """Run phase 1 for eligible sessions, or for the named ones (time rules waived).
        `progress(done, total, result)` is called from the worker threads; setting `cancel`
        starts nothing more. A session that finds every extraction slot held waits for one
        up to `slot_wait` seconds with nothing coming free (default: phase1/slots.py); the
        sessions left then, and those past `limit`, are counted in the report. `on_wait` is
        told, in one line, what the run is waiting for whenever that changes."""
        from dataclasses import replace

        from .phase1.runner import Phase1Runner, select

        self.home.require_writable_version()
        listing = self.listing()
        chosen, refused = select(listing.sessions, ids, find_session)
        past_limit = 0
        if limit is not None:
            past_limit = max(0, len(chosen) - max(0, limit))
            chosen = chosen[: max(0, limit)]
        from .backends.choice import phase1_budget

        chosen_backend = self.phase1_backend(backend)
        budget = phase1_budget(chosen_backend, self.config_get("memdeck.input_budget").value)
        runner = Phase1Runner(self.home, self.store, self.clock, chosen_backend,
                              progress=progress, cancel=cancel, slot_wait=slot_wait,
                              on_wait=on_wait, token_limit=budget)
        return replace(runner.run(chosen, refused), warnings=listing.warnings,
                       past_limit=past_limit)

    # -- phase 2: proposals ------------------------------------------------------------
    def consolidate(self, backend: str | None = None) -> Proposal | None:
        """Phase 2 into a pending proposal (None when memory is already up to date)."""
        from .phase2.proposals import consolidate

        self.home.require_writable_version()
        self._recover()
        self.record_outside_edits()  # the live state the proposal starts from, recorded
        p = consolidate(self.home, self.store, self.phase2_backend(backend), self.sessions(),
                        self.clock.now())
        if (p is not None and self.config_get("memdeck.auto_accept").value
                and not p.secrets and not p.problems):
            p = self.accept(p.id)  # the user chose to skip review; the gates still apply
        return p

    def proposals(self) -> list[Proposal]:
        from .phase2.proposals import list_proposals

        return list_proposals(self.store)

    def proposal_diff(self, pid: str) -> str:
        from .phase2.proposals import diff_text

        return diff_text(self.home, self.store, pid)

    def proposal_hunks(self, pid: str) -> list[Hunk]:
        """A pending proposal's changes as numbered hunks (for accepting some of them)."""
        from .phase2.hunks import proposal_hunks
        from .phase2.proposals import get, note_effects

        p = get(self.store, pid)
        return proposal_hunks(self.home.memory_root,
                              self.home.proposals_dir / p.id / "workspace", p.files,
                              note_effects(self.home, self.store, p.id))

    def proposal_notes(self, pid: str) -> list[NoteEffect]:
        """The ad-hoc notes a proposal folded into memory, each with what it did."""
        from .phase2.proposals import note_effects

        return note_effects(self.home, self.store, pid)

    def reject(self, pid: str, reason: str | None = None) -> Proposal:
        from .phase2.proposals import reject

        return reject(self.home, self.store, pid, reason, self.clock.now())

    # -- settings ---------------------------------------------------------------------
    def config_get(self, key: str) -> SettingValue:
        return self._settings.get(key)

    def config_set(self, key: str, value: str) -> SettingValue:
        return self._settings.set(key, value)

    def config_unset(self, key: str) -> SettingValue:
        """Remove a key from its file (every other byte kept) so the default applies again."""
        return self._settings.unset(key)

    def config_all(self) -> list[SettingValue]:
        return self._settings.all()

    def keymap(self) -> tuple[dict[str, str], list[str]]:
        """The user's key remapping (binding id → keys) and a line per unusable entry."""
        from .codex.keymap import read_keymap

        return read_keymap(self.home.memdeck_config_path)

    def keymap_set(self, binding_id: str, keys: str | None) -> None:
        from .codex.keymap import set_key

        set_key(self.home.memdeck_config_path, binding_id, keys)

    # -- watching ---------------------------------------------------------------------
    def watcher(self, on_event: Listener, stop: threading.Event | None = None,
                tick: float = 60.0, debounce_ms: int = 400) -> Watcher:
        """The watcher and idle scheduler over this home (`memdeck watch`, the TUI's live
        updates). `.run()` it in a thread of its own; it returns once `stop` is set."""
        from .watch import WatchActions, Watcher

        actions = WatchActions(
            refresh=self.refresh, record_outside_edits=self.record_outside_edits,
            # the user switched generating memories off: memdeck's own sweep stops too
            auto_extract=lambda: bool(self.config_get("memdeck.auto_extract").value
                                      and self.config_get("generate_memories").value),
            # a round never waits for a slot (the next tick tries again) and stops with it
            extract=lambda limit: self.extract(limit=limit, cancel=stop, slot_wait=0),
            consolidate=self.consolidate)
        return Watcher(self.home, actions, on_event, stop, tick, debounce_ms)

    # -- what the TUI shows about the home and a proposal ------------------------------
    @property
    def root(self) -> Path:
        """The Codex home's folder (for showing it; memdeck decides every path inside)."""
        return self.home.root

    def home_info(self) -> HomeInfo:
        """Where this home is, which memory Codex uses in it now and why, and the database
        of that memory's pipeline (config.toml read again: a change shows at once)."""
        from .codex.home_info import home_info

        return home_info(self.home)

    def proposal_state(self, proposal: Proposal) -> ProposalState:
        """Whether a pending proposal can still be accepted as made: has the live memory
        root moved on since, is its workspace folder gone."""
        from .phase2.review import proposal_state

        return proposal_state(self.home, proposal)


def demo_home(path: str | Path | None = None, clock: Clock | None = None,
              keep: bool = False) -> Path:
    """Build (or rebuild) the bundled demo Codex home and return its path; with `keep`, a
    demo home built before is opened as it was left (built only when there is none)."""
    from .demo.build import build_demo

    return build_demo(path, clock or SystemClock(), keep=keep)
