"""The app's help screen rows and command palette entries, each naming its key as the
footer shows it (after the user's keymap)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand
from textual.binding import Binding

from .pane_registry import PANES, pane_class

if TYPE_CHECKING:
    from .app_host import AppHost


def help_rows(app: AppHost) -> list[tuple[str, str, str]]:
    """(key, what it does, where) for every binding of ours active now."""
    rows: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for key, active in app.screen.active_bindings.items():
        b = active.binding
        if not b.id or not b.description or (b.action, key) in seen:
            continue  # Textual's own scrolling keys are not ours to explain
        seen.add((b.action, key))
        where = "everywhere" if active.node is app else app.pane(app.active_pane).TITLE
        rows.append((app.get_key_display(b), b.description, where))
    rows.append(("↑ ↓ j k", "move in lists and tables", "everywhere"))
    rows.append(("tab ⇧tab", "move the focus to the next / previous area", "everywhere"))
    return rows


def keys_of(app: AppHost, owner: Any, action: str) -> str:
    """The keys bound to `action` on `owner` (a class or the app), after the keymap, as the
    footer shows them: `5`, `ctrl+x`, `?`."""
    keys: list[str] = []
    for b in getattr(owner, "BINDINGS", []):
        if not isinstance(b, Binding) or b.action != action:
            continue
        bound = app._keymap.get(b.id, b.key) if b.id else b.key
        for key in bound.split(","):
            keys.append(app.get_key_display(Binding(key.strip(), "")))
    return ", ".join(dict.fromkeys(keys))


def palette_commands(app: AppHost) -> Iterator[SystemCommand]:
    yield SystemCommand("Messages (@)", "Every message the app showed, with its time and level",
                        app.action_messages)
    for i, (pid, title, _) in enumerate(PANES, 1):
        cls = pane_class(pid)
        go = keys_of(app, app, f"show_pane('{pid}')") or str(i)
        yield SystemCommand(f"Go to {title} ({go})", f"Show the {title} pane (key {go})",
                            lambda pid=pid: app.action_show_pane(pid))
        for name, help_, action in getattr(cls, "COMMANDS", []):
            keys = keys_of(app, cls, action)
            yield SystemCommand(f"{name} ({keys})" if keys else name,
                                f"{help_} · in {title}" + (f", key {keys}" if keys else ""),
                                lambda pid=pid, action=action: app.pane_action(pid, action))
    yield SystemCommand(f"Extract and consolidate ({keys_of(app, app, 'consolidate')})",
                        "Run phase 1 and phase 2 now, then review", app.action_consolidate)
    if app.running:
        yield SystemCommand(f"Cancel the run ({keys_of(app, app, 'cancel_run')})",
                            "Stop extracting after the calls in flight", app.action_cancel_run)
    yield SystemCommand(f"Help ({keys_of(app, app, 'help')})", "The keys of this pane",
                        app.action_help)
