"""Restore a state of memdeck's history (history.py) as a new `restore` commit, through one
switch (switch.py), with Codex's selection following the restored files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..codex.memory_layout import threads_in_root
from ..errors import HomeError
from .journal import JournalPaths, RowStep, row_step
from .switch import Switch
from .writer import Change, Lease, MemoryFolderWriter


@row_step
@dataclass
class RestoreRows(RowStep):
    """Codex's selection as the restored files hold it (`selected_for_phase2`); None: leave
    it as it is (an older memdeck's journal that said nothing of it)."""

    op = "restore"
    select: list[tuple[str, int]] | None

    def to_json(self) -> dict[str, Any]:
        return {} if self.select is None else {"select": [list(s) for s in self.select]}

    @classmethod
    def from_json(cls, raw: dict[str, Any], paths: JournalPaths) -> RestoreRows:
        if "select" in raw:
            return cls([(str(t), int(s)) for t, s in raw["select"]])
        return cls([] if raw.get("clear_selection") else None)  # older memdecks

    def write(self, change: Change, lease: Lease | None) -> None:
        if self.select is None:
            return
        if lease is None:
            with change.lease("finish an interrupted restore") as own:
                own.db.set_phase2_selection(self.select)
        else:
            lease.db.set_phase2_selection(self.select)


def restore(writer: MemoryFolderWriter, rev: str) -> str:
    """Make the root what it was at `rev`, as a new `restore` commit (whatever is there now
    is kept first); under the global lease, through one switch (switch.py). Returns the new
    commit.

    Codex's selection (`selected_for_phase2`: which raw memories the memory folder holds)
    follows the restored files, as it was when that state was live: exactly the raw memories
    whose rollout summary the restored root holds are selected. Going back past a
    consolidation so unselects what the restored files no longer hold (the next phase 2 adds
    them again: "waiting for consolidation"), and coming forward again selects them back
    ("in the consolidated memory"). The lease leaves the global job pending.

    The files Codex imported from another agent's memory stay as they are live: they are
    Codex's copy of that agent's memory now, not a state of memdeck's (a restore neither
    rolls them back nor brings back a project Codex's import or a reset removed)."""
    from ..codex.external_import import carry_over

    with writer.change() as change, change.lease("restore") as lease:
        root = change.history.root
        if not root.is_dir():
            raise HomeError(f"{root.name}/ does not exist; there is nothing to restore into")
        sw = Switch(change)
        try:
            staged = sw.copy_of(root, only_git=True)
            c = change.history.check_out_into(rev, staged)
            carry_over(root, staged)
            held = threads_in_root(staged)
            rows = lease.db.conn.execute(
                "SELECT thread_id, source_updated_at FROM stage1_outputs").fetchall()
            selected = sorted((str(t), int(s)) for t, s in rows if t in held)
        except BaseException:
            sw.discard()
            raise
        out = sw.commit(RestoreRows(selected), origin="restore",
                        message=f"restore {c.commit[:12]}: {c.summary}",
                        trailers={"Memdeck-Restored": c.commit}, lease=lease,
                        what=f"restore {c.commit[:12]}",
                        gate=(f"restoring {c.commit[:12]} would put back",
                              "remove it from history first (memdeck history "
                              "--purge-secret TEXT), then restore"))
        return out.commit or rev
