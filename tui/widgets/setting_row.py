"""One setting on a line: its name, a control that fits its type, the allowed range, whether
the value comes from the file or is the default, and a short line saying what it does.

The row never writes anything: it posts `SettingRow.Edited` with the text to store (None:
remove the key, back to the default) and the pane's worker writes it. `show()` puts the stored
value back, so a refused value never stays on screen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
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

    def _control(self) -> Switch | Select[str] | Input:
        if self.spec.kind == "bool":
            return Switch(classes="setting-control")
        if self.spec.kind == "enum":
            return Select([(c, c) for c in self.spec.choices], allow_blank=False,
                          compact=True, classes="setting-control")
        if self.secret:
            return Input(password=True, compact=True, classes="setting-control")
        # integers: only digits can be typed; no validator, so an empty field (the default)
        # is not painted as an error; the range is checked by the engine when saved
        return Input(compact=True, classes="setting-control",
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
        elif not control.has_focus or control.value == self.shown_text:
            control.value = stored_text(setting.value) if setting.is_set else ""
        if setting.note:  # a derived value (the memory version) says why it is what it is
            self.query_one(".setting-help", Label).update(
                f"memories/ (v1) or memories_v2/ (v2). Now {setting.value}: {setting.note}")
        elif setting.adjusted:  # the file holds another value (3650, clamped to 90): say so
            self.query_one(".setting-help", Label).update(f"{setting.adjusted}. {self.help}")
        else:
            self.query_one(".setting-help", Label).update(self.help)
        source = self.query_one(".setting-source", Label)
        source.update("set" if setting.is_set else "default")
        source.set_class(setting.is_set, "-set")

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
        self.query_one(".setting-range", Label).update("on" if on else "off")

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

    @on(Input.Blurred)
    def _blurred(self, event: Input.Blurred) -> None:
        event.stop()
        if not self.secret:  # a half-typed key is not saved by tabbing away
            self._commit(event.value, submitted=False)

    def _commit(self, value: str, submitted: bool) -> None:
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
