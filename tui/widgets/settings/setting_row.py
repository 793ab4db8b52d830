"""One setting on a line: its name, a control that fits its type, the allowed range, whether
the value comes from the file or is the default, and a short line saying what it does.

The row never writes anything: it posts `SettingRow.Edited` with the text to store (None:
remove the key, back to the default) and the pane's worker writes it. `show()` puts the stored
value back, so a refused value never stays on screen.

A text or number field is a `SettingInput`: focused, it takes no keys (1–6 still switch panes,
the pane's keys still work); Enter starts editing, then Enter saves and Esc (or leaving the
field with Tab or a click elsewhere) puts the stored value back. Only Enter writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Label, Select, Switch

from memdeck.engine import KeySpec, SettingValue


def range_text(spec: KeySpec) -> str:
    if spec.kind == "int":
        return f"{spec.lo}–{spec.hi}"
    if spec.kind == "str":
        return "text"
    return ""


def stored_text(value: Any) -> str:
    """A stored value as the text the control shows (and `config_set` parses)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# the Input's own keys that change the text: they work only while editing
_EDIT_ACTIONS = {b.action.split("(")[0] for b in Input.BINDINGS if isinstance(b, Binding)
                 and not b.action.startswith(("cursor_", "home", "end", "select_all", "copy"))}


class SettingInput(Input):
    """A field that is entered with Enter and left with Enter (save) or Esc (the stored value
    comes back). While not editing it lets every printable key through to the pane and app."""

    BINDINGS = [
        Binding("enter", "begin_edit", "Edit value"),
        Binding("enter", "submit", "Save to file"),
        Binding("escape", "cancel_edit", "Cancel (keep stored)"),
    ]
    DEFAULT_CSS = """
    SettingInput.-editing { background: $warning 25%; text-style: bold; }
    """

    editing = False

    @dataclass
    class Cancelled(Message):
        """The user left the field without Enter: the row puts the stored value back."""

        field: SettingInput
        tabbed: bool  # left by Tab or a click, not by Esc

    def set_editing(self, on: bool) -> None:
        self.editing = on
        self.set_class(on, "-editing")
        self.refresh_bindings()

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return self.editing and super().check_consume_key(key, character)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "begin_edit":
            return not self.editing
        if action in ("submit", "cancel_edit") or action in _EDIT_ACTIONS:
            return self.editing
        return True

    def action_begin_edit(self) -> None:
        self.set_editing(True)
        self.action_end()

    async def action_submit(self) -> None:
        self.set_editing(False)
        await super().action_submit()

    def action_cancel_edit(self) -> None:
        self.set_editing(False)
        self.post_message(self.Cancelled(self, tabbed=False))

    async def _on_key(self, event: events.Key) -> None:
        if not self.editing and event.is_printable:
            event.prevent_default()  # not Input's: the key bubbles on to the pane's bindings

    async def _on_click(self, event: events.Click) -> None:
        if not self.editing:
            self.set_editing(True)

    def _on_paste(self, event: events.Paste) -> None:
        if not self.editing:
            self.set_editing(True)  # pasting is editing

    def _on_blur(self, event: events.Blur) -> None:
        if self.editing:
            self.set_editing(False)
            self.post_message(self.Cancelled(self, tabbed=True))


