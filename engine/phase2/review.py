"""Whether a pending proposal can still be accepted as it was made: the live memory root may
have moved on since it was made, and its workspace folder may be gone. What the Review pane
warns about before the user tries (accept refuses both in any case). It also names the user's
notes the proposal would delete or change (phase2/hunks.py `note_changes`): notes are the
user's requests and a consolidation never deletes them, so such a proposal is flagged."""

from __future__ import annotations

from dataclasses import dataclass

from ..codex.home import CodexHome
from .hunks import note_changes
from .proposals import Proposal, root_state


@dataclass(frozen=True)
class ProposalState:
    memory_moved: bool  # the live root is no longer the proposal's starting state
    workspace_lost: bool  # its workspace folder is gone: nothing left to accept
    deleted_notes: tuple[str, ...] = ()  # the user's note files it would delete
    changed_notes: tuple[str, ...] = ()  # ... and those whose text it would change

    @property
    def warnings(self) -> list[str]:
        """One line per note at risk, for the Review pane and `memdeck diff`."""
        return ([f"deletes the user's note {p}" for p in self.deleted_notes]
                + [f"changes the user's note {p}" for p in self.changed_notes])


def proposal_state(home: CodexHome, proposal: Proposal) -> ProposalState:
    workspace = home.proposals_dir / proposal.id / "workspace"
    notes = note_changes(proposal.files)
    return ProposalState(memory_moved=root_state(home.memory_root) != proposal.base_state,
                         workspace_lost=not workspace.is_dir(),
                         deleted_notes=tuple(p for p, c in notes if c == "D"),
                         changed_notes=tuple(p for p, c in notes if c == "M"))
