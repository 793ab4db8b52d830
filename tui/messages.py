"""App-level messages: what happened, posted by workers and panes, handled by the App.

Messages a single widget emits live as nested classes of that widget."""

from __future__ import annotations

from typing import Any

from textual.message import Message


def one_line(error: BaseException | str) -> str:
    """An error as the one line the user reads: no traceback, no class noise for our own."""
    from memdeck.engine.errors import MemdeckError

    if isinstance(error, str):
        text = error
    elif isinstance(error, MemdeckError):
        text = str(error)
    else:
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    first = text.strip().splitlines()[0] if text.strip() else "unknown error"
    return first if len(first) <= 300 else first[:297] + "…"


class WorkFailed(Message):
    """An engine call failed; the App shows it as one notification."""

    def __init__(self, what: str, error: BaseException | str) -> None:
        super().__init__()
        self.what = what
        self.error = error


class MemoryChanged(Message):
    """The memory folder, the pipeline DB or the history changed: panes showing them reload."""

    def __init__(self, source: str = "") -> None:
        super().__init__()
        self.source = source


class SessionsChanged(Message):
    """The session index changed (new or grown rollouts, a forget, an extraction)."""


class ProposalReady(Message):
    """A consolidation finished: `proposal` is pending review, accepted, or None (up to date)."""

    def __init__(self, proposal: Any) -> None:
        super().__init__()
        self.proposal = proposal


class PipelineProgress(Message):
    """Progress of a running extract + consolidate: `stage`, `done` of `total`."""

    def __init__(self, stage: str, done: int, total: int, detail: str = "") -> None:
        super().__init__()
        self.stage = stage
        self.done = done
        self.total = total
        self.detail = detail


class PipelineFinished(Message):
    """Extract + consolidate ended (`cancelled` when the user stopped it)."""

    def __init__(self, summary: str, proposal: Any = None, cancelled: bool = False) -> None:
        super().__init__()
        self.summary = summary
        self.proposal = proposal
        self.cancelled = cancelled


class ShowSession(Message):
    """Open a session's transcript in the Sessions pane (e.g. from a raw memory)."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
