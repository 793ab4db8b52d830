"""Keys typed while a pane is being shown, or while the widget it focused still loads, are
held and replayed to the pane that ends up shown (issue 10: "no key is ever lost").

Textual delivers a key to the focused widget; between a pane key (`2`) and the new pane
taking the focus nothing has it, and a loading widget's bindings are skipped, so a `j` typed
then was lost. The app's own keys (1–6, ?, q, c) act at once, so `6` then `5` ends on Review.
Held keys are given up after five seconds."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import events

if TYPE_CHECKING:
    from textual.app import App

GIVE_UP_S = 5.0
RETRY_S = 0.05


class HeldKeys:
    def __init__(self, app: App[None]) -> None:
        self.app = app
        self.switching: str | None = None  # the pane being shown, until it has the focus
        self._keys: list[events.Key] = []
        self._since = 0.0

    def _must_wait(self) -> bool:
        """A key now would be lost: a pane is being shown (nothing has the focus yet) or the
        widget it focused is still loading."""
        app = self.app
        if app.screen is not app.screen_stack[0]:
            return False  # a dialog takes its keys itself
        focused = app.focused
        return self.switching is not None or (focused is not None and focused.loading)

    def hold(self, event: events.Key) -> bool:
        """Keep `event` for later (True), or let it through now (False)."""
        if not self._keys:
            if not self._must_wait():
                return False
            self._since = time.monotonic()
        if event.key in self.app.screen.active_bindings:
            return False
        if not self._keys:
            self.app.set_timer(RETRY_S, self.release)
        self._keys.append(event)
        return True

    def shown(self, pid: str) -> None:
        """The pane `pid` is shown and focused: what was typed meanwhile goes to it."""
        if self.switching == pid:
            self.switching = None
            self.release()

    def release(self) -> None:
        if not self._keys:
            return
        if self._must_wait() and time.monotonic() - self._since < GIVE_UP_S:
            self.app.set_timer(RETRY_S, self.release)  # still loading: try again soon
            return
        held, self._keys = self._keys, []
        for key in held:
            self.app.post_message(events.Key(key.key, key.character))
