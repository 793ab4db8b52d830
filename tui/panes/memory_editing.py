"""The Memory pane's editing (pane 3): edit the open file (`e`, `ctrl+s`), resolve a
conflict with a change made on disk meanwhile, and add ad-hoc notes (`n`). Every engine call
runs in a worker; nothing typed is lost unasked: a save refused (the file changed on disk, or
the folder changed while it was switched in) leaves the text in the editor.

`MemoryPane` (memory.py) is this class with the file list, the editor and the gutter; the
methods here use its `editor`, `file_list`, `wanted`, `open_file`, `reload`, `_title` and
`focus_default`."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.message import Message

from memdeck.engine import MemoryConflict

from ..external_editor import EditorError, run_editor
from ..messages import MemoryChanged
from ..widgets.confirm import ConfirmScreen
from ..widgets.memory.conflict import KEEP_MINE, TAKE_DISK, ConflictScreen
from ..widgets.memory.note import NoteScreen
from .base import Pane

if TYPE_CHECKING:
    from ..widgets.memory.memory_editor import MemoryEditor
    from ..widgets.memory.memory_files import MemoryFileList


class MemoryEditing(Pane):
    @dataclass
    class Saved(Message):
        result: Any
        file: Any
        text: str

    @dataclass
    class Conflicted(Message):
        conflict: MemoryConflict
        mine: str

    class SaveEnded(Message):
        """A save finished one way or another: the editor may save again."""

    @dataclass
    class NoteAdded(Message):
        note: Any

    wanted: str | None  # what MemoryPane (memory.py) provides, for the type checker
    if TYPE_CHECKING:
        @property
        def editor(self) -> MemoryEditor: ...
        @property
        def file_list(self) -> MemoryFileList: ...
        def open_file(self, path: str) -> None: ...
        def _title(self) -> None: ...

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.saving = False

    # -- editing ----------------------------------------------------------------------------
    def action_edit(self) -> None:
        f = self.editor.base
        if f is None or self.editor.editing:
            return
        if f.read_only:
            self.notify(f"{f.path} is read-only: {f.read_only}", severity="warning")
            return
        self.editor.begin_edit()
        self.file_list.disabled = True  # one file at a time: no switching away mid-edit
        self._after_mode_change()

    def action_external_edit(self) -> None:
        """`E`: the open file in the user's editor, on a copy; a change comes back as an edit
        saved the normal way (tui/external_editor.py)."""
        f = self.editor.base
        if f is None or self.editor.editing:
            return
        folder = Path(tempfile.mkdtemp(prefix="memdeck-edit-"))
        copy = folder / PurePosixPath(f.path).name
        try:
            copy.write_text(f.text, encoding="utf-8")
            code = run_editor(self.app, copy)
            text = copy.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            self.notify(f"Your editor saved {f.path} as something other than UTF-8 (byte "
                        f"{e.start}): nothing saved; what it wrote is in {copy}",
                        severity="error", timeout=10)
            return
        except (EditorError, OSError) as e:
            self.notify(f"Editing {f.path} in your editor failed: {e}", severity="error",
                        timeout=8)
            return
        if code != 0:
            self.notify(f"The editor exited with {code}: nothing saved; what it wrote is in "
                        f"{copy}", severity="warning", timeout=10)
            return
        if text == f.text:
            shutil.rmtree(folder, ignore_errors=True)
            self.notify(f"No change to {f.path}.", timeout=3)
            return
        if f.read_only:
            self.notify(f"{f.path} is read-only ({f.read_only}): nothing saved; your text is "
                        f"in {copy}", severity="warning", timeout=10)
            return
        self.action_edit()  # the text is the app's edit now: a refused save keeps it here
        self.editor.text = text
        shutil.rmtree(folder, ignore_errors=True)
        self._save(f.path, text, f.version)

    def _after_mode_change(self) -> None:
        self._title()
        self.refresh_bindings()
        self.focus_default()

    def _stop_editing(self, keep_text: bool = False) -> None:
        self.editor.end_edit(keep_text=keep_text)
        self.file_list.disabled = False
        self._after_mode_change()

    def action_leave_edit(self) -> None:
        if not self.editor.editing:
            return
        if self.saving:
            self.notify("Saving… wait a moment before leaving.", timeout=3)
            return
        if not self.editor.dirty:
            self._stop_editing()
            return
        path = self.editor.base.path if self.editor.base else "the file"

        def answered(discard: bool | None) -> None:
            if discard:
                self._stop_editing()
                self.open_file(self.wanted or path)  # show what is on disk now

        self.app.push_screen(ConfirmScreen(f"Discard your changes to {path}?",
                                           "What you typed since pressing e will be lost.",
                                           yes="Discard", danger=True), answered)

    def action_save(self) -> None:
        f = self.editor.base
        if not self.editor.editing or f is None or self.saving:
            return
        if not self.editor.dirty:
            self.notify("No changes to save.", timeout=3)
            return
        self._save(f.path, self.editor.text, f.version)

    def _save(self, path: str, text: str, base_version: str | None) -> None:
        self.saving = True
        self._title()
        self.save_file(path, text, base_version)

    @work(thread=True, exclusive=True, group="memory-save", name="saving the memory file",
          exit_on_error=False)
    def save_file(self, path: str, text: str, base_version: str | None) -> None:
        try:
            try:
                result = self.engine.memory_save(path, text, base_version)
            except MemoryConflict as c:
                self.post_message(self.Conflicted(c, text))
                return
            self.post_message(self.Saved(result, self.engine.memory_read(path), text))
        finally:
            self.post_message(self.SaveEnded())

    @on(SaveEnded)
    def _save_ended(self) -> None:
        self.saving = False
        self._title()

    @on(Saved)
    def _saved(self, event: Saved) -> None:
        r = event.result
        base = self.editor.base
        if self.editor.editing and base is not None and base.path == event.file.path:
            if self.editor.text == event.text:
                self._stop_editing(keep_text=True)
                self.editor.show(event.file)  # the saved file, with its new version
            else:  # typed on while saving: keep editing from the version just written
                self.editor.base = event.file
            self._title()
        commit = f" (history {r.commit[:7]}, your edit)" if r.commit else ""
        self.notify(f"Saved {r.path}{commit}.", timeout=4)
        self.post_message(MemoryChanged("edit"))

    @on(Conflicted)
    def _conflicted(self, event: Conflicted) -> None:
        c, base = event.conflict, self.editor.base
        if base is None:
            return

        def chosen(choice: str | None) -> None:
            if choice == KEEP_MINE:
                self._save(c.path, self.editor.text, c.disk_version)
            elif choice == TAKE_DISK:  # the choice in the conflict dialog is the answer
                self._take_disk(c)
            else:
                self.editor.focus()

        self.app.push_screen(ConflictScreen(c.path, base.text, c.disk_text, event.mine),
                             chosen)

    def _take_disk(self, c: MemoryConflict) -> None:
        """Drop the edit for the version on disk (the conflict dialog asked: not again)."""
        self._stop_editing()
        if c.disk_text is None:
            self.wanted = None
            self.editor.clear_file()
        self.reload()  # the list and the file as they are on disk now
        self.notify(f"Your edit of {c.path} was dropped; showing the version on disk.",
                    timeout=4)

    # -- ad-hoc notes -----------------------------------------------------------------------
    def action_note(self) -> None:
        def answered(result: tuple[str, str] | None) -> None:
            if result is not None:
                kind, text = result
                self.add_note(text, kind)

        self.app.push_screen(NoteScreen(), answered)

    @work(thread=True, group="memory-note", name="adding the note", exit_on_error=False)
    def add_note(self, text: str, kind: str) -> None:
        self.post_message(self.NoteAdded(self.engine.memory_note(text, kind)))

    @on(NoteAdded)
    def _note_added(self, event: NoteAdded) -> None:
        self.notify(f"Note added: {event.note.path}", timeout=5)
        if not self.editor.editing:
            self.wanted = event.note.path  # show it once the list is read again
        self.post_message(MemoryChanged("edit"))
