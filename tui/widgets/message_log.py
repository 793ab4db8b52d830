"""Every message the app showed, to read again after it flashed by (`@`, or "Messages" in
the command palette): its time, its level and its text, oldest first, the newest at the
bottom. Kept for the session (the last 500)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import RichLog, Static

from .key_footer import KeyFooter

KEEP = 500
LEVEL_STYLE = {"error": "bold red", "warning": "bold yellow", "information": "bold"}


@dataclass(frozen=True)
class LoggedMessage:
    at: float
    level: str  # information | warning | error
    text: str


class MessageLog:
    """What `notify` showed, in order."""

    def __init__(self) -> None:
        self.entries: deque[LoggedMessage] = deque(maxlen=KEEP)

    def add(self, level: str, text: str, at: float) -> None:
        """Log `text` shown at `at` (the engine clock's time)."""
        self.entries.append(LoggedMessage(at, level, text))


class MessageLogScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    MessageLogScreen { align: center middle; }
    MessageLogScreen > Vertical { width: 90%; height: 80%; border: round $primary;
                                  background: $surface; padding: 0 1; }
    MessageLogScreen #log-title { text-style: bold; height: 1; }
    MessageLogScreen #log-keys { color: $text-muted; height: 1; }
    MessageLogScreen RichLog { height: 1fr; }
    """
    BINDINGS = [Binding("escape,q,at", "dismiss_log", "Close", id="messages.close")]

    def __init__(self, log: MessageLog) -> None:
        super().__init__()
        self.log_ = log

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Messages ({len(self.log_.entries)})", id="log-title")
            yield RichLog(wrap=True, markup=False, id="log-lines")
            yield Static("esc closes · ↑↓ PgUp PgDn scroll", id="log-keys")
        yield KeyFooter()

    def on_mount(self) -> None:
        view = self.query_one(RichLog)
        if not self.log_.entries:
            view.write(Text("No messages yet.", style="dim"))
        for m in self.log_.entries:
            line = Text(time.strftime("%H:%M:%S ", time.localtime(m.at)), style="dim")
            line.append(f"{m.level:<11} ", style=LEVEL_STYLE.get(m.level, ""))
            line.append(m.text)
            view.write(line)
        view.focus()

    def action_dismiss_log(self) -> None:
        self.dismiss()
