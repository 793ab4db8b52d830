"""Said vs remembered (`m` in Sessions): one session in three columns — what the user and
the agent said, the raw memory extracted from it, the lines of today's memory it fed — each
message and raw line marked kept / reworded / dropped (the engine's `SaidRemembered`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Label, Static

VERDICT_STYLE = {"kept": "bold green", "reworded": "bold yellow", "dropped": "bold red"}
NARROW = 90  # below this many columns, the three columns stack
COLUMNS = (("sr-said", "Said"), ("sr-raw", "Raw memory"), ("sr-fed", "Fed today"))


def _verdict(v: Any) -> Text:
    t = Text()
    t.append(f"{v.verdict or '—'}", style=VERDICT_STYLE.get(v.verdict, "dim"))
    t.append(f" · {v.note}", style="dim")
    return t


def said_text(r: Any) -> Text:
    out = Text()
    if not r.said:
        out.append("Nothing: the session has no messages of the user or the agent.",
                   style="dim")
    for k, m in enumerate(r.said):
        if k:
            out.append("\n\n")
        out.append(f"{m.kind} · item {m.item_index}\n", style="bold" if m.kind == "user"
                   else "bold cyan")
        out.append_text(_verdict(m.verdict))
        out.append("\n" + m.text)
    return out


def raw_text(r: Any) -> Text:
    out = Text()
    if r.raw_note:
        out.append(r.raw_note + "\n", style="yellow")
    if r.raw_memory == "" and r.rollout_summary:
        out.append(f"memory {r.version} keeps no raw memory: its rollout summary\n",
                   style="dim")
    _append_lines(out, r.raw_lines)
    if r.summary_lines:  # v1 keeps both; v2's summary is the raw memory above
        out.append(f"\n\nrollout summary (memory {r.version} keeps it beside the raw "
                   "memory)\n", style="bold")
        _append_lines(out, r.summary_lines)
    return out


def _append_lines(out: Text, lines: Any) -> None:
    """Numbered lines, each with its verdict under it."""
    for line in lines:
        out.append("\n")
        out.append(f"{line.line:>3} ", style="dim")
        if not line.verdict.verdict:  # `---`, a heading: nothing to compare
            out.append(line.text.strip(), style="dim")
            continue
        out.append(line.text.strip())
        out.append("\n    ")
        out.append_text(_verdict(line.verdict))


def fed_text(r: Any) -> Text:
    out = Text()
    if r.fed_note:
        out.append(r.fed_note, style="yellow")
    for k, f in enumerate(r.fed):
        if k or r.fed_note:
            out.append("\n\n")
        out.append(f.location, style="bold")
        out.append(f"\n{f.why}" + ("" if f.counted else " (not counted in the verdicts)"),
                   style="dim")
        out.append("\n" + f.text)
    return out


def head_text(r: Any) -> Text:
    c = r.counts()
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append("Said vs remembered", style="bold")
    t.append(f"  {r.project or '?'} · {r.thread_id or r.rollout_path}", style="dim")
    t.append(f"\n{r.status}: {r.reason}\n")
    for name in ("kept", "reworded", "dropped"):
        t.append(f"{name} {c[name]}", style=VERDICT_STYLE[name])
        t.append("  ")
    t.append(f"compared with {r.verdict_basis}", style="dim")
    return t


class SaidRememberedScreen(Screen[None]):
    """`key`: the session as `Engine.session` takes it (the Sessions pane: its rollout path).
    The data is read in a thread; `esc` closes."""

    DEFAULT_CSS = """
    SaidRememberedScreen { layout: vertical; }
    SaidRememberedScreen #sr-head { height: 3; padding: 0 1; }
    SaidRememberedScreen #sr-columns { height: 1fr; }
    SaidRememberedScreen #sr-columns.narrow { layout: vertical; }
    SaidRememberedScreen .sr-column { width: 1fr; height: 1fr; border: round $panel;
                                      border-title-style: bold; padding: 0 1; }
    SaidRememberedScreen .sr-column:focus-within { border: round $accent; }
    SaidRememberedScreen #sr-hint { height: 1; color: $text-muted; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q", "close", "Close", id="remembered.close")]

    @dataclass
    class Loaded(Message):
        result: Any
        error: str = ""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.result: Any = None

    def compose(self) -> ComposeResult:
        yield Static("Said vs remembered: reading the session…", id="sr-head")
        with Horizontal(id="sr-columns"):
            for cid, title in COLUMNS:
                with VerticalScroll(id=cid, classes="sr-column") as col:
                    col.border_title = title
                    yield Static("", id=f"{cid}-text")
        yield Label("esc close · tab next column · ↑↓ scroll · kept / reworded / dropped: "
                    "how many of its keywords today's memory holds", id="sr-hint")

    def on_mount(self) -> None:
        self._fit(self.size.width)
        for col in self.query(".sr-column"):
            col.loading = True
        self.query_one("#sr-said").focus()
        self.load()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        self.query_one("#sr-columns").set_class(0 < width < NARROW, "narrow")

    @work(thread=True, exclusive=True, group="said-remembered", name="said vs remembered",
          exit_on_error=False)
    def load(self) -> None:
        from memdeck.engine import MemdeckError

        engine = self.app.engine  # type: ignore[attr-defined]
        try:
            self.post_message(self.Loaded(engine.said_remembered(self.key, refresh=False)))
        except MemdeckError as e:
            self.post_message(self.Loaded(None, str(e)))

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        for col in self.query(".sr-column"):
            col.loading = False
        head = self.query_one("#sr-head", Static)
        if event.result is None:
            head.update(Text(f"Said vs remembered: {event.error}", style="bold red"))
            return
        r = self.result = event.result
        head.update(head_text(r))
        self.query_one("#sr-said-text", Static).update(said_text(r))
        self.query_one("#sr-raw-text", Static).update(raw_text(r))
        self.query_one("#sr-fed-text", Static).update(fed_text(r))

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["SaidRememberedScreen"]
