"""Pane 6, Settings: Codex's memory switches and thresholds (config.toml), memdeck's own
settings (memdeck/config.toml), the keys, and reset / restore from a backup.

Every change is written at once by a worker; a value the engine refuses is shown as one line
and the stored value comes back on screen."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static

from memdeck.engine import (
    ConfigError,
    SettingValue,
    all_keys,
    local_time_with_seconds,
    resolve_key,
)

from ..messages import MemoryChanged, SessionsChanged
from ..widgets.confirm import AskScreen, ConfirmScreen, TypedConfirmScreen
from ..widgets.settings.backup_list import BackupList
from ..widgets.settings.binding_list import BindingList, collect_bindings
from ..widgets.settings.setting_row import SettingRow
from .base import Pane

# The three switches at the top: key, label, what it means.
SWITCHES = [
    ("use_memories", "Use memories",
     "new sessions are shown the memory summary (off: kept, but not used)"),
    ("generate_memories", "Generate memories",
     "new sessions may become memories (off: nothing new is extracted)"),
    ("memories", "Memories feature",
     "[features] memories: Codex's master switch for extracting and using memories"),
]
SECRET_KEYS = {"memdeck.api_key"}

RESET_DETAIL = (
    "This clears what Codex's own reset clears: every raw memory and memory job in the "
    "pipeline databases (v1 and v2), and all files in memories/, memories_v2/ and "
    "memories_extensions/ (MEMORY.md, memory_summary.md, skills, notes); the folders that exist "
    "stay, empty. Sessions and their transcripts are kept.\n\n"
    "A backup of all of it is taken first; it appears under Backups and can be restored.")


def version_detail(current: str, new: str) -> str:
    roots = {"v1": "memories/", "v2": "memories_v2/"}
    dbs = {"v1": "memories_1.sqlite", "v2": "memories_v2_1.sqlite"}
    return (f"From its next session Codex reads {roots.get(new, new)} and keeps its memory jobs "
            f"in {dbs.get(new, new)}; memdeck shows and consolidates that memory. "
            f"{roots.get(current, current)} and its raw memories are kept as they are, unused "
            "until you switch back. This writes [memories] version to config.toml.")


def backend_line(name: str) -> str:
    if name == "offline":
        return "Backend in effect: offline (heuristic: no model calls, nothing leaves this machine)"
    if name == "openai":
        return "Backend in effect: openai (an OpenAI-compatible endpoint does the extraction)"
    return f"Backend in effect: {name}"


NARROW_SETTINGS = 140  # below this width a description gets its own line


class SettingsPane(Pane):
    TITLE = "Settings"
    BINDINGS = [
        Binding("R", "reset", "Reset…", id="settings.reset"),
        Binding("K", "keys", "Keys", id="settings.keys"),
        Binding("b", "backups", "Backups", id="settings.backups"),
    ]
    COMMANDS = [
        ("Reset all memories", "Back up, then clear raw memories and the memory folder",
         "reset"),
        ("Restore a backup", "Go to the list of backups (Enter restores one)", "backups"),
        ("Remap keys", "Go to the list of keys (Enter remaps one)", "keys"),
        ("Toggle use memories", "Whether Codex shows new sessions the memory summary",
         "toggle('use_memories')"),
        ("Toggle generate memories", "Whether new sessions may become memories",
         "toggle('generate_memories')"),
        ("Toggle the memories feature", "Codex's [features] memories flag",
         "toggle('memories')"),
    ]

    @dataclass
    class Loaded(Message):
        settings: list[SettingValue]
        problems: list[str]
        backend: str
        keymap: dict[str, str]
        backups: list[Any]

    @dataclass
    class Saved(Message):
        setting: SettingValue
        backend: str

    @dataclass
    class Refused(Message):
        key: str
        error: str
        setting: SettingValue | None

    @dataclass
    class KeymapSaved(Message):
        keymap: dict[str, str]
        binding_id: str
        keys: str | None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._write_lock = threading.Lock()  # one read-modify-write of a file at a time
        self.keymap: dict[str, str] = {}
        self._last_focus: Widget | None = None
        self._reported: set[str] = set()
        self._rest_started = False
        self._rest_built = asyncio.Event()
        self._last_loaded: SettingsPane.Loaded | None = None
        self._backend_name = ""

    # -- layout ---------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        # narrow: each setting's description goes under its name, full width (settings.tcss);
        # a no-op unless the width crossed NARROW_SETTINGS (the class was set at compose)
        self.set_class(event.size.width < NARROW_SETTINGS, "-narrow")

    def compose(self) -> ComposeResult:
        # the pane fills the app's width: setting the class now, before the rows exist, costs
        # nothing, while on the first Resize it would restyle every row once more
        self.set_class(self.app.size.width < NARROW_SETTINGS, "-narrow")
        # read the files while the rows are built, not after: Loaded is handled once compose
        # has mounted them, so the first paint shows the values instead of a second layout of
        # the whole pane ~150 ms later (the app's own activate() then finds nothing stale)
        self.activate()
        top = {k for k, _, _ in SWITCHES}
        with VerticalScroll(id="settings-scroll"):
            yield self._title("Memories in Codex", "config.toml")
            for key, label, meaning in SWITCHES:
                yield SettingRow(key, resolve_key(key)[2], label=label, help=meaning)
            yield self._title("Codex [memories] thresholds and options", "config.toml")
            for key in all_keys():
                if key not in top and not key.startswith("memdeck."):
                    yield SettingRow(key, resolve_key(key)[2])

    def _below_the_first_screen(self) -> list[Widget]:
        """memdeck's settings, the keys and the backups: built after the pane's first paint
        (`_build_the_rest`), as the first screen (120x36) ends with Codex's settings."""
        widgets: list[Widget] = [self._title("memdeck", "memdeck/config.toml"),
                                 Static("", id="backend-effect", classes="settings-note")]
        widgets += [SettingRow(key, resolve_key(key)[2], secret=key in SECRET_KEYS)
                    for key in all_keys() if key.startswith("memdeck.")]
        widgets += [
            self._title("Keys", "memdeck/config.toml [keymap]"),
            Static("Enter on a binding asks for new keys (e.g. ctrl+r or f5,x; empty: "
                   "back to the default). Remapped keys are bold and marked *.",
                   classes="settings-note"),
            BindingList(id="keys-table"),
            self._title("Reset and backups", "memdeck/backups/"),
            Static(RESET_DETAIL.split("\n\n")[0], classes="settings-note"),
            Horizontal(Button("Reset all memories…", id="reset-button", variant="error",
                              compact=True),
                       Static("R · you will be asked to type reset", classes="settings-note",
                              id="reset-hint"), id="reset-row"),
            Static("Backups (Enter on one restores it; the state replaced is backed up "
                   "first):", classes="settings-note", id="backups-title"),
            BackupList(id="backup-list"),
            Static("No backups yet: a reset or a restore takes one first.",
                   id="backups-empty", classes="settings-note"),
        ]
        return widgets

    async def _build_the_rest(self) -> None:
        """Mount what is below the first screen (once); an action that needs it awaits this."""
        if self._rest_started:
            await self._rest_built.wait()
            return
        self._rest_started = True
        await self.query_one("#settings-scroll").mount_all(self._below_the_first_screen())
        self._rest_built.set()
        if self._last_loaded is not None:
            self._show_loaded(self._last_loaded)
        self.query_one("#backend-effect", Static).update(backend_line(self._backend_name))

    @staticmethod
    def _title(title: str, where: str) -> Static:
        return Static(Text.assemble(title, "  ", (where, "dim")), classes="section-title")

    def focus_default(self) -> None:
        last = self._last_focus
        if last is not None and last.is_attached and last.focusable:
            last.focus()  # back where the user was in this long pane
        else:
            self.query_one("#setting-use_memories", SettingRow).control.focus()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self._last_focus = event.widget

    def row(self, key: str) -> SettingRow:
        return self.query_one("#setting-" + key.replace(".", "-"), SettingRow)

    # -- loading --------------------------------------------------------------------------
    def reload(self) -> None:
        self.load_settings()

    @work(thread=True, exclusive=True, group="settings-load", name="loading settings",
          exit_on_error=False)
    def load_settings(self) -> None:
        # key by key: a config.toml that does not parse must not hide memdeck's settings
        settings: list[SettingValue] = []
        problems: list[str] = []
        for key in all_keys():
            try:
                settings.append(self.engine.config_get(key))
            except ConfigError as e:
                if str(e) not in problems:
                    problems.append(str(e))
        try:
            keymap, _ = self.engine.keymap()  # the app reported unusable entries at start
        except ConfigError:
            keymap = {}
        self.post_message(self.Loaded(settings, problems, self._backend(), keymap,
                                      self.engine.backups()))

    def _backend(self) -> str:
        try:
            return str(self.engine.backend_name())
        except ConfigError:
            return "unknown (a config file cannot be read)"

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        self._last_loaded = event
        self._backend_name = event.backend
        self.keymap = event.keymap
        self._show_loaded(event)
        if not self._rest_started:  # once the first screen is drawn with its values
            self.call_after_refresh(self.set_timer, 0.05, self._build_the_rest)
        for problem in event.problems:
            if problem in self._reported:
                continue
            self._reported.add(problem)  # once, not on every reload
            self.notify(f"{problem}; those settings cannot be changed here until it is fixed",
                        severity="error", timeout=10)

    def _show_loaded(self, event: Loaded) -> None:
        """Show what was read in the widgets built so far (the rest: `_build_the_rest`)."""
        loaded = {s.key for s in event.settings}
        rows = {row.key: row for row in self.query(SettingRow)}
        for row in rows.values():
            row.disabled = row.key not in loaded  # its file cannot be read: no edits
        for s in event.settings:
            if s.key in rows:
                rows[s.key].show(s)
        if not self._rest_built.is_set():
            return
        self.query_one("#backend-effect", Static).update(backend_line(event.backend))
        self.query_one(BindingList).fill(collect_bindings(self.app), self.keymap)
        self._show_backups(event.backups)

    def _show_backups(self, backups: list[Any]) -> None:
        self.query_one(BackupList).fill(backups)
        self.query_one(BackupList).display = bool(backups)
        self.query_one("#backups-empty").display = not backups

    # -- settings -------------------------------------------------------------------------
    @on(SettingRow.Edited)
    def _edited(self, event: SettingRow.Edited) -> None:
        if event.key in SECRET_KEYS and event.text is None:
            def answered(yes: bool | None) -> None:
                if yes:
                    self.save_setting(event.key, None)
                else:
                    event.row.revert()

            self.app.push_screen(ConfirmScreen(
                "Remove the API key?", "memdeck will use OPENAI_API_KEY from the environment "
                "(if set) instead.", yes="Remove", danger=True), answered)
            return
        if event.key == "version" and event.text is not None:
            self._ask_version(event)
            return
        self.save_setting(event.key, event.text)

    def _ask_version(self, event: SettingRow.Edited) -> None:
        new = (event.text or "").strip('"')
        current = event.row.current.value if event.row.current else None
        if new == current:
            self.save_setting(event.key, event.text)  # pins what Codex already uses
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.save_setting(event.key, event.text)
            else:
                event.row.revert()

        self.app.push_screen(ConfirmScreen(f"Switch Codex to memory {new}?", version_detail(
            str(current), new), yes=f"Use {new}"), answered)

    @work(thread=True, group="settings-save", name="saving a setting", exit_on_error=False)
    def save_setting(self, key: str, text: str | None) -> None:
        with self._write_lock:
            try:
                setting = (self.engine.config_set(key, text) if text is not None
                           else self.engine.config_unset(key))
            except ConfigError as e:
                try:
                    stored: SettingValue | None = self.engine.config_get(key)
                except ConfigError:
                    stored = None
                self.post_message(self.Refused(key, str(e), stored))
                return
        self.post_message(self.Saved(setting, self._backend()))
        if not key.startswith("memdeck."):  # statuses depend on Codex's switches/thresholds
            self.post_message(SessionsChanged())

    @on(Saved)
    async def _saved(self, event: Saved) -> None:
        await self._build_the_rest()
        s = event.setting
        self._backend_name = event.backend
        self.row(s.key).show(s)
        self.query_one("#backend-effect", Static).update(backend_line(event.backend))
        file = "memdeck/config.toml" if s.key.startswith("memdeck.") else "config.toml"
        if s.key in SECRET_KEYS:
            what = "API key saved" if s.is_set else "API key removed"
        elif s.is_set:
            what = f"{s.key} = {s.value if not isinstance(s.value, bool) else str(s.value).lower()}"
        else:
            what = f"{s.key} removed (default applies)"
        self.notify(f"{what} · {file}", timeout=3)

    @on(Refused)
    async def _refused(self, event: Refused) -> None:
        await self._build_the_rest()
        self.notify(event.error, severity="error", timeout=8)
        row = self.row(event.key)
        if event.setting is not None:
            row.show(event.setting)
        row.revert()

    # the pane's own toggle (bound by the rows' keys) in place of DOMNode's toggle(attribute)
    def action_toggle(self, key: str) -> None:  # type: ignore[override]
        control = self.row(key).control
        control.toggle()
        control.focus()

    # -- keys -----------------------------------------------------------------------------
    async def action_keys(self) -> None:
        await self._build_the_rest()
        table = self.query_one(BindingList)
        table.focus(scroll_visible=False)
        self.query_one(VerticalScroll).scroll_to_widget(table, top=True, animate=False)

    @on(BindingList.RowSelected, "#keys-table")
    def _remap(self, event: BindingList.RowSelected) -> None:
        info = self.query_one(BindingList).current
        if info is None:
            return
        current = self.keymap.get(info.id) or info.default

        def answered(text: str | None) -> None:
            if text is None:
                return
            keys = text.strip()
            if keys == current:
                return
            self.save_keys(info.id, keys or None)

        self.app.push_screen(AskScreen(
            f"Keys for “{info.description}” ({info.where})",
            placeholder=f"Textual key names, comma-separated; empty: back to {info.default}",
            value=current), answered)

    @work(thread=True, group="settings-save", name="saving keys", exit_on_error=False)
    def save_keys(self, binding_id: str, keys: str | None) -> None:
        with self._write_lock:
            self.engine.keymap_set(binding_id, keys)
            keymap, _problems = self.engine.keymap()
        self.post_message(self.KeymapSaved(keymap, binding_id, keys))

    @on(KeymapSaved)
    def _keymap_saved(self, event: KeymapSaved) -> None:
        self.keymap = event.keymap
        self.app.set_keymap(event.keymap)  # replaces the whole map: a removal applies too
        table = self.query_one(BindingList)
        table.fill(table.bindings_info, self.keymap)
        info = next(i for i in table.bindings_info if i.id == event.binding_id)
        keys = event.keymap.get(event.binding_id, info.default)
        self.notify(f"{info.description}: {keys}" + ("" if event.keys else " (default)"),
                    timeout=4)
        clashes = [i for i in table.bindings_info if i.id != info.id
                   and i.where in (info.where, "everywhere")
                   and set(self.keymap.get(i.id, i.default).split(",")) & set(keys.split(","))]
        for other in clashes:
            self.notify(f"{keys} is also “{other.description}” ({other.where}); remap one "
                        "of them", severity="warning", timeout=8)

    # -- reset and backups ----------------------------------------------------------------
    @on(Button.Pressed, "#reset-button")
    def _reset_pressed(self) -> None:
        self.action_reset()

    def action_reset(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.run_reset()

        self.app.push_screen(TypedConfirmScreen("Reset all memories?", "reset",
                                                detail=RESET_DETAIL), answered)

    @work(thread=True, exclusive=True, group="settings-reset", name="reset",
          exit_on_error=False)
    def run_reset(self) -> None:
        backup = self.engine.reset()
        self.notify(f"All memories cleared. Backup {backup.id} was taken first.", timeout=8)
        self.post_message(SessionsChanged())
        self.post_message(MemoryChanged("reset"))

    async def action_backups(self) -> None:
        await self._build_the_rest()
        table = self.query_one(BackupList)
        target = table if table.display else self.query_one("#backups-empty")
        if table.display:
            table.focus(scroll_visible=False)  # one scroll, not two racing ones
        self.query_one(VerticalScroll).scroll_to_widget(target, top=True, animate=False)

    @on(BackupList.RowSelected, "#backup-list")
    def _restore_asked(self) -> None:
        b = self.query_one(BackupList).current
        if b is None:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_restore(b.id)

        self.app.push_screen(ConfirmScreen(
            f"Restore from backup {b.id}?",
            f"The memory folders and the raw memories become exactly what they were at "
            f"{local_time_with_seconds(b.created_at)}. The current state is backed up first, "
            "so this can be undone.", yes="Restore", danger=True), answered)

    @work(thread=True, exclusive=True, group="settings-reset", name="restore a backup",
          exit_on_error=False)
    def run_restore(self, backup_id: str) -> None:
        safety = self.engine.restore_backup(backup_id)
        self.notify(f"Restored backup {backup_id}. The state it replaced is backup "
                    f"{safety.id}.", timeout=8)
        self.post_message(SessionsChanged())
        self.post_message(MemoryChanged("restore-backup"))
