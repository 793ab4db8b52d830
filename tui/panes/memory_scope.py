"""The Memory pane's re-scope (issue 26, item 2): `w` on a line of a MEMORY.md task group
proposes it for the projects it was taught in when every project reads it, or for every
project when it is narrower; the proposal goes to Review like any change. The group's scope
(applies to, taught in, why it leaks) is under the title as the cursor moves into it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.message import Message

from ..messages import MemoryChanged, ProposalReady
from .memory_editing import MemoryEditing


class MemoryScope(MemoryEditing):
    @dataclass
    class Rescoped(Message):
        proposal: Any
        text: str

    scope_blocks: list[Any] = []

    def group_at(self, line: int) -> Any:
        """The MEMORY.md task group holding `line` (1-based), from the last scope map."""
        groups = [b for b in self.scope_blocks
                  if b.path == "MEMORY.md" and b.kind == "task_group" and b.line <= line]
        return max(groups, key=lambda b: b.line, default=None)

    def scope_line(self, path: str, line: int) -> str:
        """`applies to …; taught in …`, for the title when the cursor is in a task group."""
        b = self.group_at(line) if path == "MEMORY.md" else None
        if b is None:
            return ""
        applies = "every project" if b.applies_to == ["*"] else ", ".join(b.applies_to)
        taught = ", ".join(b.taught_in) or "no known project"
        leak = f" · LEAKS: {b.leaks[0]}" if b.leaks else ""
        return f"{b.title}: applies to {applies}; taught in {taught}{leak} · w re-scope"

    @work(thread=True, exclusive=True, group="memory-scope", name="reading the scope map",
          exit_on_error=False)
    def load_scope(self) -> None:
        blocks = self.engine.scope_map()
        self.app.call_from_thread(self._scope_loaded, blocks)

    def _scope_loaded(self, blocks: list[Any]) -> None:
        self.scope_blocks = blocks
        self._title()

    def action_rescope(self) -> None:
        base = self.editor.base
        if base is None or base.path != "MEMORY.md":
            self.notify("Re-scope works on a task group of MEMORY.md: open it and put the "
                        "cursor in the group", severity="warning")
            return
        b = self.group_at(self.editor.cursor_location[0] + 1)
        if b is None:
            self.notify("The cursor is not in a task group", severity="warning")
            return
        self.rescope(b.line, "narrow" if b.applies_to == ["*"] else "widen")

    @work(thread=True, exclusive=True, group="memory-scope", name="re-scoping",
          exit_on_error=False)
    def rescope(self, line: int, way: str) -> None:
        p = self.engine.rescope(line, way)
        self.post_message(self.Rescoped(p, f"MEMORY.md:{line} {way}ed: proposal {p.id} is "
                                           "ready for review"))

    @on(Rescoped)
    def _rescoped(self, event: Rescoped) -> None:
        self.notify(event.text)
        self.app.post_message(MemoryChanged("rescope"))
        self.app.post_message(ProposalReady(event.proposal))
        self.app.action_show_pane("review")  # type: ignore[attr-defined]
