"""One session's transcript: roles styled, tool calls and outputs collapsed, code and diffs
highlighted by pygments (through Rich), harness context dimmed."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Button, Collapsible, Static

from memdeck.engine import local_time, strip_citations

from ..render import STATUS_STYLE, heading, one_line, tool_call_code

BATCH = 150  # entries mounted at a time; more on request
THEME = "ansi_dark"


def _tool_body(entry: Any) -> RenderableType:
    code, lexer = tool_call_code(entry)
    return Syntax(code, lexer, theme=THEME, word_wrap=True)


def _tool_summary(entry: Any) -> str:
    body = _tool_body(entry)
    first = body.code.strip().splitlines()[0] if isinstance(body, Syntax) and body.code.strip() \
        else ""
    return f"{entry.title}  {first[:90]}"


def _output_body(text: str) -> RenderableType:
    head = text.lstrip()[:200]
    lexer = "diff" if head.startswith(("diff --git", "--- ", "@@ ")) else "text"
    return Syntax(text, lexer, theme=THEME, word_wrap=True)


def _citation(entry: Any) -> Text:
    c = entry.citation
    t = Text("cites memory: ", style="bold cyan")
    t.append(", ".join(f"{e.path}:{e.line_start}-{e.line_end}" for e in c.entries) or "nothing",
             style="cyan")
    if c.rollout_ids:
        t.append(f"  · from {len(c.rollout_ids)} session(s)", style="cyan")
    return t


def _label(entry: Any) -> Text:
    style, label, title = heading(entry)  # "assistant · commentary": the phase is what is new
    t = Text(f" {label} ", style=f"{style} reverse" if entry.kind in ("user", "assistant")
             else style)
    if title:
        t.append(f" {title}", style="dim")
    if entry.timestamp:
        t.append(f"  {entry.timestamp[11:19]}", style="dim")
    t.append(f"  line {entry.line_no}", style="dim")
    return t


def entry_widget(entry: Any) -> Static | Collapsible:
    kind = entry.kind
    if kind == "tool_call":
        return Collapsible(Static(_tool_body(entry)), title="⚙ " + _tool_summary(entry),
                           collapsed=True, classes="turn tool")
    if kind == "tool_output":
        n = len(entry.text.splitlines())
        code = entry.extra.get("exit_code")
        bits = ["↳ output"]
        if code is not None:
            bits.append(f"exit code {code}")
        elif entry.title != "output":  # "still running"
            bits.append(entry.title)
        bits.append(f"{n} line{'s' if n != 1 else ''}")
        return Collapsible(Static(_output_body(entry.text)), title=" · ".join(bits),
                           collapsed=True, classes="turn tool-output")
    if kind == "reasoning":
        return Collapsible(Static(Text(entry.text)), title="reasoning", collapsed=True,
                           classes="turn reasoning")
    if kind == "marker":  # [image], context compacted here
        return Static(Text(f"── {entry.text} ──  line {entry.line_no}", style="dim"),
                      classes="turn marker")
    collapsed_line = one_line(entry)
    if collapsed_line is not None:  # the base instructions
        return Collapsible(Static(Text(entry.text)), title=collapsed_line, collapsed=True,
                           classes="turn context")
    if kind in ("context", "developer"):
        first = entry.text.strip().splitlines()[0][:80] if entry.text.strip() else ""
        return Collapsible(Static(Text(entry.text)), title=f"{entry.title}: {first}",
                           collapsed=True, classes="turn context")
    if kind == "assistant":
        text, _ = strip_citations(entry.text)
        parts: list[RenderableType] = [_label(entry), Markdown(text, code_theme=THEME)]
        if entry.citation is not None:
            parts.append(_citation(entry))
        return Static(Group(*parts), classes="turn assistant")
    if kind == "user":
        return Static(Group(_label(entry), Text(entry.text)), classes="turn user")
    return Static(Group(_label(entry), Text(entry.text, style="dim")), classes="turn other")


def header(detail: Any) -> Text:
    s = detail.session
    t = Text(overflow="fold")
    t.append(f"{s.project}", style="bold")
    t.append(" · ", style="dim")
    t.append(f"{s.id or 'no id'}\n", style="dim")
    t.append(f"{s.status}", style=STATUS_STYLE.get(s.status, ""))
    t.append(f": {s.reason}\n")
    started = local_time(s.started_ts)
    source = s.source_label  # Codex's own word beside it when it is a word, never its JSON
    if s.source and s.source.lower() != source.lower() and not s.source.startswith("{"):
        source += f" ({s.source})"
    bits = [f"started {started}", f"source {source}", f"memory {s.memory_mode}"]
    if s.model:
        bits.append(f"model {s.model}")
    if s.git_branch:
        bits.append(f"branch {s.git_branch}")
    t.append("  ·  ".join(bits), style="dim")
    # the whole path, wrapped where it must be, so it can be read and copied
    t.append("\n")
    t.append(f"rollout {s.rollout_path}", style="dim")
    if detail.problems:
        t.append(f"\n{len(detail.problems)} unreadable line(s): ", style="red")
        t.append("; ".join(f"line {p['line']}: {p['message']}" for p in detail.problems[:3]),
                 style="red")
    return t


class TranscriptView(VerticalScroll):
    """Shows one `SessionDetail`. Long transcripts are mounted a batch at a time.

    Tool calls, outputs and harness context are collapsed items: `Tab` moves between them and
    `Enter` opens or closes the one that has focus; the footer and `?` say so."""

    BINDINGS = [
        Binding("tab", "next_item", "Next item", id="transcript.next"),
        Binding("shift+tab", "previous_item", "Previous item", show=False,
                id="transcript.previous"),
        # priority: shown in the footer even while a collapsed item's own title has focus
        Binding("enter", "toggle_item", "Open item", priority=True,
                id="transcript.toggle"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.detail: Any = None
        self._shown = 0

    def compose(self) -> ComposeResult:
        yield Static(id="transcript-header")

    def show(self, detail: Any) -> None:
        self.detail = detail
        self._shown = 0
        self.query(".turn, #transcript-more").remove()
        self.query_one("#transcript-header", Static).update(header(detail))
        if not detail.entries:
            self.mount(Static("This session has no messages.", classes="turn other"))
        self._more()
        self.scroll_home(animate=False)

    def refresh_session(self, session: Any) -> None:
        """The listing was recomputed: the header shows the session's status as it is now
        (the entries, read from the rollout, stay)."""
        from dataclasses import replace

        if self.detail is not None and self.detail.session.rollout_path == session.rollout_path:
            self.detail = replace(self.detail, session=session)
            self.query_one("#transcript-header", Static).update(header(self.detail))

    def _more(self) -> None:
        entries = self.detail.entries[self._shown:self._shown + BATCH]
        self._shown += len(entries)
        widgets: list[Any] = [entry_widget(e) for e in entries]
        left = len(self.detail.entries) - self._shown
        if left > 0:
            widgets.append(Button(f"Show {min(left, BATCH)} more of {left} remaining entries",
                                  id="transcript-more"))
        self.mount_all(widgets)

    def _items(self) -> list[Collapsible]:
        return list(self.query(Collapsible).filter(".turn"))

    def _focused_item(self) -> Collapsible | None:
        node = self.screen.focused
        while node is not None and node is not self:
            if isinstance(node, Collapsible):
                return node
            node = node.parent  # type: ignore[assignment]
        return None

    def _focus_item(self, step: int) -> None:
        items = self._items()
        if not items:
            return
        current = self._focused_item()
        i = items.index(current) + step if current in items else (0 if step > 0 else -1)
        target = items[i % len(items)]
        target.query("CollapsibleTitle").first().focus()  # the item's focusable title
        target.scroll_visible(animate=False)

    def action_next_item(self) -> None:
        self._focus_item(1)

    def action_previous_item(self) -> None:
        self._focus_item(-1)

    def action_toggle_item(self) -> None:
        """Enter: open or close the focused item; with none focused, the first one."""
        more = self.screen.focused
        if isinstance(more, Button) and more.id == "transcript-more":
            more.press()
            return
        item = self._focused_item()
        if item is None:
            self._focus_item(1)
            item = self._focused_item()
        if item is not None:
            item.collapsed = not item.collapsed

    @on(Button.Pressed, "#transcript-more")
    def _pressed(self, event: Button.Pressed) -> None:
        event.button.remove()
        self._more()
