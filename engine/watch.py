"""The watcher and idle scheduler (docs/architecture.md "The watcher"): `memdeck watch`, and the
TUI's live updates.

watchfiles reports changes under `sessions/`, `archived_sessions/` and the memory root,
debounced. A rollout change re-indexes (only the changed files are read). A change to the
memory root that memdeck did not make is committed to the history repository as `codex` or
`external`. Sessions become eligible by time passing rather than by file events, so the loop
also wakes up every `tick` seconds; with `memdeck.auto_extract` on, each wake-up is a
scheduler round: phase 1 for up to `max_rollouts_per_startup` newly eligible sessions, then
a consolidation proposal when new raw memories exist (applied at once only with
`memdeck.auto_accept`). The loop ends promptly when its stop event is set.

The watcher is given the home and the few facade actions a round takes (`WatchActions`); build
one with `Engine.watcher`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .codex.home import ROOT_NAMES, CodexHome

if TYPE_CHECKING:
    from watchfiles import Change

    from .index.session_index import RefreshStats
    from .phase1.runner import ExtractReport
    from .phase2.proposals import Proposal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WatchEvent:
    kind: str  # indexed | memory_changed | config_changed | extracted | proposal | error
    detail: str


Listener = Callable[[WatchEvent], None]


@dataclass(frozen=True)
class WatchActions:
    """What a round does, as the facade does it."""

    refresh: Callable[[], RefreshStats]  # re-index the rollouts that changed
    record_outside_edits: Callable[[], str | None]  # commit the memory root; the new commit
    auto_extract: Callable[[], bool]  # memdeck.auto_extract, read every round
    extract: Callable[[int], ExtractReport]  # phase 1 for at most this many sessions
    consolidate: Callable[[], Proposal | None]  # phase 2 into a proposal (or accepted)


def _under(path: str, folder: Path) -> bool:
    try:
        Path(path).relative_to(folder)
    except ValueError:
        return False
    return True


class Watcher:
    def __init__(self, home: CodexHome, actions: WatchActions, on_event: Listener,
                 stop: threading.Event | None = None, tick: float = 60.0,
                 debounce_ms: int = 400) -> None:
        self.home = home
        self.actions = actions
        self.on_event = on_event
        self.stop = stop or threading.Event()
        self.tick = tick
        self.debounce_ms = debounce_ms

    def _emit(self, kind: str, detail: str) -> None:
        try:
            self.on_event(WatchEvent(kind, detail))
        except Exception:  # noqa: BLE001 - a listener must not stop the watcher
            log.exception("watch listener failed")

    def folders(self) -> list[Path]:
        """What is watched: rollout folders and both memory roots, existing or not.

        Nothing is created to be watched (a `memories/` folder would switch Codex to memory
        v1, docs/codex-format.md "Memory versions"), so the home itself is watched and `wanted`
        keeps only these."""
        home = self.home
        return [home.sessions_dir, home.archived_dir, *(home.root / n for n in ROOT_NAMES.values())]

    def wanted(self, _change: Change, path: str) -> bool:
        return any(path == str(f) or _under(path, f) for f in self.folders()) \
            or path == str(self.home.config_path)

    def run(self) -> None:
        import watchfiles

        self.actions.record_outside_edits()  # the state found when the watcher starts
        self._round(set())
        for changes in watchfiles.watch(self.home.root, watch_filter=self.wanted,
                                        stop_event=self.stop,
                                        debounce=self.debounce_ms, step=50,
                                        rust_timeout=int(self.tick * 1000),
                                        yield_on_timeout=True, raise_interrupt=False):
            if self.stop.is_set():
                break
            self._round({p for _, p in changes})

    def _round(self, paths: set[str]) -> None:
        home = self.home
        try:
            rollouts = [p for p in paths if _under(p, home.sessions_dir)
                        or _under(p, home.archived_dir)]
            if rollouts or not paths:
                stats = self.actions.refresh()
                if stats.scanned_full or stats.scanned_append or stats.removed:
                    self._emit("indexed", f"{stats.scanned_full} new, {stats.scanned_append} "
                                          f"grown, {stats.removed} removed")
            # the version or the toggles may have changed (before the watch began, too)
            if any(p == str(home.config_path) for p in paths) or \
                    (not paths and "config" in home.__dict__ and home.config_is_stale()):
                home.__dict__.pop("config", None)
                self._emit("config_changed", "config.toml changed")
            root = home.memory_root
            if any((p == str(root) or _under(p, root)) and "/.git" not in p[len(str(root)):]
                   for p in paths):
                commit = self.actions.record_outside_edits()
                if commit:
                    self._emit("memory_changed", f"recorded {commit[:12]} in history")
            if self.actions.auto_extract():
                self._schedule()
        except Exception as e:  # noqa: BLE001 - reported, and the watcher goes on
            self._emit("error", str(e).splitlines()[0] if str(e) else type(e).__name__)

    def _schedule(self) -> None:
        """One idle-scheduler round, as Codex's start-up task caps it."""
        cap = self.home.config.max_rollouts_per_startup
        report = self.actions.extract(cap)
        done = report.count("extracted")
        if done or report.count("no_output") or report.count("failed"):
            self._emit("extracted", f"{done} extracted, {report.count('no_output')} with "
                                    f"nothing durable, {report.count('failed')} failed "
                                    f"({report.backend})")
        if done:
            p = self.actions.consolidate()
            if p is not None:
                self._emit("proposal", f"proposal {p.id} is {p.status}")
