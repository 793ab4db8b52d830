"""Ask for an ad-hoc note: remember or forget, and what."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, RadioButton, RadioSet

from ..key_footer import KeyFooter


class NoteScreen(ModalScreen[tuple[str, str] | None]):
    """Returns `(kind, text)` with kind `remember` or `forget`, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="note.cancel")]

    def __init__(self, kind: str = "remember") -> None:
        super().__init__(classes="modal")
        self.kind = kind

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="note"):
            yield Label("Add an ad-hoc note for the next consolidation", id="question")
            with RadioSet(id="note-kind"):
                yield RadioButton("Remember this", value=self.kind == "remember",
                                  id="note-remember")
                yield RadioButton("Forget this", value=self.kind == "forget", id="note-forget")
            # back from the radios the text must not be selected: the next key would replace it
            yield Input(placeholder="e.g. the staging database moved to db-3", id="note-text",
                        select_on_focus=False)
            yield Label("Written to extensions/ad_hoc/notes/ · Enter to add · Escape to "
                        "cancel", id="hint")
        yield KeyFooter()  # its own keys, not the pane's behind it

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @property
    def chosen_kind(self) -> str:
        return "forget" if self.query_one("#note-forget", RadioButton).value else "remember"

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#hint", Label).update("Type what to remember or forget, or "
                                                  "press Escape.")
            return
        self.dismiss((self.chosen_kind, event.value.strip()))

    @on(RadioSet.Changed)
    def _kind_changed(self) -> None:
        self.query_one(Input).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
