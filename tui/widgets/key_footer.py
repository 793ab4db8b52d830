"""The footer: `? Help`, `q Quit` and the way back first, so a narrow terminal keeps them.

Textual's Footer lists the focused widget's keys first and the app's last, and cuts what does
not fit at the right; at 100 columns that was `? Help` and `q Quit`, and the key cut under the
palette key showed as `esc` or `f For`. Here a key that does not fit whole is not shown: `?`
lists them all."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# actions whose keys lead the footer, in this order: help, quit, leave the view or the editor
FIRST = ("help", "quit", "back", "leave_edit")


def _rank(widget: object) -> int:
    if isinstance(widget, FooterKey) and widget.action in FIRST:
        return FIRST.index(widget.action)
    return len(FIRST)


class KeyFooter(Footer):
    def compose(self) -> ComposeResult:
        yield from sorted(super().compose(), key=_rank)  # stable: the rest keep their order
        self.call_after_refresh(self._fit)

    def on_resize(self, event: events.Resize) -> None:
        if self.query(FooterKey):
            self.call_after_refresh(self.recompose)  # keys hidden at one width may fit now

    def _fit(self) -> None:
        keys = list(self.query(FooterKey))
        palette = next((k for k in keys if k.has_class("-command-palette")), None)
        right = palette.region.x if palette is not None else self.region.right
        if not right:
            return  # not laid out yet (or hidden): hiding now would hide every key
        cut = False
        for key in keys:
            if key is not palette:
                cut = cut or key.region.right > right
                key.display = not cut
