"""memdeck's engine: everything except drawing. The CLI and the TUI both talk to `Engine`.

The engine never imports Textual or Rich (a test proves it). Its methods are plain
synchronous calls, safe from any thread, returning frozen dataclasses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .clock import Clock, SystemClock
from .codex.home import CodexHome
from .codex.pipeline_snapshot import read_snapshot
from .codex.settings import (
    SettingsFile,
    SettingValue,
    all_keys,
    coerce_stored,
    parse_value,
    resolve_key,
)
from .codex.state_db import read_threads
from .errors import ConfigError, HomeError, MemdeckError, NotFound
from .index.session_index import RefreshStats, SessionIndex
from .index.sessions import Session, build_sessions, find_session
from .store import Store

if TYPE_CHECKING:  # the lazily re-exported names below, for the type checker
    pass

__all__ = [
    "ConfigError", "Engine", "HomeError", "MemdeckError", "NotFound", "Session",
    "SessionDetail", "SettingValue", "demo_home",
]

# Names the TUI and the CLI use, re-exported here so that `memdeck.engine` is their only door;
# each is imported on first use (`from memdeck.engine import X` works), so importing the
# facade stays cheap. name -> the module (relative to this package) that defines it.
_LAZY: dict[str, str] = {
}
__all__ += sorted(_LAZY)


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


@dataclass(frozen=True)
class SessionDetail:
    session: Session
    rollout: Any  # rollout.Rollout
    entries: list[Any]  # transcript.TranscriptEntry
    pending_bytes: int
    problems: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        m = self.rollout.meta
        d = self.session.to_json()
        d.update({
            "archived": self.session.archived,
            "format": self.rollout.format,
            "originator": m.originator if m else None,
            "cli_version": m.cli_version if m else None,
            "history_mode": m.history_mode if m else None,
            "git_branch": m.git.branch if m and m.git else None,
            "model": self.session.model,
            "pending_bytes": self.pending_bytes,
            "problems": self.problems,
            "items": [e.to_json() for e in self.entries],
            "citations": [
                {"line": e.line_no, "timestamp": e.timestamp, **e.to_json()["citation"]}
                for e in self.entries if e.citation is not None
            ],
        })
        return d


class Engine:
    """One Codex home. Build once, share across threads."""

    def __init__(self, home: CodexHome, clock: Clock | None = None) -> None:
        self.home = home
        self.clock = clock or SystemClock()
        self._store: Store | None = None
        self.warnings: list[str] = []

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None,
             clock: Clock | None = None) -> Engine:
        return cls(CodexHome.open(home), clock)

    @property
    def store(self) -> Store:
        if self._store is None:
            self.home.ensure_memdeck_dir()
            self._store = Store(self.home.memdeck_db)
        return self._store

    @property
    def index(self) -> SessionIndex:
        return SessionIndex(self.home, self.store)

    # -- sessions ---------------------------------------------------------------------
    def refresh(self) -> RefreshStats:
        return self.index.refresh()

    def sessions(self, refresh: bool = True) -> list[Session]:
        rows = self.index.sessions(refresh=refresh)
        pipeline = read_snapshot(self.home.pipeline_db)
        state = read_threads(self.home.state_db)
        self.warnings = [w for w in (pipeline.warning, state.warning) if w]
        self.warnings += self._newer_codex_warning()
        if not self.home.config.feature_enabled:
            self.warnings.append(
                "memories are off in config.toml ([features] memories = false): Codex will "
                "not extract or use memories until it is on (`memdeck config set memories true`)")
        return build_sessions(rows, self.home.config, pipeline, state, self.clock.now())

    def _newer_codex_warning(self) -> list[str]:
        """One line when the home comes from a Codex newer than memdeck knows."""
        from .codex.home import TESTED_CODEX, newer_than_tested

        version = self.home.version_info
        newer = newer_than_tested(self.index.codex_versions())
        if not newer and version.known:
            return []
        who = (f"sessions from Codex {newer}, newer than {TESTED_CODEX} (the newest memdeck is "
               "tested with)") if newer else "a Codex memdeck does not know"
        what = "" if version.known else f"; {version.reason}"
        return [f"{who}: read with what memdeck knows, unknown lines and fields kept{what}"]

    def session(self, key: str) -> SessionDetail:
        from .codex.rollout import read_rollout
        from .codex.transcript import transcript

        s = find_session(self.sessions(), key)
        rollout = read_rollout(s.rollout_path)
        problems = [{"line": p.line_no, "kind": p.kind, "message": p.message}
                    for p in rollout.problems]
        return SessionDetail(s, rollout, transcript(rollout), rollout.pending_bytes, problems)

    # -- phase 1 ----------------------------------------------------------------------
    def phase1_backend(self, name: str | None = None) -> Any:
        """The backend to extract with: `offline`, `openai`, or memdeck's setting (auto)."""
        from .backends.offline_phase1 import OfflinePhase1

        if self.backend_name(name) == "offline":
            return OfflinePhase1()
        from .backends.openai_client import resolve_backend_config
        from .backends.openai_phase1 import OpenAIPhase1

        return OpenAIPhase1(resolve_backend_config(self._settings_file("memdeck").read(),
                                                   self.home.config))

    def backend_name(self, name: str | None = None) -> str:
        """`offline` or `openai`: the one given, else memdeck.backend (auto: openai when an
        endpoint or a key is configured)."""
        from .backends.openai_client import choose_backend, resolve_backend_config

        cfg = resolve_backend_config(self._settings_file("memdeck").read(), self.home.config)
        return choose_backend(name or self.config_get("memdeck.backend").value, cfg)

    def extract(self, ids: list[str] | None = None, backend: str | None = None,
                limit: int | None = None, progress: Any = None, cancel: Any = None) -> Any:
        """Run phase 1 for eligible sessions, or for the named ones (time rules waived)."""
        from .phase1.runner import Phase1Runner, select

        self.home.require_writable_version()
        chosen, refused = select(self.sessions(), ids, find_session)
        if limit is not None:
            chosen = chosen[: max(0, limit)]
        runner = Phase1Runner(self, self.phase1_backend(backend), progress=progress,
                              cancel=cancel)
        return runner.run(chosen, refused)

    def forget(self, key: str) -> Any:
        """Forget a session as Codex does: memory mode disabled, its raw memory deleted,
        phase 2 enqueued when that memory was in use."""
        from .phase1.forget import forget

        self.home.require_writable_version()
        return forget(self.home, find_session(self.sessions(), key), self.clock.now())

    def reset(self) -> Any:
        """Back up, then clear what Codex's reset clears. Returns the backup."""
        from .memory_folder.backup import reset
        from .memory_folder.history import History

        self._recover()
        history = History(self.home)
        history.snapshot()  # the state before, if history does not hold it yet
        backup = reset(self.home, self.clock.now())
        history.snapshot("user", f"reset: all memories cleared (backup {backup.id})")
        return backup

    def backups(self) -> list[Any]:
        from .memory_folder.backup import list_backups

        return list_backups(self.home)

    def restore_backup(self, backup_id: str) -> Any:
        """Restore a backup byte for byte; returns the backup taken of the state replaced."""
        from .memory_folder.backup import restore_backup
        from .memory_folder.history import History

        self._recover()
        history = History(self.home)
        history.snapshot()
        safety = restore_backup(self.home, backup_id, self.clock.now())
        history.snapshot("restore", f"restore backup {backup_id}")
        return safety

    # -- phase 2: proposals ------------------------------------------------------------
    def _recover(self) -> None:
        """An accept a crash interrupted is finished or undone before the root is touched."""
        from .memory_folder.accept import recover

        recover(self)

    def consolidate(self, backend: str | None = None) -> Any:
        """Phase 2 into a pending proposal (None when memory is already up to date)."""
        from .memory_folder.history import History
        from .phase2.proposals import consolidate

        self.home.require_writable_version()
        self._recover()
        History(self.home).snapshot()  # the live state the proposal starts from, recorded
        p = consolidate(self, self.backend_name(backend))
        if (p is not None and self.config_get("memdeck.auto_accept").value
                and not p.secrets and not p.problems):
            from .memory_folder.accept import accept

            p = accept(self, p.id)  # the user chose to skip review; the gates still apply
        return p

    def proposals(self) -> list[Any]:
        from .phase2.proposals import list_proposals

        return list_proposals(self)

    def proposal_diff(self, pid: str) -> str:
        from .phase2.proposals import diff_text

        return diff_text(self, pid)

    def accept(self, pid: str, files: list[str] | None = None,
               hunks: dict[str, list[int]] | None = None) -> Any:
        """Apply a proposal (all of it, chosen files, or chosen hunks) to the memory root."""
        from .memory_folder.accept import accept

        self.home.require_writable_version()
        return accept(self, pid, files, hunks)

    def proposal_hunks(self, pid: str) -> list[Any]:
        """A pending proposal's changes as numbered hunks (for accepting some of them)."""
        from .phase2.hunks import proposal_hunks
        from .phase2.proposals import get

        p = get(self, pid)
        return proposal_hunks(self.home.memory_root,
                              self.home.proposals_dir / p.id / "workspace", p.files)

    def reject(self, pid: str, reason: str | None = None) -> Any:
        from .phase2.proposals import reject

        return reject(self, pid, reason)

    # -- history ----------------------------------------------------------------------
    def history(self) -> list[Any]:
        """Commits of memdeck's history repository, newest first (the root's current state
        is recorded first if the history does not hold it yet)."""
        from .memory_folder.history import History

        h = History(self.home)
        h.snapshot()
        return h.entries()

    def history_show(self, commit: str) -> tuple[Any, str]:
        from .memory_folder.history import History

        return History(self.home).show(commit)

    def restore(self, commit: str) -> str:
        """Make the memory root what it was at `commit`, as a new commit; nothing is lost."""
        from .codex.pipeline_db import PipelineDB
        from .memory_folder.history import History

        self.home.require_writable_version()
        self._recover()
        db = PipelineDB.open(self.home)
        try:
            with db.global_lease(int(self.clock.now()), "restore"):
                return History(self.home).restore(commit)
        finally:
            db.close()

    def citations(self) -> Any:
        """Every citation of memory lines in the sessions, and the usage they add up to."""
        from .read_path.citation_usage import citation_report

        return citation_report(self.sessions())

    def memories(self) -> list[Any]:
        """Stage-1 rows, newest first."""
        snap = read_snapshot(self.home.pipeline_db, with_memories=True)
        if snap.warning:
            self.warnings = [snap.warning]
        return sorted(snap.outputs.values(), key=lambda o: (-o.source_updated_at, o.thread_id))

    # -- settings ---------------------------------------------------------------------
    def _settings_file(self, which: str) -> SettingsFile:
        return SettingsFile(self.home.config_path if which == "codex"
                            else self.home.memdeck_config_path)

    def config_get(self, key: str) -> SettingValue:
        which, table, spec = resolve_key(key)
        doc = self._settings_file(which).read()
        container = doc.get(table, {}) if table else doc
        container = container if isinstance(container, dict) else {}
        raw = next((container[k] for k in (spec.name, *spec.aliases) if k in container), None)
        display_key = spec.name if which == "codex" else f"memdeck.{spec.name}"
        if which == "codex" and spec.name == "version":
            self.home.__dict__.pop("config", None)
            info = self.home.version_info  # Codex's resolution, not the bare default
            return SettingValue(display_key, info.name, raw is not None, spec.default,
                                spec.allowed(), spec.help, note=info.reason)
        return SettingValue(display_key, coerce_stored(spec, raw), raw is not None,
                            spec.default, spec.allowed(), spec.help)

    def config_set(self, key: str, value: str) -> SettingValue:
        which, table, spec = resolve_key(key)
        parsed = parse_value(spec, value)
        self._settings_file(which).set(table, spec, parsed)
        self.home.__dict__.pop("config", None)  # re-read on next use
        return self.config_get(key)

    def config_unset(self, key: str) -> SettingValue:
        """Remove a key from its file (every other byte kept) so the default applies again."""
        which, table, spec = resolve_key(key)
        self._settings_file(which).unset(table, spec)
        self.home.__dict__.pop("config", None)
        return self.config_get(key)

    def config_all(self) -> list[SettingValue]:
        return [self.config_get(k) for k in all_keys()]

    def keymap(self) -> tuple[dict[str, str], list[str]]:
        """The user's key remapping (binding id → keys) and a line per unusable entry."""
        from .codex.keymap import read_keymap

        return read_keymap(self.home.memdeck_config_path)

    def keymap_set(self, binding_id: str, keys: str | None) -> None:
        from .codex.keymap import set_key

        set_key(self.home.memdeck_config_path, binding_id, keys)

    # -- memory files -----------------------------------------------------------------
    def memory_files(self) -> list[Any]:
        """The memory root's files (summary and MEMORY.md first); empty when it is missing."""
        from .memory_folder.edits import list_files

        return list_files(self.home)

    def memory_read(self, path: str) -> Any:
        """A memory file's text and the version token a later save names."""
        from .memory_folder.edits import read_file

        return read_file(self.home, path)

    def memory_save(self, path: str, text: str, base_version: str | None) -> Any:
        """Save a user's edit made from `base_version` (None: a new file). Raises
        `memory_edit.MemoryConflict` (nothing written) if the file changed on disk since."""
        from .memory_folder.edits import save_file

        self._recover()
        return save_file(self.home, path, text, base_version, self.clock.now())

    def memory_note(self, text: str, kind: str = "remember") -> Any:
        """Add an ad-hoc note asking the next consolidation to remember or forget `text`."""
        from .memory_folder.edits import add_note

        self._recover()
        return add_note(self.home, text, kind, self.clock.now())

    def memory_injected(self) -> Any:
        """memory_summary.md as the agent gets it next session, with its token estimate."""
        from .read_path.agent_view import injected_summary

        self.home.__dict__.pop("config", None)  # the toggles may have changed since
        return injected_summary(self.home)



def demo_home(path: str | Path | None = None, clock: Clock | None = None) -> Path:
    """Build (or rebuild) the bundled demo Codex home and return its path."""
    from .demo.build import build_demo

    return build_demo(path, clock or SystemClock())
