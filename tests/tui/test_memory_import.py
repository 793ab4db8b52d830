"""The Memory pane on a home holding Codex's import of another agent's memory: its own section
of the file list, each project under a line naming its scope (scope.json), and an imported
file open read-only, saying why and where it applies (docs/codex-format.md "External-agent
memory import")."""

from __future__ import annotations

from typing import Any

from external_import import CWD, MEMORY, PREFIX, PROJECT, imported, plant

from memdeck.tui.widgets.memory.memory_editor import MemoryEditor
from memdeck.tui.widgets.memory.memory_files import MemoryFileList
from tests.tui import stable_demo
from tests.tui.test_memory_pane import open_memory, open_path, title

stable_engine = stable_demo.stable_engine  # fixture: the demo home at a fixed path


def rows(lst: MemoryFileList) -> list[tuple[str | None, str, bool]]:
    """(id, text, disabled) of every option, separators left out."""
    return [(o.id, str(o.prompt), o.disabled) for o in lst.options if o is not None]


async def test_imported_memory_is_its_own_section_with_its_scope_and_read_only(
        demo_engine, make_app) -> None:
    root = demo_engine.home.memory_root
    before = plant(root)
    app = make_app(demo_engine)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_memory(app, pilot)
        lst = app.query_one(MemoryFileList)
        shown = rows(lst)
        start = shown.index(("group:Imported memory", "Imported memory (6)", True))
        section = shown[start + 1: start + 8]
        assert section == [
            (f"{PREFIX}/instructions.md", " instructions.md", False),
            (f"project:{PROJECT}", f" for {CWD}", True),  # the scope: not a file to open
            *[(f"{PREFIX}/resources/{PROJECT}/{name}", f"   {name}", False)
              for name in ("2025-03-14T16-20-00-import-incident.md", "MEMORY.md",
                           "release-process.md", "scope.json", "testing/database.md")]]
        assert shown[start - 1][0].startswith("extensions/ad_hoc/notes/")  # after the notes
        await open_path(app, pilot, MEMORY)
        editor = app.query_one(MemoryEditor)
        assert editor.text == (root / MEMORY).read_text(encoding="utf-8")
        assert title(app).splitlines()[1:] == [  # wrapped to the title's width at 80×24
            "read-only: imported by Codex from another",
            "agent's memory; its next import replaces it",
            f"applies to {CWD} (scope.json)"]
        assert pane.check_action("edit", ()) is None
        for run in (lambda: pilot.press("e"), lambda: pilot.press("ctrl+s")):
            await run()  # the keys do nothing: no editor, nothing saved
            await pilot.pause()
            assert editor.read_only and not editor.editing
    assert imported(root) == before


def test_snapshot_imported_memory_80x24(stable_engine, make_app, snap_compare) -> None:
    plant(stable_engine.home.memory_root)

    async def run_before(pilot: Any) -> None:
        await open_memory(pilot.app, pilot)
        await open_path(pilot.app, pilot, MEMORY)
        await pilot.press("e")  # refused: still viewing

    app = make_app(stable_engine)
    app.sub_title = "demo home"
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)

