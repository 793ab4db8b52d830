"""What every pane shares: the engine, loading its data the first time it is shown, reloading
when something it shows changed, and turning a failed worker into one notification."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.worker import Worker, WorkerState

from ..messages import WorkFailed

if TYPE_CHECKING:
    from memdeck.engine import Engine


class Pane(Vertical):
    """A pane. Subclasses implement `reload()` (start a worker) and may set `TITLE`."""

    TITLE = ""
    loaded = False
    stale = True

    @property
    def engine(self) -> Engine:
        return self.app.engine  # type: ignore[attr-defined]

    def reload(self) -> None:
        """Start loading what the pane shows (in a worker)."""

    def activate(self) -> None:
        """The pane became visible: load it if it never was or if what it shows changed."""
        if self.stale:
            self.stale = False
            self.loaded = True
            self.reload()

    def mark_stale(self) -> None:
        self.stale = True
        if self.is_on_screen_pane():
            self.activate()

    def is_on_screen_pane(self) -> bool:
        return f"{getattr(self.app, 'active_pane', None)}-pane" == self.id

    def focus_lost(self) -> bool:
        """This pane is on screen but the focus is nowhere, or on the tab strip: the widget
        that should have it was hidden or still loading when the pane was shown. A pane's
        load handler then puts the focus back (at once, not deferred: a late focus would pull
        its tab back into view after the user moved on)."""
        focused = self.app.focused
        return self.is_on_screen_pane() and (
            focused is None or type(focused).__name__ == "ContentTabs")

    def focus_default(self) -> None:
        """Put focus where the user starts in this pane."""
        for w in self.query("*"):
            if w.focusable and w.display and w.visible:
                w.focus()
                return

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            event.stop()
            self.post_message(WorkFailed(event.worker.name or "memdeck", event.worker.error))
