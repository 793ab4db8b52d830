"""What phase 1 asks of a model backend: one session's input in, one `Phase1Output` out.

The backends (`backends.offline_phase1`, `backends.openai_phase1`) implement `Phase1Backend`;
the facade builds one and hands it to the runner, so nothing in phase 1 imports a backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..index.sessions import Session
    from .input_v1 import Phase1Input


@dataclass(frozen=True)
class Phase1Output:
    """What the model made of one session, before redaction (the runner redacts and stores).
    V2 backends leave `raw_memory` empty: the summary is the whole memory."""

    raw_memory: str
    rollout_summary: str
    rollout_slug: str | None
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    # when the output is empty: why, in one line ("nothing durable to remember", or that the
    # session was in a form the backend could not read); shown as the session's reason
    empty_reason: str = ""


class Phase1Backend(Protocol):
    """Extracts one session's memory; called from several worker threads at once."""

    @property
    def name(self) -> str: ...  # "openai" | "offline": the call log's and the report's label

    @property
    def model(self) -> str: ...

    def extract(self, inp: Phase1Input, session: Session) -> Phase1Output: ...