class SettingRow(Horizontal):
    """A setting. `kind` comes from its KeySpec; `secret` hides the value (the API key)."""

    DEFAULT_CSS = """
    SettingRow { height: auto; }
    SettingRow > .setting-label { width: 36; }
    SettingRow > .setting-control { width: 20; }
    SettingRow > Switch.setting-control { width: 8; margin-right: 12; }
    SettingRow > .setting-range { width: 10; padding-left: 1; }
    SettingRow > .setting-source { width: 8; }
    SettingRow > .setting-help { width: 1fr; }
    """

    @dataclass
    class Edited(Message):
        """The user changed a value: store `text` (None: remove the key)."""

        row: SettingRow
        text: str | None

        @property
        def key(self) -> str:
            return self.row.key

    def __init__(self, key: str, spec: KeySpec, *, label: str | None = None,
                 help: str | None = None, secret: bool = False) -> None:
        super().__init__(id="setting-" + key.replace(".", "-"), classes="setting-row")
        self.key = key
        self.spec = spec
        self.label = label or key.split(".", 1)[-1]
        self.help = help if help is not None else spec.help
        self.secret = secret
        self.current: SettingValue | None = None

    def compose(self) -> ComposeResult:
        yield Label(self.label, classes="setting-label", markup=False)
        yield self._control()
        yield Label(range_text(self.spec), classes="setting-range", markup=False)
        yield Label("", classes="setting-source")
        yield Label(self.help, classes="setting-help", markup=False)

    def _control(self) -> Switch | Select[str] | SettingInput:
        if self.spec.kind == "bool":
            return Switch(classes="setting-control")
        if self.spec.kind == "enum":
            return Select([(c, c) for c in self.spec.choices], allow_blank=False,
                          compact=True, classes="setting-control")
        if self.secret:
            return SettingInput(password=True, compact=True, classes="setting-control")
        # integers: only digits can be typed; no validator, so an empty field (the default)
        # is not painted as an error; the range is checked by the engine when saved
        return SettingInput(compact=True, classes="setting-control",
                     restrict=r"-?[0-9]*" if self.spec.kind == "int" else None,
                     placeholder="default" if self.spec.default is None
                     else f"default {stored_text(self.spec.default)}")

    @property
    def control(self) -> Any:
        return self.query_one(".setting-control")

    # -- showing the stored value ----------------------------------------------------------
    def show(self, setting: SettingValue) -> None:
        """Show what is stored now (also after a refused edit)."""
        self.current = setting
        control = self.control
        if isinstance(control, Switch):
            with control.prevent(Switch.Changed):
                control.value = bool(setting.value)
            self._show_state(bool(setting.value))
        elif isinstance(control, Select):
            with control.prevent(Select.Changed):
                control.value = stored_text(setting.value)
        elif self.secret:  # the key itself never reaches the screen
            control.value = ""
            control.placeholder = ("set (hidden): type a new key, Enter saves; "
                                   "empty Enter removes it") if setting.is_set \
                else "not set (OPENAI_API_KEY is used); type a key, Enter"
        elif not control.editing or control.value == self.shown_text:
            control.value = stored_text(setting.value) if setting.is_set else ""
        if setting.note:  # a derived value (the memory version) says why it is what it is
            help_text = f"memories/ (v1) or memories_v2/ (v2). Now {setting.value}: {setting.note}"
        elif setting.adjusted:  # the file holds another value (3650, clamped to 90): say so
            help_text = f"{setting.adjusted}. {self.help}"
        else:
            help_text = self.help
        # only what changed: each update lays the long pane out again
        self._update(".setting-help", help_text)
        self._update(".setting-source", "set" if setting.is_set else "default")
        self.query_one(".setting-source", Label).set_class(setting.is_set, "-set")

    def _update(self, selector: str, text: str) -> None:
        label = self.query_one(selector, Label)
        if str(label.content) != text:
            label.update(text)

    @property
    def shown_text(self) -> str:
        """What the control shows for the stored value (an unset text field is empty)."""
        s = self.current
        if s is None:
            return ""
        return stored_text(s.value) if (s.is_set or self.spec.kind in ("bool", "enum")) else ""

    def revert(self) -> None:
        if self.current is not None:
            control = self.control
            if isinstance(control, Input) and not self.secret:
                control.value = self.shown_text
            else:
                self.show(self.current)

    # -- edits -----------------------------------------------------------------------------
    def _show_state(self, on: bool) -> None:
        self._update(".setting-range", "on" if on else "off")

    @on(Switch.Changed)
    def _switched(self, event: Switch.Changed) -> None:
        event.stop()
        self._show_state(event.value)
        if self.current is not None:
            self.post_message(self.Edited(self, "true" if event.value else "false"))

    @on(Select.Changed)
    def _selected(self, event: Select.Changed) -> None:
        event.stop()
        if self.current is None:
            return  # the Select picking its first option as it mounts is not an edit
        if isinstance(event.value, str) and event.value != self.shown_text:
            self.post_message(self.Edited(self, event.value))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._commit(event.value, submitted=True)

    @on(SettingInput.Cancelled)
    def _cancelled(self, event: SettingInput.Cancelled) -> None:
        """Esc, Tab or a click elsewhere: nothing is written, the stored value comes back."""
        event.stop()
        typed = event.field.value
        self.revert()
        if event.tabbed and typed.strip() != (self.shown_text if not self.secret else ""):
            self.notify(f"{self.key} not saved: Enter saves, Esc cancels", timeout=4)

    def _commit(self, value: str, submitted: bool) -> None:
        """Enter: post the edit (the pane's worker writes it)."""
        text = value.strip()
        if self.current is None:
            return
        if self.secret:
            if text:
                self.post_message(self.Edited(self, text))
            elif submitted and self.current.is_set:
                self.post_message(self.Edited(self, None))
            return
        if text == self.shown_text:
            return
        self.post_message(self.Edited(self, text or None))
