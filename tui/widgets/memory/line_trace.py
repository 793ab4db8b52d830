"""One memory line followed both ways (issue 11): back to the evidence it was built from,
forward to the sessions that relied on it.

The steps are a list, one per link of the chain (`Engine.trace`): the block the line belongs
to, each rollout summary the block lists, its raw memory (the stage-1 row), its session and
the turn the fact came from, and who last changed the line; then the sessions that cited the
line (`Engine.citing_sessions`), and last the file's lines cited in an older version that
it no longer holds ("cited, since removed"). The highlighted step is shown in full on the
right; Enter opens it where it lives (the Memory pane at the summary, the transcript at the
turn with the matched words marked, History); `esc` there comes back here, `esc` here
closes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from memdeck.engine import local_time

from ...messages import ShowSession, one_line
from ..key_footer import KeyFooter

SURE = {"exact": ("exact phrase", "bold green"), "keywords": ("shared keywords", "yellow"),
        "none": ("no match", "red")}


@dataclass(frozen=True)
class Step:
    """One line of the list: what it says, what the right side shows, where Enter goes."""

    label: Text
    detail: Text
    go: tuple[Any, ...] = ()  # ("file", path, line) | ("turn", rollout, at, marks, why)
    #                           | ("pane", pane id)


def _head(title: str, text: str, style: str = "") -> Text:
    """A step's line: `summary  2026-11-30T…md`; a summary's own links are indented (└)."""
    sub = title.startswith("  ")
    t = Text("└ " if sub else "", style="dim", no_wrap=True, overflow="ellipsis")
    t.append(f"{title.strip():<{8 if sub else 9}}", style="bold")
    t.append(text, style=style)
    return t


def trace_steps(trace: Any) -> list[Step]:
    """The chain as steps (pure: tests read it too)."""
    b = trace.block
    where = " › ".join(x for x in (b.group, b.section) if x) or trace.path
    span = b.section_lines or b.group_lines
    block_detail = Text(b.text or trace.text)
    if b.note:
        block_detail.append(f"\n\n{b.note}", style="dim")
    steps = [Step(_head("block", where), block_detail,
                  ("file", trace.path, span[0]) if span else ())]
    if not b.refs:
        steps.append(Step(_head("summary", "none listed", "dim"), Text(
            b.note or "This block names no rollout summary file: nothing leads back to a "
            "session from here.", style="dim")))
    for s in trace.summaries:
        steps += _summary_steps(s)
    c = trace.change
    who = c.origin_label or c.origin or "no history"
    when = local_time(c.time) if c.time else ""
    label = _head("changed", " · ".join(x for x in (who, when, (c.commit or "")[:8]) if x),
                  "bold yellow" if c.person_edited else "")
    detail = Text(c.summary or c.note or "memdeck's history has no record of this line.")
    if c.person_edited:
        detail.append("\n\nA person changed this line (in memdeck or outside it).",
                      style="bold yellow")
    if c.note and c.summary:
        detail.append(f"\n\n{c.note}", style="dim")
    steps.append(Step(label, detail, ("commit", c.commit) if c.commit else ()))
    return steps


def _summary_steps(s: Any) -> list[Step]:
    ref = s.ref
    name = ref.file.rsplit("/", 1)[-1]
    facts = [f"{k}: {v}" for k, v in (("cwd", ref.cwd), ("rollout", ref.rollout_path),
                                      ("updated", ref.updated_at), ("thread", s.thread_id))
             if v]
    if ref.matched_keywords:
        facts.append("matched by keywords: " + ", ".join(ref.matched_keywords))
    steps = [Step(_head("summary", name if s.exists else f"{name} (missing)",
                        "" if s.exists else "red"),
                  Text("\n".join([ref.file, *facts])
                       + ("" if s.exists else "\n\nThis file is no longer in the memory "
                          "folder.")),
                  ("file", ref.file, 1) if s.exists else ())]
    row = s.stage1
    if row is None:
        steps.append(Step(_head("  raw", s.stage1_note or "no row", "dim"),
                          Text(s.stage1_note or "no stage-1 row", style="dim")))
    else:
        used = f"used {row.usage_count}×" if row.usage_count else "never used"
        sel = " · selected for phase 2" if row.selected_for_phase2 else ""
        steps.append(Step(_head("  raw", f"{row.raw_memory_lines} lines · {used}{sel}"),
                          Text(row.raw_memory_head), ("pane", "memories")))
    sess = s.session
    if sess is None:
        steps.append(Step(_head("  session", s.session_note or "not found", "dim"),
                          Text(s.session_note or "The session is not in the index.",
                               style="dim")))
        return steps
    steps.append(Step(_head("  session", f"{sess.project} · {sess.preview[:60]}"),
                      Text(f"{sess.rollout_path}\nstarted {sess.started_at or '?'}\n\n"
                           f"{sess.preview}"), ("turn", sess.rollout_path, None, (), "")))
    t = s.turn
    sure, style = SURE.get(t.confidence, (t.confidence, ""))
    where = t.kind or "turn"
    if t.title and t.title != t.kind:
        where += f" {t.title}"
    if t.item_index is not None:
        where += f" (item {t.item_index})"  # as `memdeck trace` and said vs remembered say
    label = _head("  turn", f"{sure} · {where}" if t.item_index is not None else sure, style)
    excerpt = Text(t.excerpt)
    words = tuple(w for w in ((t.phrase,) if t.phrase else t.matched_words) if w)
    if words:
        excerpt.highlight_words(words, style="black on yellow", case_sensitive=False)
    detail = Text.assemble((f"{t.note}\n\n", "dim"), excerpt)
    go = ("turn", sess.rollout_path, t.item_index, words, sure) \
        if t.item_index is not None else ()
    steps.append(Step(label, detail, go))
    return steps


def used_steps(path: str, line: int, citing: list[Any]) -> list[Step]:
    steps = [Step(_head("used by", f"{len(citing)} session{'s' if len(citing) != 1 else ''}"
                        if citing else "no session cited this line", "bold"),
                  Text("The sessions whose answers cited this line, newest first. Enter "
                       "opens one at its citation." if citing else
                       "No later session cited this line (citations of older versions of "
                       "the file count on the lines that still hold their text)."))]
    for c in citing:
        label = _head("  cited", f"{local_time(c.time)}  {c.project or '?'}  {c.message[:60]}")
        detail = Text.assemble((f"{local_time(c.time)} · {c.project}\n", "bold"), c.message)
        if c.note:
            detail.append(f"\n\nnote: {c.note}", style="cyan")
        steps.append(Step(label, detail, ("turn", c.rollout_path, c.item_index, (),
                                          f"cites {path}:{line}")))
    return steps


def removed_steps(path: str, removed: Sequence[Any]) -> list[Step]:
    """The file's lines cited in an older version that today's file no longer holds: they
    have no line to trace from, so every trace of the file lists them last."""
    if not removed:
        return []
    n = sum(r.count for r in removed)
    steps = [Step(_head("removed", f"{len(removed)} cited range{'s' if len(removed) != 1 else ''}"
                        f" of {path} no longer in it", "bold"),
                  Text(f"Cited, since removed: {n} citation{'s' if n != 1 else ''} of "
                       f"{path} named lines that today's file no longer holds (mapped "
                       "through memdeck's history). Enter opens History."))]
    for r in removed:
        where = f"lines {r.line_start}-{r.line_end}" if r.line_end != r.line_start \
            else f"line {r.line_start}"
        version = f" of {r.commit[:8]}" if r.commit else ""
        first = r.text.splitlines()[0].strip() if r.text else "(past the end of the file)"
        label = _head("  cited", f"{where}{version} · {r.count}× · "
                                 f"{local_time(r.last_cited) if r.last_cited else '?'}  {first}",
                      "dim")
        detail = Text.assemble((f"cited, since removed: {where}{version}\n", "bold"),
                               f"{r.count}× · last {local_time(r.last_cited) or '?'}\n\n",
                               (r.text or "(past the end of the file then)", "italic"))
        steps.append(Step(label, detail, ("commit", r.commit) if r.commit else ()))
    return steps


class LineTraceScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "close", "Back", id="trace.close"),
        Binding("enter", "open_step", "Open", id="trace.open"),
        Binding("j", "move(1)", "Down", show=False),
        Binding("k", "move(-1)", "Up", show=False),
    ]
    DEFAULT_CSS = """
    LineTraceScreen #trace-title { height: auto; padding: 0 1; background: $panel; }
    LineTraceScreen #trace-body { height: 1fr; }
    LineTraceScreen #trace-steps { width: 2fr; height: 1fr; text-wrap: nowrap;
                                   text-overflow: ellipsis; }
    LineTraceScreen #trace-side { width: 3fr; height: 1fr; padding: 0 1;
                                  border-left: solid $panel-lighten-2; }
    """

    @dataclass
    class Loaded(Message):
        trace: Any
        citing: list[Any]
        error: str | None
        removed: Sequence[Any] = ()

    def __init__(self, path: str, line: int, start: str = "trace",
                 highlighted: int | None = None, removed: Sequence[Any] | None = None
                 ) -> None:
        """`removed`: the file's citations since removed, when the caller has them (the
        Memory pane's gutter); else they are read with the trace."""
        super().__init__()
        self.path, self.line, self.start = path, line, start
        self.removed = removed
        self.steps: list[Step] = []
        self._highlighted = highlighted

    def compose(self) -> ComposeResult:
        yield Static(Text(f"{self.path}:{self.line}  tracing…", style="bold"),
                     id="trace-title")
        with Horizontal(id="trace-body"):
            yield OptionList(id="trace-steps")
            with VerticalScroll(id="trace-side"):
                yield Static("", id="trace-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(OptionList).loading = True
        self.load()

    @work(thread=True, exclusive=True, name="tracing the line", exit_on_error=False)
    def load(self) -> None:
        engine = self.app.engine  # type: ignore[attr-defined]
        try:
            trace = engine.trace(self.path, self.line)
            citing = engine.citing_sessions(self.path, self.line)
            removed = self.removed if self.removed is not None else \
                engine.line_usage(self.path).removed
        except Exception as e:  # one line on screen, never a traceback
            self.post_message(self.Loaded(None, [], one_line(e)))
            return
        self.post_message(self.Loaded(trace, citing, None, removed))

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        steps_list = self.query_one(OptionList)
        steps_list.loading = False
        title = self.query_one("#trace-title", Static)
        if event.error is not None:
            title.update(Text(f"{self.path}:{self.line}: {event.error}", style="bold red"))
            return
        t = event.trace
        title.update(Text.assemble((f"{t.path}:{t.line}", "bold"), f" of {t.lines}   ",
                                   (t.text.strip() or "(empty line)", "italic")))
        back = trace_steps(t)
        self.steps = (back + used_steps(t.path, t.line, event.citing)
                      + removed_steps(t.path, event.removed))
        steps_list.add_options(Option(s.label) for s in self.steps)
        first = self._highlighted if self._highlighted is not None else (
            len(back) if self.start == "used" else 0)
        steps_list.highlighted = min(first, len(self.steps) - 1)
        steps_list.focus()

    @on(OptionList.OptionHighlighted, "#trace-steps")
    def _show(self, event: OptionList.OptionHighlighted) -> None:
        if 0 <= event.option_index < len(self.steps):
            self.query_one("#trace-detail", Static).update(self.steps[event.option_index].detail)

    @on(OptionList.OptionSelected, "#trace-steps")
    def _selected(self) -> None:
        self.action_open_step()

    def action_move(self, delta: int) -> None:
        lst = self.query_one(OptionList)
        (lst.action_cursor_down if delta > 0 else lst.action_cursor_up)()

    def action_close(self) -> None:
        self.app.trail = None  # type: ignore[attr-defined]
        self.dismiss()

    def action_open_step(self) -> None:
        i = self.query_one(OptionList).highlighted
        if i is None or not 0 <= i < len(self.steps) or not self.steps[i].go:
            return
        go = self.steps[i].go
        app: Any = self.app
        app.trail = (self.path, self.line, self.start, i)  # esc there comes back here
        self.dismiss()
        if go[0] == "file":
            app.call_later(app.open_memory_at, go[1], go[2])
        elif go[0] == "turn":
            app.post_message(ShowSession(go[1], at=go[2], marks=go[3], why=go[4]))
        elif go[0] == "commit":  # History, on the commit the step names
            app.call_later(app.open_history_at, go[1])
        elif go[0] == "pane":
            app.action_show_pane(go[1])
