"""Issue 23, item 9: `y` / `Y` copy an id or a path, `E` opens a memory file or a rollout in
the user's own editor (the change comes back through the conflict-safe save), `ctrl+z` undoes
the last change of the memory folder, asking first."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from memdeck.engine.memory_folder.history import History
from memdeck.tui.clipboard import copy_with_program
from memdeck.tui.panes.memory import MemoryPane
from memdeck.tui.widgets.confirm import ConfirmScreen
from memdeck.tui.widgets.memory.conflict import ConflictScreen
from memdeck.tui.widgets.memory.memory_editor import MemoryEditor
from memdeck.tui.widgets.session_table import SessionTable
from tests.tui import stable_demo
from tests.tui.conftest import SIZE, settle

stable_engine = stable_demo.stable_engine  # fixture: the demo home at a fixed path

# an editor as a user's would be, minus the person: it edits the file it is given the way
# EDIT_APPEND says (and, for the conflict, changes the real file meanwhile)
EDITOR = """
import os, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
if os.environ.get("ALSO_WRITE"):
    with open(os.environ["ALSO_WRITE"], "a", encoding="utf-8") as f:
        f.write("- written on disk while the editor was open\\n")
with open(path, "w", encoding="utf-8") as f:
    f.write(text + os.environ.get("EDIT_APPEND", ""))
sys.exit(int(os.environ.get("EDIT_EXIT", "0")))
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    return script


def toasts(app: Any) -> list[str]:
    return [n.message for n in app._notifications]


