"""The footer: `? Help`, `q Quit` and the way back first, so a narrow terminal keeps them.

One widget drawing one line, not Textual's `Footer`: that one builds a widget per key and
rebuilds them all whenever the bindings change (every focus change, every pane switch), and
on the 2-core machine we develop on that rebuild was most of a pane switch (bench/tui.py: p95
155 ms with it, 79 ms without). Here a change of bindings only redraws the line.

The focused widget's keys come first and the app's last, as in Textual's footer; the palette
key sits at the right edge. A key that does not fit whole is not shown, nor any after it:
`?` lists them all. A click on a key presses it."""

from __future__ import annotations

from typing import NamedTuple

from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

# actions whose keys lead the footer, in this order: help, quit, leave the view or the editor
FIRST = ("help", "quit", "back", "leave_edit")


class FooterEntry(NamedTuple):
    key: str  # what a click presses
    display: str  # as the footer writes it: `?`, `q`, `esc`, `^p`
    description: str
    action: str
    enabled: bool


def _rank(entry: FooterEntry) -> int:
    return FIRST.index(entry.action) if entry.action in FIRST else len(FIRST)


class KeyFooter(Widget, can_focus=False):
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        width: 1fr;
        color: $footer-foreground;
        background: $footer-background;
        & > .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .footer-key--palette {
            color: $foreground 20%;
        }
    }
    """
    COMPONENT_CLASSES = {"footer-key--key", "footer-key--description", "footer-key--palette"}

    def __init__(self) -> None:
        super().__init__()
        self._spans: list[tuple[int, int, str]] = []  # (start, end, key) as last drawn
        self._drawn: list[FooterEntry] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if self.is_attached and screen is self.screen:
            self.refresh()

    def entries(self) -> tuple[list[FooterEntry], FooterEntry | None]:
        """The keys to show, in order, and the palette's key."""
        seen: set[str] = set()
        keys: list[FooterEntry] = []
        palette: FooterEntry | None = None
        for _node, binding, enabled, _tooltip in self.screen.active_bindings.values():
            entry = FooterEntry(binding.key, self.app.get_key_display(binding),
                                binding.description, binding.action, enabled)
            if binding.key == self.app.COMMAND_PALETTE_BINDING and \
                    self.app.ENABLE_COMMAND_PALETTE:
                palette = entry
            elif binding.show and binding.action not in seen:  # an action's first key only
                seen.add(binding.action)
                keys.append(entry)
        return sorted(keys, key=_rank), palette  # stable: the rest keep their order

    def render(self) -> Text:
        key_style = self.get_component_rich_style("footer-key--key")
        text_style = self.get_component_rich_style("footer-key--description")
        width = self.size.width
        keys, palette = self.entries()
        tail = Text()
        if palette is not None:
            tail.append("▏", style=self.get_component_rich_style("footer-key--palette"))
            tail.append(f" {palette.display} ", style=key_style)
            tail.append(f"{palette.description} ", style=text_style)
        room = width - tail.cell_len
        line = Text(no_wrap=True, overflow="crop")
        self._spans, self._drawn = [], []
        for entry in keys:
            part = Text.assemble((f" {entry.display} ", key_style),
                                 (f"{entry.description} ", text_style))
            if not entry.enabled:
                part.stylize("dim")
            if line.cell_len + part.cell_len > room:
                break  # not whole: neither it nor what follows (`?` lists them all)
            self._spans.append((line.cell_len, line.cell_len + part.cell_len, entry.key))
            self._drawn.append(entry)
            line.append_text(part)
        if palette is not None and width >= tail.cell_len:
            line.append(" " * (room - line.cell_len))
            start = line.cell_len
            line.append_text(tail)
            self._spans.append((start, start + tail.cell_len, palette.key))
        return line

    def shown(self) -> list[str]:
        """The keys drawn whole, as a user reads them: `? Help`, `q Quit`, … (not the
        palette's key)."""
        self.render()
        return [f"{e.display} {e.description}" for e in self._drawn]

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self._spans:
            if start <= event.x < end:
                self.app.simulate_key(key)
                return
