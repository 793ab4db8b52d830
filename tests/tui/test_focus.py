"""Where the focus is, and what moves it (issue 23, item 7): the focused area of every pane
carries a bar on its left edge, tab / shift+tab move between a pane's areas, j / k move the
line in a file being viewed (and type while editing), the Settings pane's Keys is `K` (so `k`
moves in its lists as everywhere else), and every dialog's footer shows the dialog's keys."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input, Select, Switch
from textual.widgets._select import SelectCurrent

from memdeck.tui.widgets.memory.memory_editor import MemoryEditor
from memdeck.tui.widgets.memory.memory_files import MemoryFileList
from memdeck.tui.widgets.memory.note import NoteScreen
from memdeck.tui.widgets.settings.binding_list import BindingList

from .conftest import SIZE, settle
from .test_keys import footer_keys

OWN_FOCUS_STYLE = (Input, Switch, Select, SelectCurrent)
PANES = ["sessions", "memories", "memory", "history", "review", "settings"]


def focus_bar(widget: Any) -> str:
    """The style of the bar drawn on the widget's left edge ('' for none)."""
    kind, _color = widget.styles.outline_left
    return kind or ""


@pytest.mark.parametrize("pane", PANES)
async def test_the_focused_area_of_every_pane_has_a_bar_and_the_others_none(
        demo_engine: Any, make_app: Any, pane: str) -> None:
    app = make_app(demo_engine, initial=pane)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        focused = app.focused
        assert focused is not None, f"nothing has the focus in {pane}"
        if isinstance(focused, OWN_FOCUS_STYLE):
            assert pane == "settings"  # its first area is a field: a field shows its own focus
        else:
            assert focus_bar(focused) == "tall"
        others = [w for w in app.pane(pane).query("*") if w.focusable and w is not focused]
        assert all(focus_bar(w) in ("", "none") for w in others), pane


async def test_tab_and_shift_tab_move_the_bar_between_the_file_list_and_the_file(
        demo_engine: Any, make_app: Any) -> None:
    app = make_app(demo_engine, initial="memory")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        files, editor = app.query_one(MemoryFileList), app.query_one(MemoryEditor)
        start = app.focused
        assert start in (files, editor)
        other = editor if start is files else files
        await pilot.press("tab")
        await settle(app, pilot)
        assert app.focused is other and focus_bar(other) == "tall"
        assert focus_bar(start) in ("", "none")
        await pilot.press("shift+tab")
        await settle(app, pilot)
        assert app.focused is start and focus_bar(start) == "tall"


async def test_j_and_k_move_the_line_while_viewing_and_type_while_editing(
        demo_engine: Any, make_app: Any) -> None:
    app = make_app(demo_engine, initial="memory")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        editor = app.query_one(MemoryEditor)
        editor.focus()
        await settle(app, pilot)
        assert editor.read_only and editor.document.line_count > 3
        text = editor.text
        editor.cursor_location = (0, 0)
        await pilot.press("j", "j")
        assert editor.cursor_location[0] == 2
        await pilot.press("k")
        assert editor.cursor_location[0] == 1
        assert editor.text == text  # viewing: nothing typed
        await pilot.press("e")
        await settle(app, pilot)
        assert not editor.read_only
        await pilot.press("j", "k")
        assert "jk" in editor.text  # editing: the letters are text


async def test_capital_k_opens_the_keys_and_small_k_moves_in_the_settings(
        demo_engine: Any, make_app: Any) -> None:
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert footer_keys(app).get("K") == "Keys"
        assert "k" not in footer_keys(app)
        await pilot.press("k")
        await settle(app, pilot)
        assert not isinstance(app.focused, BindingList)
        await pilot.press("K")
        await settle(app, pilot)
        assert isinstance(app.focused, BindingList)


@pytest.mark.parametrize("key, close", [("question_mark", "Close"), ("n", "Cancel"),
                                        ("at", None), ("i", None)])
async def test_a_dialog_footer_shows_the_dialog_keys_not_the_pane_behind_it(
        demo_engine: Any, make_app: Any, key: str, close: str | None) -> None:
    app = make_app(demo_engine, initial="memory")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane_keys = footer_keys(app)
        assert pane_keys.get("e") == "Edit"
        await pilot.press(key)
        await settle(app, pilot)
        assert app.screen is not app.screen_stack[0], f"{key} opened no dialog"
        keys = footer_keys(app)
        assert "e" not in keys and "n" not in keys  # the Memory pane's keys are not shown
        if close:
            assert close in keys.values()
        from memdeck.tui.widgets.key_footer import KeyFooter
        assert app.screen.query(KeyFooter), "the dialog draws no footer"


async def test_tab_in_the_note_dialog_moves_between_its_parts_and_keeps_the_text(
        demo_engine: Any, make_app: Any) -> None:
    app = make_app(demo_engine, initial="memory")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        assert isinstance(app.screen, NoteScreen)
        await pilot.press(*"use uv")
        await pilot.press("shift+tab")
        await pilot.press("tab")
        field = app.screen.query_one(Input)
        assert field.value == "use uv"
