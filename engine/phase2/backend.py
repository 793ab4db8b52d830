"""What phase 2 asks of a consolidation backend: turn a prepared workspace into the new memory.

`proposals.consolidate` prepares the workspace (a copy of the live root with the selected
inputs synced in and `phase2_workspace_diff.md` written), then calls `Phase2Backend.consolidate`
on it, then validates what the backend left there. The backends (`backends.offline_phase2`, the
deterministic merge; `backends.openai_phase2`, the agent) implement it; the facade builds one
and hands it in, so nothing in phase 2 imports a backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .notes import NoteEffect

if TYPE_CHECKING:
    from pathlib import Path

    from ..codex.memory_layout import SelectedMemory


@dataclass(frozen=True)
class Phase2Result:
    """What a consolidation run cost, stored on the proposal."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    prompt_hash: str | None = None  # None: no prompt was sent (the offline merge)
    notes: tuple[NoteEffect, ...] = ()  # what each ad-hoc note did, when the backend knows


class Phase2Backend(Protocol):
    """Rewrites the workspace in place into the memory folder phase 2 should produce.

    `selected` are the raw memories chosen as inputs (already synced into the workspace);
    `version` is the home's memory version (V2 produces only memory_summary.md). A failure
    raises `MemdeckError`; the caller then throws the whole workspace away."""

    @property
    def name(self) -> str: ...  # "offline" | "openai": stored as the proposal's backend

    def consolidate(self, workspace: Path, selected: list[SelectedMemory], now: float,
                    version: str) -> Phase2Result: ...
