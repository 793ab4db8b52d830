"""Every remappable key of the app: binding id, its keys now, what it does, where it works.

The ids come from the classes themselves (the App, every memdeck widget in the DOM and the
dialogs), so a binding a pane adds later shows up here without a list to keep in sync."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.widgets import DataTable

WHERE = {"app": "everywhere", "confirm": "dialogs", "ask": "dialogs", "help": "help screen"}


@dataclass(frozen=True)
class BindingInfo:
    id: str
    default: str  # comma-separated Textual key names, as declared
    description: str
    where: str


def _own_classes(app: App[Any]) -> list[type]:
    """The App's class, then each memdeck widget class in DOM order, then the dialogs."""
    import sys

    from textual.dom import DOMNode

    from ..confirm import AskScreen, ConfirmScreen, TypedConfirmScreen
    from ..help import HelpScreen

    seen: list[type] = [type(app)]
    for node in app.query("*"):
        cls = type(node)
        if cls.__module__.startswith("memdeck.tui.") and cls not in seen:
            seen.append(cls)
    # panes not shown yet are not in the DOM (they are built on first view): import every
    # pane and widget module, so the list is the same whatever has been opened so far
    import importlib
    import pkgutil

    from ... import panes, widgets

    for pkg in (panes, widgets):
        for info in pkgutil.walk_packages(pkg.__path__, f"{pkg.__name__}."):
            importlib.import_module(info.name)
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("memdeck.tui.") or module is None:
            continue
        for obj in vars(module).values():
            if (isinstance(obj, type) and issubclass(obj, DOMNode) and obj.__module__ == name
                    and obj not in seen and obj not in _DIALOGS()):
                seen.append(obj)
    for cls in (ConfirmScreen, TypedConfirmScreen, AskScreen, HelpScreen):
        if cls not in seen:
            seen.append(cls)
    return seen


def _DIALOGS() -> tuple[type, ...]:  # noqa: N802 - a constant that must import late
    from ..confirm import AskScreen, ConfirmScreen, TypedConfirmScreen
    from ..help import HelpScreen

    return (ConfirmScreen, TypedConfirmScreen, AskScreen, HelpScreen)


def _class_bindings(cls: type) -> dict[str, list[Binding]]:
    """Binding id → its bindings (one per key) for one class; a subclass's declaration of an
    id replaces its parent's, as in Textual."""
    out: dict[str, list[Binding]] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("memdeck.tui."):
            continue  # Textual's own widgets' keys are not memdeck's to remap
        declared: dict[str, list[Binding]] = {}
        for b in Binding.make_bindings(klass.__dict__.get("BINDINGS", [])):
            if b.id:
                declared.setdefault(b.id, []).append(b)
        out.update(declared)
    return out


def collect_bindings(app: App[Any]) -> list[BindingInfo]:
    found: dict[str, list[Binding]] = {}
    for cls in _own_classes(app):
        for bid, bindings in _class_bindings(cls).items():
            found.setdefault(bid, bindings)
    out = []
    for bid, bindings in found.items():
        prefix = bid.split(".", 1)[0]
        keys = ",".join(dict.fromkeys(b.key for b in bindings))
        out.append(BindingInfo(bid, keys, bindings[0].description or bindings[0].action,
                               WHERE.get(prefix, f"{prefix} pane")))
    return out


class BindingList(DataTable[Any]):
    """The bindings with the keys in effect; Enter on one asks the pane to remap it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.bindings_info: list[BindingInfo] = []

    def on_mount(self) -> None:
        self.add_column("keys", width=16, key="keys")
        self.add_column("action", width=28, key="action")
        self.add_column("where", width=14, key="where")
        self.add_column("binding id", key="id")

    def fill(self, infos: list[BindingInfo], keymap: dict[str, str]) -> None:
        row = self.cursor_row
        self.bindings_info = infos
        self.clear()
        for info in infos:
            keys = keymap.get(info.id) or info.default
            shown = ", ".join(self.app.get_key_display(Binding(k, "")) for k in keys.split(","))
            cell = Text(shown, style="bold") if info.id in keymap else Text(shown)
            if info.id in keymap:
                cell.append(" *", style="dim")
            self.add_row(cell, info.description, info.where, Text(info.id, style="dim"),
                         key=info.id)
        if infos:
            self.move_cursor(row=min(row, len(infos) - 1))

    @property
    def current(self) -> BindingInfo | None:
        if not self.bindings_info or self.cursor_row < 0:
            return None
        return self.bindings_info[min(self.cursor_row, len(self.bindings_info) - 1)]
