"""A memory file with line numbers and Markdown highlighting: read-only until the user
presses `e`, then an editor that remembers the version it started from."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.binding import Binding
from textual.widgets import TextArea


class MemoryEditor(TextArea):
    """Shows one `MemoryFileText`; `begin_edit` / `end_edit` switch between viewing and
    editing. `base` is the file as it was opened: a save names its version, and leaving
    without saving puts its text back."""

    DEFAULT_CSS = """
    MemoryEditor { height: 1fr; }
    """
    # viewing: g / Home to the top, G / End to the bottom (editing: Home / End stay on the line)
    # (a key bound here replaces TextArea's binding of it: editing keeps Home / End by the
    # second pair, tried when view_jump is off)
    BINDINGS = [
        Binding("g,home", "view_jump(0)", "Top", show=False),
        Binding("G,end", "view_jump(-1)", "Bottom", show=False),
        Binding("home", "cursor_line_start", "Cursor line start", show=False),
        Binding("end", "cursor_line_end", "Cursor line end", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", language="markdown", theme="css", soft_wrap=True,
                         read_only=True, show_line_numbers=True, tab_behavior="indent",
                         **kwargs)
        self.base: Any | None = None  # engine MemoryFileText

    @property
    def editing(self) -> bool:
        return not self.read_only

    @property
    def dirty(self) -> bool:
        return self.editing and self.base is not None and self.text != self.base.text

    def show(self, file: Any) -> None:
        """View `file` (read-only), keeping the cursor line when it is the same file."""
        same = self.base is not None and self.base.path == file.path
        row = self.cursor_location[0] if same else 0
        self.base = file
        self.read_only = True
        self.remove_class("editing")
        self.load_text(file.text)
        self.cursor_location = (min(row, self.document.line_count - 1), 0)
        if not same:
            self.scroll_home(animate=False)

    def clear_file(self) -> None:
        self.base = None
        self.read_only = True
        self.remove_class("editing")
        self.load_text("")

    def begin_edit(self) -> None:
        self.read_only = False
        self.add_class("editing")
        self.focus()

    def end_edit(self, keep_text: bool = False) -> None:
        """Back to viewing; the text typed is dropped unless `keep_text`."""
        self.read_only = True
        self.remove_class("editing")
        if not keep_text and self.base is not None and self.text != self.base.text:
            row = self.cursor_location[0]
            self.load_text(self.base.text)
            self.cursor_location = (min(row, self.document.line_count - 1), 0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "view_jump":
            return self.read_only
        return super().check_action(action, parameters)

    def action_view_jump(self, where: int) -> None:
        last = max(0, self.document.line_count - 1)
        self.move_cursor((0 if where == 0 else last, 0))
        if where == 0:
            self.scroll_home(animate=False)
        else:
            self.scroll_end(animate=False)

    async def _on_key(self, event: events.Key) -> None:
        # Textual calls TextArea's own `_on_key` after this one. While editing it would use
        # Escape to move focus on; here Escape leaves edit mode, so it skips TextArea's
        # handler and bubbles on to the pane's binding.
        if event.key == "escape" and self.editing:
            event.prevent_default()