async def test_y_and_Y_copy_the_session_id_and_its_rollout_path(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("j")
        s = app.query_one(SessionTable).current
        await pilot.press("y")
        await settle(app, pilot)
        assert app.clipboard == s.id
        assert any(s.id in t and "OSC 52" in t for t in toasts(app))
        await pilot.press("Y")
        await settle(app, pilot)
        assert app.clipboard == str(s.rollout_path) and Path(app.clipboard).is_file()
        await pilot.press("4")  # History: the commit under the cursor
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert app.clipboard == History(demo_engine.home, demo_engine.clock).entries()[0].commit


def test_a_clipboard_program_gets_the_text_when_there_is_one(tmp_path: Path) -> None:
    got = tmp_path / "clipboard"
    program = tmp_path / "bin" / "xclip"
    program.parent.mkdir()
    program.write_text(f"#!/bin/sh\nexec /bin/cat > {got}\n")
    program.chmod(0o755)
    env = {"PATH": str(program.parent), "DISPLAY": ":0"}
    assert copy_with_program("01a2 · 会话", env) == "xclip"
    assert got.read_text() == "01a2 · 会话"
    assert copy_with_program("x", {"PATH": str(program.parent)}) is None  # no display


async def test_E_edits_a_copy_and_saves_it_as_an_edit(demo_engine, make_app, editor,
                                                      monkeypatch) -> None:
    monkeypatch.setenv("EDIT_APPEND", "- from my editor\n")
    app = make_app(demo_engine, initial="memory")
    path = demo_engine.home.memory_root / "memory_summary.md"
    before = path.read_text()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.query_one(MemoryEditor).base.path == "memory_summary.md"
        await pilot.press("E")
        await settle(app, pilot)
        assert path.read_text() == before + "- from my editor\n"
        entry = History(demo_engine.home, demo_engine.clock).entries()[0]
        assert (entry.origin, entry.summary) == ("user", "edit memory_summary.md")
        assert app.query_one(MemoryEditor).read_only  # back to viewing the saved file


async def test_E_with_a_change_on_disk_meanwhile_shows_the_conflict(demo_engine, make_app,
                                                                    editor,
                                                                    monkeypatch) -> None:
    path = demo_engine.home.memory_root / "memory_summary.md"
    monkeypatch.setenv("EDIT_APPEND", "- MINE\n")
    monkeypatch.setenv("ALSO_WRITE", str(path))
    app = make_app(demo_engine, initial="memory")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("E")
        await settle(app, pilot)
        assert isinstance(app.screen, ConflictScreen)
        assert "written on disk while the editor was open" in path.read_text()  # not lost
        assert app.query_one(MemoryEditor).text.endswith("- MINE\n")  # nor is mine


async def test_E_when_the_editor_fails_saves_nothing_and_says_where_the_text_is(
        demo_engine, make_app, editor, monkeypatch) -> None:
    monkeypatch.setenv("EDIT_APPEND", "typed")
    monkeypatch.setenv("EDIT_EXIT", "1")
    app = make_app(demo_engine, initial="memory")
    path = demo_engine.home.memory_root / "memory_summary.md"
    before = path.read_text()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("E")
        await settle(app, pilot)
        assert path.read_text() == before
        warning = next(t for t in toasts(app) if "exited with 1" in t)
        kept = Path(warning.rsplit(" is in ", 1)[1])
        assert kept.read_text().endswith("typed")


async def test_E_in_sessions_opens_the_rollout(demo_engine, make_app, editor, tmp_path,
                                               monkeypatch) -> None:
    seen = tmp_path / "opened"
    script = tmp_path / "viewer.py"
    script.write_text(f"import sys; open({str(seen)!r}, 'w').write(sys.argv[1])\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        s = app.query_one(SessionTable).current
        await pilot.press("E")
        await settle(app, pilot)
        assert seen.read_text() == str(s.rollout_path)


async def test_ctrl_z_undoes_the_last_memory_change_after_asking(demo_engine,
                                                                 make_app) -> None:
    path = demo_engine.home.memory_root / "MEMORY.md"
    before = path.read_text()
    base = demo_engine.memory_read("MEMORY.md").version
    demo_engine.memory_save("MEMORY.md", before + "- a line to take back\n", base)
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "edit MEMORY.md" in str(app.screen.query_one("#detail").render())
        await pilot.press("n")  # asked first: no means nothing changes
        await settle(app, pilot)
        assert path.read_text().endswith("- a line to take back\n")
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert path.read_text() == before
        entries = History(demo_engine.home, demo_engine.clock).entries()
        assert entries[1].summary == "edit MEMORY.md"  # the undone change stays in History
        assert any(t.startswith("Undone: edit MEMORY.md") for t in toasts(app))


async def test_ctrl_z_while_typing_in_the_editor_undoes_the_typing(demo_engine,
                                                                   make_app) -> None:
    app = make_app(demo_engine, initial="memory")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("e", *"abc", "ctrl+z")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert not app.query_one(MemoryPane).has_unsaved_changes()


async def test_E_when_the_editor_writes_bytes_that_are_not_utf8_saves_nothing(
        demo_engine, make_app, tmp_path, monkeypatch) -> None:
    script = tmp_path / "latin1.py"
    script.write_text("import sys; open(sys.argv[1], 'ab').write(b'caf\\xe9 \\xff\\n')\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    app = make_app(demo_engine, initial="memory")
    path = demo_engine.home.memory_root / "memory_summary.md"
    before = path.read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("E")
        await settle(app, pilot)
        assert path.read_bytes() == before
        error = next(t for t in toasts(app) if "other than UTF-8" in t)
        assert "\n" not in error
        kept = Path(error.rsplit(" is in ", 1)[1])
        assert kept.read_bytes().endswith(b"caf\xe9 \xff\n")  # what the editor wrote is kept


async def test_Y_in_memory_copies_the_open_files_path_on_disk(demo_engine, make_app) -> None:
    app = make_app(demo_engine, initial="memory")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("Y")
        await settle(app, pilot)
        assert app.clipboard == str(demo_engine.home.memory_root / "memory_summary.md")


def test_snapshot_the_undo_question_at_80x24(stable_engine, make_app, snap_compare) -> None:
    """80×24: ctrl+z names the change it undoes and the state it returns to, before anything
    happens."""
    path = stable_engine.home.memory_root / "MEMORY.md"
    base = stable_engine.memory_read("MEMORY.md").version
    stable_engine.memory_save("MEMORY.md", path.read_text() + "- a line to take back\n", base)

    async def run_before(pilot: Any) -> None:
        await settle(pilot.app, pilot)
        await pilot.press("ctrl+z")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(stable_engine), terminal_size=(80, 24), run_before=run_before)


def test_snapshot_the_copy_toast_at_80x24(stable_engine, make_app, snap_compare) -> None:
    """80×24: `y` on a session says what was copied, and how."""

    async def run_before(pilot: Any) -> None:
        await settle(pilot.app, pilot)
        await pilot.press("j", "y")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(stable_engine), terminal_size=(80, 24), run_before=run_before)
