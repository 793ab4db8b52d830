"""One session's transcript: roles styled, tool calls and outputs collapsed, code and diffs
highlighted by pygments (through Rich), harness context dimmed."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Static

from memdeck.engine import local_time, strip_citations

from ...render import STATUS_STYLE, heading, one_line, tool_call_code

# Mounting an entry costs milliseconds (styles, layout), and a 3 MB rollout holds over a
# thousand: only a window of entries is mounted. The first screen gets FIRST entries; more are
# mounted CHUNK at a time while an edge of the window is less than AHEAD screens from the view
# (scrolling, Tab). End / G show the last FIRST entries (the ones before them come back as the
# user scrolls up), Home / g the first ones.
FIRST = 24
CHUNK = 20
AHEAD = 2
THEME = "ansi_dark"


def _syntax(code: str, lexer: str) -> RenderableType:
    """Highlighted code. rich.syntax (pygments) and rich.markdown (markdown-it) are imported
    when a transcript is first shown, not while the app starts (45 ms of its first paint)."""
    from rich.syntax import Syntax

    return Syntax(code, lexer, theme=THEME, word_wrap=True)


def _tool_body(entry: Any) -> RenderableType:
    return _syntax(*tool_call_code(entry))


def _tool_summary(entry: Any) -> str:
    code = tool_call_code(entry)[0].strip()
    first = code.splitlines()[0] if code else ""
    return f"{entry.title}  {first[:90]}"


def _output_body(text: str) -> RenderableType:
    head = text.lstrip()[:200]
    lexer = "diff" if head.startswith(("diff --git", "--- ", "@@ ")) else "text"
    return _syntax(text, lexer)


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


def marked(entry: Any, marks: tuple[str, ...], why: str) -> Static:
    """The entry a trace or a citation points at: framed, its matched words highlighted
    (case-insensitive), whatever its kind, so the words are seen without opening anything."""
    body = Text(strip_citations(entry.text)[0] if entry.kind == "assistant" else entry.text)
    if marks:
        body.highlight_words(marks, style="black on yellow", case_sensitive=False)
    head = _label(entry)
    head.append(f"  ◀ {why}" if why else "  ◀", style="bold yellow")
    parts: list[RenderableType] = [head, body]
    if entry.kind == "assistant" and entry.citation is not None:
        parts.append(_citation(entry))
    return Static(Group(*parts), classes=f"turn {entry.kind} -target")


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
        from rich.markdown import Markdown

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
    """Shows one `SessionDetail`. Long transcripts are mounted as they are read: a screenful
    first, more as the view nears either edge of what is mounted.

    Tool calls, outputs and harness context are collapsed items: `Tab` moves between them and
    `Enter` opens or closes the one that has focus; the footer and `?` say so."""

    BINDINGS = [
        Binding("tab", "next_item", "Next item", id="transcript.next"),
        Binding("shift+tab", "previous_item", "Previous item", show=False,
                id="transcript.previous"),
        # priority: shown in the footer even while a collapsed item's own title has focus
        Binding("enter", "toggle_item", "Open item", priority=True,
                id="transcript.toggle"),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.detail: Any = None
        self._target: tuple[int, tuple[str, ...], str] | None = None  # show(at=…)
        self._lo = 0  # the entries mounted: detail.entries[_lo:_shown]
        self._shown = 0
        self._window = 0  # which window pending top-ups belong to
        self._topping_up = False

    def compose(self) -> ComposeResult:
        yield Static(id="transcript-header")
        yield Static(id="transcript-earlier")  # entries before the window, if any
        yield Static(id="transcript-more")  # entries after it, always last

    def show(self, detail: Any, at: int | None = None, marks: tuple[str, ...] = (),
             why: str = "") -> None:
        """Show `detail`; with `at`, the window opens around entry `at`, which is framed with
        `marks` highlighted and `why` beside its heading (a trace, a citation)."""
        self.detail = detail
        self.query_one("#transcript-header", Static).update(header(detail))
        self._target = (at, marks, why) if at is not None and 0 <= at < len(detail.entries) \
            else None
        self._reset(max(0, at - 2) if self._target is not None and at is not None else 0)
        if not detail.entries:
            self.mount(Static("This session has no messages.", classes="turn other"),
                       before="#transcript-more")
        if self._target is None:
            self.scroll_home(animate=False)
        else:
            self.call_after_refresh(self._scroll_to_target)

    def _scroll_to_target(self) -> None:
        target = self.query(".-target").first(Static) if self.query(".-target") else None
        if target is not None:
            self.scroll_to_widget(target, top=True, animate=False)

    def _entry_widget(self, index: int, entry: Any) -> Static | Collapsible:
        t = self._target
        if t is not None and t[0] == index:
            return marked(entry, t[1], t[2])
        return entry_widget(entry)

    def refresh_session(self, session: Any) -> None:
        """The listing was recomputed: the header shows the session's status as it is now
        (the entries, read from the rollout, stay)."""
        from dataclasses import replace

        if self.detail is not None and self.detail.session.rollout_path == session.rollout_path:
            self.detail = replace(self.detail, session=session)
            self.query_one("#transcript-header", Static).update(header(self.detail))

    @property
    def remaining(self) -> int:
        """Entries after the mounted ones."""
        return len(self.detail.entries) - self._shown if self.detail is not None else 0

    def _reset(self, start: int) -> None:
        """Mount a fresh window of FIRST entries from `start`."""
        self._window += 1
        self._topping_up = False
        if self._focused_item() is not None:
            self.focus()  # the item goes: the keys stay with the transcript
        self.query(".turn").remove()
        self._lo = self._shown = start
        self._more(FIRST, top_up=False)
        # the first screen is drawn before more are mounted around it
        self._topping_up = True
        self.call_after_refresh(self.call_after_refresh, self._top_up, self._window)

    def _edges(self) -> Any:
        earlier = self.query_one("#transcript-earlier", Static)
        earlier.display = self._lo > 0
        earlier.update(Text(f"… {self._lo} earlier entries: they appear as you scroll up "
                            "(Home: the first one)", style="dim"))
        more = self.query_one("#transcript-more", Static)
        more.display = self.remaining > 0
        more.update(Text(f"… {self.remaining} more entries: they appear as you scroll "
                         "(End: the last one)", style="dim"))
        return earlier, more

    def _more(self, count: int, top_up: bool = True) -> list[Any]:
        """Mount the next `count` entries below the window."""
        first = self._shown
        entries = self.detail.entries[first:first + count]
        self._shown += len(entries)
        widgets: list[Any] = [self._entry_widget(first + i, e) for i, e in enumerate(entries)]
        _, more = self._edges()
        self.mount_all(widgets, before=more)
        if top_up:
            self._schedule_top_up()
        return widgets

    def _earlier(self, count: int) -> list[Any]:
        """Mount the `count` entries before the window; the view stays on what it showed."""
        lo = max(0, self._lo - count)
        entries = self.detail.entries[lo:self._lo]
        self._lo = lo
        widgets: list[Any] = [self._entry_widget(lo + i, e) for i, e in enumerate(entries)]
        earlier, _ = self._edges()
        was = (self.virtual_size.height, self.scroll_y)
        self.mount_all(widgets, after=earlier)

        def keep_place() -> None:
            grown = self.virtual_size.height - was[0]
            self.scroll_to(y=self.scroll_y + grown, animate=False, immediate=True)
            self._schedule_top_up()

        self.call_after_refresh(keep_place)
        return widgets

    def _schedule_top_up(self) -> None:
        if (self.remaining > 0 or self._lo > 0) and not self._topping_up:
            self._topping_up = True
            self.call_after_refresh(self._top_up, self._window)

    def _top_up(self, window: int) -> None:
        self._topping_up = False
        if window != self._window:
            return
        height = self.size.height
        if not height or not all(n.display for n in (self, *self.ancestors)):
            return  # hidden (another pane, the session list): nothing to read
        if self.remaining > 0 and self.max_scroll_y - self.scroll_y < AHEAD * height:
            self._more(CHUNK)
        elif self._lo > 0 and self.scroll_y < AHEAD * height:
            self._earlier(CHUNK)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._schedule_top_up()

    def action_scroll_end(self) -> None:
        """End / G: the last entry (the window moves there when it is not mounted)."""
        if self.detail is not None and self.remaining > 0:
            self._reset(max(0, len(self.detail.entries) - FIRST))
            self.call_after_refresh(self.scroll_end, animate=False)
            return
        self.scroll_end(animate=False)

    def action_scroll_home(self) -> None:
        if self.detail is not None and self._lo > 0:
            self._reset(0)
        self.scroll_home(animate=False)

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
        current = self._focused_item()
        i = items.index(current) + step if current in items else (0 if step > 0 else -1)
        past_end = i >= len(items) and self.remaining > 0
        past_start = current in items and i < 0 and self._lo > 0
        if past_end or past_start:
            # beyond the window: mount until one more item comes, then focus it
            mount = self._more if past_end else self._earlier
            while (self.remaining > 0 if past_end else self._lo > 0) and not any(
                    isinstance(w, Collapsible) for w in mount(CHUNK)):
                pass
            self.call_after_refresh(self._focus_item, step)
            return
        if not items:
            return
        target = items[i % len(items)]
        target.query("CollapsibleTitle").first().focus()  # the item's focusable title
        target.scroll_visible(animate=False)

    def action_next_item(self) -> None:
        self._focus_item(1)

    def action_previous_item(self) -> None:
        self._focus_item(-1)

    def action_toggle_item(self) -> None:
        """Enter: open or close the focused item; with none focused, the first one."""
        item = self._focused_item()
        if item is None:
            self._focus_item(1)
            item = self._focused_item()
        if item is not None:
            item.collapsed = not item.collapsed
