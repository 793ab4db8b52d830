"""Pane 3, Memory: the memory folder's files with line numbers, Markdown highlighting and the
usage gutter; the agent's view (`i`), a line's trace (`t`) and its users (`u`). Editing and
notes are in memory_editing.py. Every engine call runs in a worker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static, TextArea
from textual.worker import Worker, WorkerState

from memdeck.engine import MemdeckError, NotFound, human_size, local_time

from ..widgets.memory.imported_memory import title_lines
from ..widgets.memory.injected import InjectedScreen
from ..widgets.memory.line_trace import LineTraceScreen
from ..widgets.memory.memory_editor import MemoryEditor
from ..widgets.memory.memory_files import MemoryFileList
from .memory_scope import MemoryScope

DEFAULT_FILES = ("memory_summary.md", "MEMORY.md")


class MemoryPane(MemoryScope):
    TITLE = "Memory"
    BINDINGS = [
        Binding("e", "edit", "Edit", id="memory.edit"),
        Binding("E", "external_edit", "Edit in $EDITOR", id="memory.external_edit",
                show=False),
        Binding("ctrl+s", "save", "Save", id="memory.save"),
        Binding("escape", "leave_edit", "Stop editing", id="memory.leave"),
        Binding("n", "note", "New note", id="memory.note"),
        Binding("i", "injected", "Agent's view", id="memory.injected"),
        Binding("t", "trace", "Trace line", id="memory.trace"),
        Binding("u", "used_by", "Used by", id="memory.used_by"),
        Binding("w", "rescope", "Re-scope", id="memory.rescope", show=False),
        Binding("R", "reload", "Reload", id="memory.reload", show=False),
        Binding("j", "list_move(1)", "Down", show=False),  # in the file list, as everywhere
        Binding("k", "list_move(-1)", "Up", show=False),
    ]
    COMMANDS = [
        ("Edit this memory file", "Edit the open memory file (ctrl+s saves)", "edit"),
        ("Edit this memory file in $EDITOR", "Your own editor on a copy; what it saves "
         "comes back through the same save (a change on disk meanwhile is shown first)",
         "external_edit"),
        ("Save the memory file", "Save the edit; a change made on disk meanwhile is shown "
         "first", "save"),
        ("Stop editing", "Leave edit mode (asks before dropping unsaved changes)",
         "leave_edit"),
        ("New ad-hoc note", "Ask the next consolidation to remember or forget something",
         "note"),
        ("What the agent sees", "memory_summary.md as the next session gets it, with its "
         "token count", "injected"),
        ("Reload memory files", "Read the memory folder again", "reload"),
        ("Trace this line", "Where the cursor's line came from: its block, summaries, raw "
         "memory, session and turn, and who last changed it", "trace"),
        ("Sessions that used this line", "The sessions that cited the cursor's line, each "
         "opening at its citation", "used_by"),
    ]

    @dataclass
    class Loaded(Message):
        files: list[Any]

    @dataclass
    class FileLoaded(Message):
        file: Any
        disk_path: str = ""  # where it is on disk (`Y` copies it), "" when not in the root

    @dataclass
    class InjectedLoaded(Message):
        summary: Any

    @dataclass
    class UsageLoaded(Message):
        path: str
        usage: Any  # engine FileUsage, or None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.files: list[Any] = []
        self.wanted: str | None = None  # the file shown, or being loaded
        self._disk_path = ""  # the open file on disk, read in the worker that loaded it
        self.usage: Any | None = None  # engine FileUsage of the file shown (the gutter)
        self._goto: tuple[str, int] | None = None  # open_at: the line to put the cursor on

    def compose(self) -> ComposeResult:
        with Horizontal(id="memory-body"):
            with Vertical(id="memory-side"):
                yield MemoryFileList(id="memory-files")
            with Vertical(id="memory-main"):
                yield Static("", id="memory-title")
                yield MemoryEditor(id="memory-editor")

    def on_mount(self) -> None:
        self.query_one(MemoryFileList).loading = True

    @property
    def editor(self) -> MemoryEditor:
        return self.query_one(MemoryEditor)

    @property
    def file_list(self) -> MemoryFileList:
        return self.query_one(MemoryFileList)

    def has_unsaved_changes(self) -> bool:
        """For the App to ask before quitting: an edit not saved yet."""
        return self.editor.dirty

    def focus_default(self) -> None:
        (self.editor if self.editor.editing else self.file_list).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        editing = self.editor.editing
        if action == "edit":
            if editing:
                return False
            base = self.editor.base
            return base is not None and base.read_only is None or None
        if action in ("save", "leave_edit"):
            return editing
        if action in ("note", "injected", "external_edit"):
            return not editing
        if action == "rescope":
            return not editing and self.editor.base is not None \
                and self.editor.base.path == "MEMORY.md"
        if action in ("trace", "used_by"):
            return not editing and self.editor.base is not None
        if action == "list_move":
            return self.file_list.has_focus
        return True

    def copy_value(self, what: str) -> tuple[str, str] | None:
        f = self.editor.base
        if f is None:
            return None
        if what == "id":
            return "file name", f.path
        return ("file path", self._disk_path) if self._disk_path else None

    def action_list_move(self, delta: int) -> None:
        if delta > 0:
            self.file_list.action_cursor_down()
        else:
            self.file_list.action_cursor_up()

    # -- loading ----------------------------------------------------------------------------
    def reload(self) -> None:
        # the gutter (citations read from the sessions) is loaded once the file is drawn,
        # not beside it: its thread would take the GIL from the first paint
        self.load_files()
        self.load_scope()

    @work(thread=True, exclusive=True, group="memory-usage", name="counting citations",
          exit_on_error=False)
    def load_usage(self, path: str) -> None:
        try:
            # with the watcher on, the index is kept current already: do not re-scan for it
            live = getattr(self.app, "live_updates", False)
            usage = self.engine.line_usage(path, refresh=not live)
        except NotFound:
            usage = None  # gone meanwhile: the next listing says so
        self.post_message(self.UsageLoaded(path, usage))

    @on(UsageLoaded)
    def _usage(self, event: UsageLoaded) -> None:
        base = self.editor.base
        if base is None or base.path != event.path or self.editor.editing:
            return
        usage = event.usage if event.usage is not None and (
            event.usage.events or citable(event.path)) else None
        self.usage = usage
        self.editor.set_usage(usage, self.engine.clock.now())
        self._title()

    def cited_text(self) -> str:
        """`cited 14× on 6 lines · 2 removed`: the open file's use by later sessions."""
        u = self.usage
        if u is None or not u.events:
            return ""
        lines = [s for s in u.lines if s.count]
        text = f"cited {u.events}× on {len(lines)} line{'s' if len(lines) != 1 else ''}"
        if u.removed:
            text += f" · {len(u.removed)} cited since removed"
        return text

    @work(thread=True, exclusive=True, group="memory-load", name="loading memory files",
          exit_on_error=False)
    def load_files(self) -> None:
        self.post_message(self.Loaded(self.engine.memory_files()))

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        self.files = event.files
        lst = self.file_list
        lst.loading = False
        paths = [f.path for f in event.files]
        editing = self.editor.base.path if self.editor.editing and self.editor.base else None
        want = editing or (self.wanted if self.wanted in paths else next(
            (p for p in (*DEFAULT_FILES, *paths) if p in paths), None))
        lst.set_files(event.files, keep=want)
        if self.focus_lost():
            self.focus_default()  # the list could not take focus while it was loading
        if want is None:
            self.wanted = None
            if not self.editor.editing:
                self.editor.clear_file()
            self._title()
            return
        if not self.editor.editing:
            self.open_file(want)  # the text may have changed on disk too

    def open_file(self, path: str) -> None:
        self.wanted = path
        self.read_file(path)

    @work(thread=True, exclusive=True, group="memory-read", name="opening the memory file",
          exit_on_error=False)
    def read_file(self, path: str) -> None:
        file = self.engine.memory_read(path)
        try:
            disk_path = str(self.engine.memory_file_path(file.path))
        except MemdeckError:  # an imported file lives outside the memory root
            disk_path = ""
        self.post_message(self.FileLoaded(file, disk_path))

    @on(FileLoaded)
    def _file_loaded(self, event: FileLoaded) -> None:
        if event.file.path != self.wanted or self.editor.editing:
            return  # the user moved on, or is editing: never replace their text
        self.editor.show(event.file)
        self._disk_path = event.disk_path
        if not self.editor.usage:
            self.usage = None
        if self._goto is not None and self._goto[0] == event.file.path:
            self.editor.move_cursor((max(0, self._goto[1] - 1), 0), center=True)
            self._goto = None
        self._title()
        self.refresh_bindings()
        self.call_after_refresh(self.load_usage, event.file.path)

    @on(OptionList.OptionHighlighted, "#memory-files")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        path = event.option.id
        if path and not event.option.disabled and path != self.wanted \
                and not self.editor.editing:
            self.open_file(path)

    @on(OptionList.OptionSelected, "#memory-files")
    def _selected(self) -> None:
        self.editor.focus()

    # -- the title line ---------------------------------------------------------------------
    def _title(self) -> None:
        title = self.query_one("#memory-title", Static)
        f = self.editor.base
        title.set_class(f is not None and f.kind == "imported", "imported")  # room for scope
        if f is None:
            title.update(Content.from_markup(
                "[b]The memory folder is empty.[/b]\n[$text-muted]Codex fills it after its "
                "first consolidation; press [b]n[/b] to add a note now.[/]"))
            return
        info = next((i for i in self.files if i.path == f.path), None)
        size = human_size(info.size) if info is not None else ""
        lines = self.editor.document.line_count
        meta = f"{size} · {lines} line{'s' if lines != 1 else ''}"
        room = max(12, title.content_size.width - len(meta) - 2)
        path = f.path if len(f.path) <= room else "…" + f.path[-(room - 1):]
        head = Content.assemble((path, "bold"), "  ", (meta, "$text-muted"))
        if cited := self.cited_text():
            head = Content.assemble(head, ("  ·  ", "$text-muted"), (cited, "bold $text-accent"))
        if self.editor.editing:
            state = ("● modified", "bold $text-warning") if self.editor.dirty else (
                "editing", "bold $text-warning")
            sub = Content.assemble(state, (" — ctrl+s save · esc stop editing"
                                           + (" · saving…" if self.saving else ""),
                                           "$text-muted"))
        elif f.kind == "imported":  # why read-only, and the folder its memory applies to
            sub = Content("\n").join(title_lines(f, title.content_size.width))
        elif f.read_only:
            sub = Content.styled(f"read-only: {f.read_only}", "$text-warning")
        elif (stat := self.editor.cursor_stat()) is not None:
            sub = line_use(stat)
        else:
            sub = Content.styled(f.hint or "press e to edit", "$text-muted")
        scope = "" if self.editor.editing else self.scope_line(
            f.path, self.editor.cursor_location[0] + 1)
        title.set_class(bool(scope), "scoped")
        title.update(Content("\n").join(
            [head, sub, *([Content.styled(scope, "$text-muted")] if scope else [])]))

    def on_resize(self) -> None:
        self._title()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Textual calls Pane's handler too (it shows the error); here the list stops spinning
        if event.state is WorkerState.ERROR and event.worker.group == "memory-load":
            self.file_list.loading = False

    @on(TextArea.Changed, "#memory-editor")
    def _typed(self) -> None:
        if self.editor.editing:
            self._title()

    # -- what the agent is shown -----------------------------------------------------------
    def action_injected(self) -> None:
        self.load_injected()

    @work(thread=True, exclusive=True, group="memory-injected",
          name="reading what the agent is shown", exit_on_error=False)
    def load_injected(self) -> None:
        self.post_message(self.InjectedLoaded(self.engine.memory_injected()))

    @on(InjectedLoaded)
    def _injected(self, event: InjectedLoaded) -> None:
        self.app.push_screen(InjectedScreen(event.summary))

    def action_reload(self) -> None:
        self.reload()

    # -- tracing a line (issue 11) ----------------------------------------------------------
    def open_at(self, path: str, line: int) -> None:
        """Show `path` with the cursor on `line` (1-based): a trace's summary file."""
        if self.editor.editing:
            self.notify("Finish the edit first (ctrl+s saves, esc stops)", severity="warning")
            return
        self._goto = (path, line)
        self.file_list.set_files(self.files, keep=path)
        self.open_file(path)
        self.editor.focus()

    def _cursor_line(self) -> tuple[str, int] | None:
        base = self.editor.base
        return (base.path, self.editor.cursor_location[0] + 1) if base is not None else None

    def action_trace(self) -> None:
        if (where := self._cursor_line()) is not None:
            self.app.push_screen(LineTraceScreen(*where, removed=self._removed(where[0])))

    def action_used_by(self) -> None:
        if (where := self._cursor_line()) is not None:
            self.app.push_screen(LineTraceScreen(*where, start="used",
                                                 removed=self._removed(where[0])))

    def _removed(self, path: str) -> Any:
        """The gutter's citations since removed, so the trace need not count them again."""
        u = self.usage
        return u.removed if u is not None and u.path == path else None

    @on(TextArea.SelectionChanged, "#memory-editor")
    def _cursor_moved(self) -> None:
        if self.editor.showing_usage or (self.editor.base is not None
                                         and self.editor.base.path == "MEMORY.md"):
            self._title()


def citable(path: str) -> bool:
    """Files the agent is told to grep and cite (docs/codex-format.md "Citations"): the gutter
    is shown for them even before anything was cited; other files get one only once cited."""
    return path == "MEMORY.md" or path.startswith(("rollout_summaries/", "skills/"))


def line_use(stat: Any) -> Content:
    """The cursor line's use, under the title: how often and when it was cited, whether and
    when it drops out, and the keys that follow it."""
    if stat.count:
        use = (f"line {stat.line}: cited {stat.count}×, last {local_time(stat.last_cited)}"
               if stat.last_cited else f"line {stat.line}: cited {stat.count}×")
    else:
        use = f"line {stat.line}: never cited"
    parts = [(use, "$text-accent" if stat.count else "$text-muted")]
    if stat.drop_note:
        parts.append((f" · {stat.drop_note}", "$text-warning" if stat.drops_out else
                      "$text-muted"))
    parts.append((" · t trace · u used by · e edit", "$text-muted"))
    return Content.assemble(*parts)
