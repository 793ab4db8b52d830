"""Whether a pending proposal can still be accepted as it was made: the live memory root may
have moved on since it was made, and its workspace folder may be gone. What the Review pane
warns about before the user tries (accept refuses both in any case)."""

from __future__ import annotations

from dataclasses import dataclass

from ..codex.home import CodexHome
from .proposals import Proposal, root_state


@dataclass(frozen=True)
class ProposalState:
    memory_moved: bool  # the live root is no longer the proposal's starting state
    workspace_lost: bool  # its workspace folder is gone: nothing left to accept


def proposal_state(home: CodexHome, proposal: Proposal) -> ProposalState:
    workspace = home.proposals_dir / proposal.id / "workspace"
    return ProposalState(memory_moved=root_state(home.memory_root) != proposal.base_state,
                         workspace_lost=not workspace.is_dir())
