"""Codex's import of another agent's memory in the Memory pane (docs/codex-format.md
"External-agent memory import"): its section of the file list, where a line under each
project names the folder its memory applies to (scope.json), and the lines under an imported
file's name: why it is read-only, and its scope."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.content import Content
from textual.widgets.option_list import Option

TITLE = "Imported memory"
PREFIX = "extensions/external_agent_import/"
RESOURCES = PREFIX + "resources/"
REASON_LINES = 2  # the read-only reason under the file's name wraps onto at most this many


def scope_text(scope: Any) -> str:
    """`for /home/dev/src/ledger`, or why the scope is unknown."""
    if scope.cwd:
        return f"for {scope.cwd}"
    return f"scope unknown: {scope.problem}"


def _line(text: str, style: str = "") -> Text:
    return Text(text, style=style, no_wrap=True, overflow="ellipsis")


def section(files: Sequence[Any]) -> list[Option]:
    """The section's options after its heading: the extension's own files, then each
    project's scope line (disabled) followed by its files."""
    out: list[Option] = []
    project = None
    for f in files:
        if f.scope is None:
            out.append(Option(_line(f" {f.path.removeprefix(PREFIX)}"), id=f.path))
            continue
        if f.scope.project != project:
            project = f.scope.project
            out.append(Option(_line(f" {scope_text(f.scope)}", "italic"),
                              id=f"project:{project}", disabled=True))
        name = f.path.removeprefix(f"{RESOURCES}{project}/")
        out.append(Option(_line(f"   {name}"), id=f.path))
    return out


def title_lines(f: Any, width: int) -> list[Content]:
    """Under an imported file's name: `read-only: …` wrapped to `width`, and its scope."""
    reason = textwrap.wrap(f"read-only: {f.read_only}", max(12, width),
                           break_on_hyphens=False)
    if len(reason) > REASON_LINES:
        reason = reason[:REASON_LINES]
        reason[-1] = reason[-1][: max(1, width - 1)] + "…"
    lines = [Content.styled(line, "$text-warning") for line in reason]
    if f.scope is not None:
        where = f"applies to {f.scope.cwd} (scope.json)" if f.scope.cwd else \
            scope_text(f.scope)
        lines.append(Content.styled(where, "bold $text-accent"))
    return lines
