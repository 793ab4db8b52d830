"""The facade's own result types: a session listing with its warnings, one session in full,
the raw memories with theirs; and the warnings a listing finds about the home.

Part of the facade (engine/__init__.py): warnings travel with the result they were found
with, so two threads listing at once never see each other's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from .index.sessions import Session

if TYPE_CHECKING:
    from .codex.home import CodexHome
    from .codex.pipeline_snapshot import PipelineSnapshot, Stage1Output
    from .codex.rollout import Rollout
    from .codex.state_db import StateSnapshot
    from .codex.transcript import TranscriptEntry
    from .index.session_index import SessionIndex


@dataclass(frozen=True)
class Listing:
    """The sessions, newest first, and one line per thing about the home worth a warning (a
    database newer than memdeck knows, memories switched off, ...)."""

    sessions: list[Session]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class MemoryRows:
    """The stage-1 outputs (raw memories), newest first, and a warning when the pipeline
    database could not be read as memdeck knows it."""

    rows: list[Stage1Output]
    warnings: tuple[str, ...] = ()


class RolloutProblem(TypedDict):
    line: int
    kind: str  # invalid_json | invalid_utf8 | nul_bytes | too_long | not_an_object | no_type
    message: str


@dataclass(frozen=True)
class SessionDetail:
    session: Session
    rollout: Rollout
    entries: list[TranscriptEntry]
    pending_bytes: int
    problems: list[RolloutProblem] = field(default_factory=list)
    warnings: tuple[str, ...] = ()  # the listing's, found looking the session up

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


def home_warnings(home: CodexHome, index: SessionIndex, pipeline: PipelineSnapshot,
                  state: StateSnapshot) -> tuple[str, ...]:
    """What a listing warns about: unreadable or newer databases, a Codex newer than memdeck
    knows, memories switched off in config.toml."""
    warnings = [w for w in (pipeline.warning, state.warning) if w]
    warnings += _newer_codex_warning(home, index)
    if home.config_problem:
        warnings.append(f"{home.config_problem}: Codex does not start until it is fixed; "
                        "the statuses below assume Codex's defaults, and memdeck changes "
                        "nothing until then")
    elif not home.config.feature_enabled:
        warnings.append(
            "memories are off (config.toml does not set [features] memories = true): Codex will "
            "not extract or use memories until it is on (`memdeck config set memories true`)")
    return tuple(warnings)


def _newer_codex_warning(home: CodexHome, index: SessionIndex) -> list[str]:
    """One line when the home comes from a Codex newer than memdeck knows."""
    from .codex.home import TESTED_CODEX, newer_than_tested

    version = home.version_info
    newer = newer_than_tested(index.codex_versions())
    if not newer and version.known:
        return []
    who = (f"sessions from Codex {newer}, newer than {TESTED_CODEX} (the newest memdeck is "
           "tested with)") if newer else "a Codex memdeck does not know"
    what = "" if version.known else f"; {version.reason}"
    return [f"{who}: read with what memdeck knows, unknown lines and fields kept{what}"]
