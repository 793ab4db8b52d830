"""The Memory pane: browse the memory folder, edit + save, conflicts, notes, refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import FAKE_GITHUB_TOKEN
from textual.widgets import Input

from memdeck.engine.memory_folder.history import History
from memdeck.tui.messages import MemoryChanged
from memdeck.tui.panes.memory import MemoryPane
from memdeck.tui.widgets.confirm import ConfirmScreen
from memdeck.tui.widgets.memory.conflict import ConflictScreen
from memdeck.tui.widgets.memory.memory_editor import MemoryEditor
from memdeck.tui.widgets.memory.memory_files import MemoryFileList
from memdeck.tui.widgets.memory.note import NoteScreen
from tests.tui import stable_demo
from tests.tui.conftest import SIZE, settle

stable_engine = stable_demo.stable_engine  # fixture: the demo home at a fixed path


async def open_memory(app: Any, pilot: Any) -> MemoryPane:
    await settle(app, pilot)
    await pilot.press("3")
    await settle(app, pilot)
    return app.query_one(MemoryPane)


def root(engine: Any) -> Path:
    return engine.home.memory_root


def title(app: Any) -> str:
    return str(app.query_one("#memory-title").render())


def origins(engine: Any) -> list[str]:
    return [e.origin for e in History(engine.home, engine.clock).entries()]


def errors(app: Any) -> list[str]:
    return [n.message for n in app._notifications if n.severity == "error"]


async def open_path(app: Any, pilot: Any, path: str) -> None:
    lst = app.query_one(MemoryFileList)
    lst.focus()
    lst.highlight_path(path)
    await settle(app, pilot)


async def test_pane_opens_the_summary_with_line_numbers(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_memory(app, pilot)
        editor = app.query_one(MemoryEditor)
        assert editor.text == (root(demo_engine) / "memory_summary.md").read_text()
        assert editor.show_line_numbers and editor.read_only
        assert "memory_summary.md" in title(app)
        lst = app.query_one(MemoryFileList)
        assert lst.has_focus and lst.current == "memory_summary.md"
        ids = [o.id for o in lst.options if o is not None and not o.disabled]
        assert ids[:3] == ["memory_summary.md", "MEMORY.md", "raw_memories.md"]
        assert "skills/shop-tests/SKILL.md" in ids
        first_row = "".join(seg.text for seg in editor.render_line(0))
        assert first_row.split()[:2] == ["1", "v1"]  # the gutter's line number, then text
        assert pane.check_action("edit", ()) is True
        assert pane.check_action("save", ()) is False


async def test_picking_another_file_shows_it(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        await pilot.press("down")
        await settle(app, pilot)
        editor = app.query_one(MemoryEditor)
        assert editor.text == (root(demo_engine) / "MEMORY.md").read_text()
        assert title(app).startswith("MEMORY.md")
        await open_path(app, pilot, "skills/shop-tests/SKILL.md")
        assert editor.text.startswith("---\nname: shop-tests")


async def test_edit_and_save_writes_the_file_and_a_user_commit(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    seen: list[str] = []
    async with app.run_test(size=SIZE, message_hook=lambda m: seen.append(
            type(m).__name__) if isinstance(m, MemoryChanged) else None) as pilot:
        await open_memory(app, pilot)
        await pilot.press("down")
        await settle(app, pilot)
        before = (root(demo_engine) / "MEMORY.md").read_text()
        await pilot.press("e")
        editor = app.query_one(MemoryEditor)
        assert editor.has_focus and not editor.read_only
        assert app.query_one(MemoryFileList).disabled
        await pilot.press(*"# Note: ", "enter")
        assert "modified" in title(app)
        assert app.query_one(MemoryPane).has_unsaved_changes()
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert (root(demo_engine) / "MEMORY.md").read_text() == "# Note: \n" + before
        assert origins(demo_engine)[0] == "user"
        assert History(demo_engine.home, demo_engine.clock).entries()[0].summary == "edit MEMORY.md"
        assert editor.read_only and not app.query_one(MemoryFileList).disabled
        assert "MemoryChanged" in seen
        assert not errors(app)


async def test_escape_asks_before_dropping_an_edit(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        disk = (root(demo_engine) / "memory_summary.md").read_text()
        await pilot.press("e", "x", "escape")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # no: keep editing, text kept
        editor = app.query_one(MemoryEditor)
        assert not editor.read_only and editor.text == "x" + disk
        await pilot.press("escape", "y")
        await settle(app, pilot)
        assert editor.read_only and editor.text == disk
        assert (root(demo_engine) / "memory_summary.md").read_text() == disk
        # nothing typed: escape leaves at once
        await pilot.press("e", "escape")
        assert editor.read_only and not isinstance(app.screen, ConfirmScreen)


async def _conflict(app: Any, pilot: Any, engine: Any) -> tuple[str, str]:
    """Open MEMORY.md for editing, change it on disk, save: the conflict modal is up."""
    await open_memory(app, pilot)
    await pilot.press("down")
    await settle(app, pilot)
    path = root(engine) / "MEMORY.md"
    opened = path.read_text()
    await pilot.press("e", *"MINE ")
    outside = opened + "- written outside while editing\n"
    path.write_text(outside)
    await pilot.press("ctrl+s")
    await settle(app, pilot)
    assert isinstance(app.screen, ConflictScreen)
    assert path.read_text() == outside  # nothing written yet
    return opened, outside


async def test_conflict_shows_both_diffs_and_keep_mine_overwrites(demo_engine,
                                                                  make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        opened, outside = await _conflict(app, pilot, demo_engine)
        disk_diff = str(app.screen.query_one("#diff-disk").render())
        mine_diff = str(app.screen.query_one("#diff-mine").render())
        assert "+- written outside while editing" in disk_diff
        assert "+MINE # Task Group" in mine_diff and "-# Task Group" in mine_diff
        await pilot.press("k")
        await settle(app, pilot)
        path = root(demo_engine) / "MEMORY.md"
        assert path.read_text() == "MINE " + opened
        entries = History(demo_engine.home, demo_engine.clock).entries()
        assert entries[0].origin == "user"
        _, patch = History(demo_engine.home, demo_engine.clock).show(entries[1].commit)
        assert "+- written outside while editing" in patch  # the other version is kept
        assert app.query_one(MemoryEditor).read_only


async def test_conflict_take_disk_drops_the_edit_without_asking_again(demo_engine,
                                                                      make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        _, outside = await _conflict(app, pilot, demo_engine)
        await pilot.press("d")  # the conflict dialog was the question: no second one
        assert not isinstance(app.screen, (ConfirmScreen, ConflictScreen))
        await settle(app, pilot)
        editor = app.query_one(MemoryEditor)
        assert editor.read_only and editor.text == outside
        assert (root(demo_engine) / "MEMORY.md").read_text() == outside


async def test_conflict_back_to_editing_keeps_the_text(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        _, outside = await _conflict(app, pilot, demo_engine)
        await pilot.click("#edit")
        await settle(app, pilot)
        editor = app.query_one(MemoryEditor)
        assert editor.has_focus and not editor.read_only and editor.text.startswith("MINE ")
        assert (root(demo_engine) / "MEMORY.md").read_text() == outside


async def test_a_secret_is_refused_with_one_error(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        disk = (root(demo_engine) / "memory_summary.md").read_text()
        n = len(History(demo_engine.home, demo_engine.clock).entries())
        await pilot.press("e")
        app.query_one(MemoryEditor).insert(f"token: {FAKE_GITHUB_TOKEN}\n")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert len(errors(app)) == 1
        assert "memory_summary.md line 1 holds a secret" in errors(app)[0]
        assert FAKE_GITHUB_TOKEN not in errors(app)[0]
        assert (root(demo_engine) / "memory_summary.md").read_text() == disk
        assert len(History(demo_engine.home, demo_engine.clock).entries()) == n
        editor = app.query_one(MemoryEditor)
        assert not editor.read_only and FAKE_GITHUB_TOKEN in editor.text  # nothing lost


async def test_new_note_is_written_and_listed(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        await pilot.press("n")
        assert isinstance(app.screen, NoteScreen)
        await pilot.click("#note-forget")
        assert app.screen.query_one("#note-text", Input).has_focus
        await pilot.press(*"Friday deploy freeze", "enter")
        await settle(app, pilot)
        name = "2026-11-20T12-00-00-friday-deploy-freeze.md"
        note = root(demo_engine) / "extensions/ad_hoc/notes" / name
        assert note.read_text() == "Forget: Friday deploy freeze\n"
        lst = app.query_one(MemoryFileList)
        assert lst.current == f"extensions/ad_hoc/notes/{name}"
        assert app.query_one(MemoryEditor).text == "Forget: Friday deploy freeze\n"
        assert History(demo_engine.home, demo_engine.clock).entries()[0].origin == "user"


async def test_note_cancel_writes_nothing(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        notes = root(demo_engine) / "extensions/ad_hoc/notes"
        before = sorted(notes.iterdir())
        await pilot.press("n", *"never mind", "escape")
        await settle(app, pilot)
        assert sorted(notes.iterdir()) == before
        assert not isinstance(app.screen, NoteScreen)


async def test_an_invalid_utf8_file_is_read_only(demo_engine, make_app) -> None:
    (root(demo_engine) / "odd.md").write_bytes(b"caf\xe9\n")
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        await open_path(app, pilot, "odd.md")
        assert app.query_one(MemoryEditor).text == "caf\ufffd\n"
        assert "read-only: not valid UTF-8" in title(app)
        await pilot.press("e")
        assert app.query_one(MemoryEditor).read_only
        assert app.query_one(MemoryPane).check_action("edit", ()) is None


async def test_an_empty_memory_folder_says_so(tmp_path, make_app) -> None:
    from memdeck.engine import Engine

    (tmp_path / "home" / "sessions").mkdir(parents=True)
    app = make_app(Engine.open(tmp_path / "home"))
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        assert "The memory folder is empty" in title(app)
        assert app.query_one(MemoryPane).check_action("edit", ()) is None


async def test_palette_commands_call_the_same_actions(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        app.pane_action("memory", "edit")
        await settle(app, pilot)
        assert not app.query_one(MemoryEditor).read_only
        app.pane_action("memory", "leave_edit")
        await settle(app, pilot)
        assert app.query_one(MemoryEditor).read_only
        app.pane_action("memory", "note")
        await settle(app, pilot)
        assert isinstance(app.screen, NoteScreen)


# -- snapshots (120×36, demo home at the fixed time) --------------------------------------------
def snap_app(make_app: Any, engine: Any) -> Any:
    """The demo home at a fixed path (MEMORY.md quotes it), the path hidden in the header."""
    app = make_app(engine)
    app.sub_title = "demo home"
    return app


def test_snapshot_viewing_memory_md(stable_engine, make_app, snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await open_memory(pilot.app, pilot)
        await pilot.press("down")
        await settle(pilot.app, pilot)

    assert snap_compare(snap_app(make_app, stable_engine), terminal_size=SIZE,
                        run_before=run_before)


def test_snapshot_editing(stable_engine, make_app, snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await open_memory(pilot.app, pilot)
        await pilot.press("down")
        await settle(pilot.app, pilot)
        await pilot.press("e", "down", "down", "end", "enter", *"- edited in memdeck")
        await settle(pilot.app, pilot)

    assert snap_compare(snap_app(make_app, stable_engine), terminal_size=SIZE,
                        run_before=run_before)


def test_snapshot_conflict(stable_engine, make_app, snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await _conflict(pilot.app, pilot, stable_engine)

    assert snap_compare(snap_app(make_app, stable_engine), terminal_size=SIZE,
                        run_before=run_before)


def test_snapshot_new_note(stable_engine, make_app, snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await open_memory(pilot.app, pilot)
        await pilot.press("n", *"the staging database moved to db-3")
        await pilot.pause()

    assert snap_compare(snap_app(make_app, stable_engine), terminal_size=SIZE,
                        run_before=run_before)


async def test_agents_view_shows_the_injected_summary(demo_engine, make_app) -> None:
    from memdeck.tui.widgets.memory.injected import InjectedScreen

    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        await pilot.press("i")
        await settle(app, pilot)
        assert isinstance(app.screen, InjectedScreen)
        shown = app.screen.query_one("#injected-text").text
        assert shown == (root(demo_engine) / "memory_summary.md").read_text().strip()
        assert "tokens of 2,500" in str(app.screen.query_one("#injected-note").render())
        await pilot.press("escape")
        assert not isinstance(app.screen, InjectedScreen)


async def test_an_unreadable_memory_folder_is_one_error(demo_engine, make_app,
                                                        tmp_path) -> None:
    real = tmp_path / "elsewhere"
    root(demo_engine).rename(real)
    root(demo_engine).symlink_to(real)
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        assert len(errors(app)) == 1 and "symlink" in errors(app)[0]
        assert not app.query_one(MemoryFileList).loading


async def test_quitting_with_an_unsaved_edit_asks_first(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        await pilot.press("e", "x", "ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.is_running
        await pilot.press("escape")  # cancel: the edit is still there
        assert app.query_one(MemoryPane).has_unsaved_changes() and app.is_running
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert not app.is_running


async def test_title_says_how_often_later_sessions_cited_the_file(demo_engine,
                                                                   make_app) -> None:
    usage = demo_engine.line_usage("MEMORY.md")
    cited = [s for s in usage.lines if s.count]
    assert cited, "the demo home has a session citing MEMORY.md"
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        await open_path(app, pilot, "MEMORY.md")
        n = len(cited)
        assert f"cited {usage.events}× on {n} line{'s' if n != 1 else ''}" in title(app)
        await open_path(app, pilot, "raw_memories.md")
        assert "cited" not in title(app)


async def test_a_summary_without_its_v1_line_is_refused_before_saving(demo_engine,
                                                                      make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        disk = (root(demo_engine) / "memory_summary.md").read_text()
        await pilot.press("e")
        editor = app.query_one(MemoryEditor)
        editor.insert("# My memory\n")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert len(errors(app)) == 1 and "must start with the line `v1`" in errors(app)[0]
        assert (root(demo_engine) / "memory_summary.md").read_text() == disk
        assert not editor.read_only and editor.text.startswith("# My memory\nv1\n")


async def test_a_folded_note_says_so_and_a_waiting_one_says_when(demo_engine,
                                                                 make_app) -> None:
    demo_engine.accept(demo_engine.consolidate("offline").id)  # the demo's note is folded
    waiting = demo_engine.memory_note("Sign every commit", "remember")
    folded = next(f.path for f in demo_engine.memory_files()
                  if f.kind == "note" and f.path != waiting.path)
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_memory(app, pilot)
        await open_path(app, pilot, folded)
        assert "already folded into memory" in title(app)
        assert "at the next consolidation" not in title(app)
        await open_path(app, pilot, waiting.path)
        assert "folded into memory at the next consolidation" in title(app)
