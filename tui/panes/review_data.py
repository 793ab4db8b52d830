"""What the Review pane shows, gathered in one worker call: the newest pending proposal, its
hunks laid out for the list, the sessions it consolidates, the ad-hoc notes it folds, and the
proposals decided lately."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..widgets.review.hunk_list import HunkRows, hunk_rows

RECENT = 5


@dataclass(frozen=True)
class ReviewData:
    proposal: Any | None  # engine.proposals.Proposal
    hunks: list[Any] = field(default_factory=list)  # engine.hunks.Hunk
    view: HunkRows = field(default_factory=lambda: HunkRows([], [], {}, {}))
    inputs: list[tuple[str, Any | None]] = field(default_factory=list)  # (thread, ThreadLabel)
    recent: list[Any] = field(default_factory=list)  # decided proposals, newest first
    older_pending: int = 0
    memory_moved: bool = False  # the live root is no longer the proposal's starting state
    workspace_lost: bool = False  # its workspace folder is gone: nothing left to accept
    notes: list[Any] = field(default_factory=list)  # engine NoteEffect: what each note did

    @property
    def key(self) -> tuple[Any, ...]:
        """Same proposal, same hunks: a reload may keep the user's selection."""
        return (self.proposal.id if self.proposal else None,
                tuple((h.path, h.index, h.header, h.lines) for h in self.hunks))


def load_review(engine: Any) -> ReviewData:
    """Everything the pane needs; runs in a worker (it reads files, SQLite and the index)."""
    proposals = engine.proposals()  # newest first
    pending = [p for p in proposals if p.status == "pending"]
    recent = [p for p in proposals if p.status != "pending"][:RECENT]
    if not pending:
        return ReviewData(None, recent=recent)
    p = pending[0]
    state = engine.proposal_state(p)
    # a lost workspace would read as every file "deleted": no hunks then
    hunks = [] if state.workspace_lost else engine.proposal_hunks(p.id)
    known = engine.thread_labels()  # names the inputs: the index alone, no statuses
    return ReviewData(p, hunks, hunk_rows(hunks, p.secrets),
                      [(t, known.get(t)) for t in p.threads], recent, len(pending) - 1,
                      state.memory_moved, state.workspace_lost, engine.proposal_notes(p.id))
