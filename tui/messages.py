"""App-level messages: what happened, posted by workers and panes, handled by the App.

Messages a single widget emits live as nested classes of that widget. Messages are
dataclasses (Textual's `Message.__post_init__` sets up what the base class needs); the
handler names come from the class names as before (`on_work_failed`, ...)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from memdeck.engine import MemdeckError, os_error_text

if TYPE_CHECKING:
    from memdeck.engine import Proposal


def one_line(error: BaseException | str) -> str:
    """An error as the one line the user reads: no traceback, no class noise for our own."""
    if isinstance(error, str):
        text = error
    elif isinstance(error, MemdeckError):
        text = str(error)
    elif isinstance(error, OSError):  # the machine: a full disk, a read-only folder
        text = os_error_text(error)
    else:
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    first = text.strip().splitlines()[0] if text.strip() else "unknown error"
    return first if len(first) <= 300 else first[:297] + "…"


@dataclass
class WorkFailed(Message):
    """An engine call failed; the App shows it as one notification."""

    what: str
    error: BaseException | str


@dataclass
class MemoryChanged(Message):
    """The memory folder, the pipeline DB or the history changed: panes showing them reload."""

    source: str = ""


@dataclass
class SessionsChanged(Message):
    """Sessions changed: `rescan` when rollouts did (new or grown files, a forget), else
    only what their statuses come from (an extraction)."""

    rescan: bool = True


@dataclass
class ProposalReady(Message):
    """A consolidation finished: `proposal` is pending review, accepted, or None (up to date)."""

    proposal: Proposal | None


@dataclass
class PipelineProgress(Message):
    """Progress of a running extract + consolidate: `stage`, `done` of `total`."""

    stage: str
    done: int
    total: int
    detail: str = ""


@dataclass
class PipelineFinished(Message):
    """Extract + consolidate ended (`cancelled` when the user stopped it)."""

    summary: str
    proposal: Proposal | None = None
    cancelled: bool = False


@dataclass
class ShowSession(Message):
    """Open a session's transcript in the Sessions pane (e.g. from a raw memory); with `at`,
    at that entry, its `marks` highlighted and `why` beside it (a trace, a citation)."""

    session_id: str
    at: int | None = None
    marks: tuple[str, ...] = ()
    why: str = ""
