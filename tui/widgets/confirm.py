"""Modal questions: yes/no, type a word to confirm, and ask for a line of text. Each has its
own footer: while it is open the footer shows its keys (`y`, `n`/`esc`), not the pane's."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from .key_footer import KeyFooter


class ConfirmScreen(ModalScreen[bool]):
    """Yes or no. `y` / Enter on Yes confirms, `n` / Escape cancels."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, detail: str = "", yes: str = "Yes",
                 danger: bool = False) -> None:
        super().__init__(classes="modal")
        self.question = question
        self.detail = detail
        self.yes = yes
        self.danger = danger

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            if self.detail:
                yield Static(self.detail, id="detail", markup=False)
            with Horizontal(id="buttons"):
                yield Button(self.yes, id="yes", variant="error" if self.danger else "primary")
                yield Button("Cancel", id="no")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#no" if self.danger else "#yes", Button).focus()

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class TypedConfirmScreen(ModalScreen[bool]):
    """Confirm something drastic by typing a word (e.g. `reset`); Escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="confirm.cancel")]

    def __init__(self, question: str, word: str, detail: str = "") -> None:
        super().__init__(classes="modal")
        self.question = question
        self.word = word
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            if self.detail:
                yield Static(self.detail, id="detail", markup=False)
            yield Label(f"Type {self.word} and press Enter to go on, Escape to cancel.",
                        id="hint")
            yield Input(placeholder=self.word, id="word",
                        compact=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if event.value.strip() == self.word:
            self.dismiss(True)
        else:
            self.query_one("#hint", Label).update(
                f"That is not {self.word}. Type {self.word} exactly, or press Escape.")
            event.input.value = ""

    def action_cancel(self) -> None:
        self.dismiss(False)


class AskScreen(ModalScreen[str | None]):
    """Ask for one line of text; Enter gives it (maybe empty), Escape gives None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ask.cancel")]

    def __init__(self, question: str, placeholder: str = "", value: str = "") -> None:
        super().__init__(classes="modal")
        self.question = question
        self.placeholder = placeholder
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            yield Input(self.value, placeholder=self.placeholder, id="answer")
            yield Label("Enter to go on · Escape to cancel", id="hint")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
