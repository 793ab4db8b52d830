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
SWITCH_GIVE_UP_S = 5.0  # a switch that never finished (the pane failed to build)
RETRY_S = 0.05


class HeldKeys:
    def __init__(self, app: App[None]) -> None:
        self.app = app
        self.switching: str | None = None  # the pane being shown, until it has the focus
        self._keys: list[events.Key] = []
        self._since = 0.0
        self._switch_at = 0.0

    def _must_wait(self) -> bool:
        """A key now would be lost: a pane is being shown (nothing has the focus yet) or the
        widget it focused is still loading."""
        app = self.app
        if app.screen is not app.screen_stack[0]:
            return False  # a dialog takes its keys itself
        focused = app.focused
        if self.switching is not None:
            shown = getattr(app, "active_pane", None) == self.switching and focused is not None \
                and any(getattr(n, "id", None) == f"{self.switching}-pane"
                        for n in focused.ancestors_with_self)
            if shown or time.monotonic() - self._switch_at > SWITCH_GIVE_UP_S:
                self.switching = None  # it is shown (or the key never switched anything)
        return self.switching is not None or (focused is not None and focused.loading)

    def switch_to(self, pid: str) -> None:
        self.switching = pid
        self._switch_at = time.monotonic()

    def hold(self, event: events.Key) -> bool:
        """Keep `event` for later (True), or let it through now (False). The pane keys are
        priority bindings, so a pane key's switch has begun before the next key is looked
        at, even when a terminal hands over `1j` at once."""
        if not self._keys:
            if not self._must_wait():
                return False
            self._since = time.monotonic()
        active = self.app.screen.active_bindings.get(event.key)
        if active is not None and active.node is self.app:
            return False  # the app's own keys act at once; a pane's wait for the pane shown
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

