"""Rich renderings for the command line: the sessions table and one session's transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from memdeck.engine import ago, short_id_length

STATUS_STYLE = {
    "extracted": "bold green",
    "pruned": "dim green",
    "no_output": "grey74",  # done, nothing kept: neither success green nor a warning
    "failed": "bold red",
    "running": "bold cyan",
    "eligible": "bold yellow",
    "too_recent": "yellow",
    "too_old_to_keep": "dim yellow",
    "too_old": "dim",
    "disabled": "bold blue",  # the user's own choice, never an error's red
    "polluted": "#d787d7",  # orchid: a named ANSI magenta renders close to red
    "not_interactive": "dim",
    "archived": "dim",
    "empty": "dim",
    "unreadable": "red",
}


def sessions_table(sessions: list[Any], now: float, title: str | None = None) -> Table:
    table = Table(title=title, expand=True, header_style="bold", pad_edge=False,
                  title_justify="left")
    table.add_column("updated", no_wrap=True, width=10)
    table.add_column("project", no_wrap=True, max_width=14, overflow="ellipsis")
    id_width = short_id_length(s.id for s in sessions)  # unique among the listed sessions
    table.add_column("id", no_wrap=True, width=id_width)
    table.add_column("status", no_wrap=True, width=15)
    table.add_column("reason", ratio=3, overflow="fold")
    table.add_column("preview", ratio=2, no_wrap=True, overflow="ellipsis")
    for s in sessions:
        table.add_row(
            ago(s.updated_at, now),
            escape(s.project),
            (s.id or "—")[:id_width],
            Text(s.status, style=STATUS_STYLE.get(s.status, "")),
            escape(s.reason),
            escape(s.preview or "—"),
        )
    return table


def status_counts(sessions: list[Any]) -> Text:
    counts: dict[str, int] = {}
    for s in sessions:
        counts[s.status] = counts.get(s.status, 0) + 1
    t = Text()
    for i, (k, n) in enumerate(sorted(counts.items(), key=lambda kv: -kv[1])):
        if i:
            t.append("  ")
        t.append(f"{n} ", style="bold")
        t.append(k, style=STATUS_STYLE.get(k, ""))
    return t


def print_sessions(sessions: list[Any], now: float, home: Path,
                   console: Console | None = None) -> None:
    console = console or Console()
    if not sessions:
        console.print(f"No sessions in {home} (sessions/ and archived_sessions/ are empty).")
        return
    console.print(sessions_table(sessions, now, title=f"{len(sessions)} sessions in {home}"))
    console.print(status_counts(sessions))


ROLE_STYLE = {
    "user": ("bold blue", "user"),
    "assistant": ("bold green", "assistant"),
    "tool_call": ("bold yellow", "tool"),
    "tool_output": ("yellow", "output"),
    "context": ("dim", "context"),
    "developer": ("dim", "developer"),
    "reasoning": ("dim italic", "reasoning"),
    "meta": ("magenta", "meta"),
    "agent": ("cyan", "agent"),
    "event": ("dim", "event"),
    "marker": ("dim", "marker"),
}


def heading(entry: Any) -> tuple[str, str, str]:
    """(style, role label, what the title adds): "assistant · commentary" adds "commentary",
    a title equal to the label adds nothing, so no role is printed twice."""
    style, label = ROLE_STYLE.get(entry.kind, ("", entry.kind))
    title = entry.title
    if title.startswith(label + " · "):
        title = title[len(label) + 3:]
    return style, label, "" if title in (label, entry.kind) else title


def one_line(entry: Any) -> str | None:
    """The line that stands for an entry shown collapsed to one line, else None: the base
    instructions, an image, a compaction (docs/codex-format.md "Transcript markers")."""
    from memdeck.engine import BASE_INSTRUCTIONS  # the transcript reader: not at start-up

    if entry.kind == "developer" and entry.title == BASE_INSTRUCTIONS:
        n = len(entry.text.splitlines())
        return f"{BASE_INSTRUCTIONS} ({n} line{'s' if n != 1 else ''})"
    if entry.kind == "marker":
        return str(entry.text)
    return None


def tool_call_code(entry: Any) -> tuple[str, str]:
    """(code, lexer) of a tool call: a patch as a diff, a code-mode `exec` script as
    JavaScript, a shell command as the command line (an `apply_patch` argv as its patch), other
    arguments as indented JSON."""
    text = entry.text
    if entry.extra.get("type") == "custom_tool_call" and entry.title == "exec":
        return text, "javascript"
    if entry.extra.get("type") == "custom_tool_call" or text.lstrip().startswith("*** Begin Patch"):
        return text, "diff"
    try:
        args = json.loads(text)
    except ValueError:
        return text, "text"
    cmd = None
    if isinstance(args, dict):
        cmd = next((args[k] for k in ("command", "cmd", "script") if k in args), None)
    if isinstance(cmd, list) and all(isinstance(c, str) for c in cmd):
        if len(cmd) == 2 and cmd[0] == "apply_patch":
            return cmd[1], "diff"
        cmd = " ".join(cmd[2:] if cmd[:2] in (["bash", "-lc"], ["sh", "-c"]) else cmd)
    if isinstance(cmd, str):
        return cmd, "bash"
    return json.dumps(args, indent=2, ensure_ascii=False), "json"


def _body(entry: Any, max_lines: int) -> Any:
    text = tool_call_code(entry)[0] if entry.kind == "tool_call" else entry.text
    lines = text.splitlines()
    if len(lines) > max_lines:
        text = "\n".join(lines[:max_lines]) + f"\n… {len(lines) - max_lines} more lines"
    if entry.kind == "tool_call":
        from rich.syntax import Syntax  # pygments: loaded once a transcript is shown

        return Syntax(text, tool_call_code(entry)[1], theme="ansi_dark", word_wrap=True)
    return Text(text, style="dim" if entry.dim else "")


def print_session(detail: Any, now: float, console: Console | None = None) -> None:
    console = console or Console()
    s = detail.session
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("id", s.id or "—")
    head.add_row("status", Text(f"{s.status}: {s.reason}", style=STATUS_STYLE.get(s.status, "")))
    head.add_row("cwd", escape(s.cwd or "—"))
    source = s.source_label  # Codex's own word beside it when it is a word, never its JSON
    if s.source and s.source.lower() != source.lower() and not s.source.startswith("{"):
        source += f" ({s.source})"
    head.add_row("source", escape(source))
    head.add_row("updated", ago(s.updated_at, now))
    head.add_row("memory mode", s.memory_mode)
    if detail.problems:
        head.add_row("problems", escape("; ".join(
            f"line {p['line']}: {p['message']}" for p in detail.problems[:5])))
    if detail.pending_bytes:
        head.add_row("pending", f"{detail.pending_bytes} bytes of an unfinished last line")
    console.print(Panel(head, title="session", title_align="left"))
    # whole and on one line that the terminal wraps, so it can be copied
    console.print(Text.assemble(("rollout ", "bold"), str(s.rollout_path)), soft_wrap=True)
    console.print()
    for e in detail.entries:
        style, label, extra = heading(e)
        line = one_line(e)
        if line is not None:
            marker = Text(line if e.kind == "marker" else f"{label} {line}", style="dim")
            marker.append(f"  line {e.line_no}", style="dim")
            console.print(marker)
            console.print()
            continue
        title = Text(f"{label}", style=style)
        if extra:
            title.append(f" {extra}", style="dim")
        title.append(f"  line {e.line_no}", style="dim")
        console.print(title)
        max_lines = 12 if e.kind in ("tool_output", "context", "developer") else 60
        parts: list[Any] = [_body(e, max_lines)]
        if e.citation is not None:
            ids = ", ".join(e.citation.rollout_ids) or "none"
            cites = "\n".join(f"  {c.path}:{c.line_start}-{c.line_end}  {c.note}"
                              for c in e.citation.entries)
            parts.append(Text(f"cites memory:\n{cites}\n  rollouts: {ids}", style="cyan"))
        console.print(Group(*parts))
        console.print()
