"""The Memory pane's scope (issue 26, items 1 and 2): with the cursor in a task group of
MEMORY.md the title says what the group applies to and where it was taught, and `w` proposes
it re-scoped, in Review, accepted like any change."""

from __future__ import annotations

from typing import Any

from memdeck.tui.panes.review import ReviewPane
from memdeck.tui.widgets.memory.memory_editor import MemoryEditor
from tests.tui.conftest import SIZE, settle
from tests.tui.test_memory_pane import open_memory, open_path, root, title


def _line_of(engine: Any, start: str) -> int:
    lines = (root(engine) / "MEMORY.md").read_text(encoding="utf-8").split("\n")
    return next(i for i, ln in enumerate(lines) if ln.startswith(start))


async def test_the_title_shows_the_groups_scope_and_w_proposes_it_widened(
        demo_engine, make_app) -> None:
    infra = _line_of(demo_engine, "# Task Group: infra")
    before = (root(demo_engine) / "MEMORY.md").read_text(encoding="utf-8")
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        await open_path(app, pilot, "MEMORY.md")
        editor = app.query_one(MemoryEditor)
        editor.focus()
        editor.move_cursor((infra + 3, 0))
        await settle(app, pilot)
        shown = title(app)
        assert "infra (deployments): applies to /home/demo/src/infra" in shown, shown
        assert "taught in /home/demo/src/infra" in shown and "w re-scope" in shown
        await pilot.press("w")
        await settle(app, pilot)
        await settle(app, pilot)
        assert app.query_one(ReviewPane).display  # the proposal is shown for review
        pending = [p for p in demo_engine.proposals() if p.status == "pending"]
        assert [p.backend for p in pending] == ["rescope:widen"]
        # nothing changed until it is accepted
        assert (root(demo_engine) / "MEMORY.md").read_text(encoding="utf-8") == before
    demo_engine.accept(pending[0].id)
    text = (root(demo_engine) / "MEMORY.md").read_text(encoding="utf-8").split("\n")
    assert text[infra + 2].startswith("applies_to: cwd=*;")
