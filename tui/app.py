"""The memdeck app: six panes over one engine, switched by the keys 1–6.

The app composes the panes and glues workers to messages; each pane owns its own loading and
actions. Every engine call runs in a thread worker; results come back as messages."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterable
from typing import Any, NoReturn

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Header, Static, TabbedContent, TabPane

from memdeck.engine import Engine, ListingHead

from . import app_everywhere, collector
from .app_commands import help_rows, palette_commands
from .held_keys import HeldKeys
from .messages import (
    MemoryChanged,
    PipelineFinished,
    PipelineProgress,
    ProposalReady,
    SessionsChanged,
    ShowSession,
    WorkFailed,
    one_line,
)
from .pane_registry import PANES, pane_class
from .panes.base import Pane
from .panes.sessions import SessionsPane
from .widgets.confirm import ConfirmScreen
from .widgets.help import HelpScreen
from .widgets.home_banner import HomeBanner
from .widgets.key_footer import KeyFooter
from .widgets.message_log import MessageLog
from .widgets.pane_tabs import PaneTabs
from .widgets.pipeline_bar import PipelineBar

PANES_CSS = [p for p in PANES if p[0] != "sessions"]  # sessions' looks are in app.tcss


class MemdeckApp(app_everywhere.EverywhereActions, App[None]):
    CSS_PATH = ["styles/app.tcss", *[f"styles/{pid}.tcss" for pid, _, _ in PANES_CSS]]
    TITLE = "memdeck"
    BINDINGS = [
        # priority: the switch begins the moment the key arrives, so keys typed right after
        # it wait for the new pane (held_keys.py); a text field keeps its digits (check_action)
        *[Binding(str(i), f"show_pane('{pid}')", title, id=f"app.pane.{pid}", show=False,
                  priority=True) for i, (pid, title, _) in enumerate(PANES, 1)],
        Binding("c", "consolidate", "Extract+consolidate", id="app.consolidate"),
        Binding("ctrl+x", "cancel_run", "Cancel run", id="app.cancel"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("at", "messages", "Messages", id="app.messages", show=False),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("escape", "trail_back", "Back to trace", id="app.trail_back"),
        *app_everywhere.BINDINGS,
    ]

    def __init__(self, engine: Engine, *, watch: bool = False, blink: bool = True,
                 initial: str = "sessions", home_label: str | None = None,
                 notices: tuple[str, ...] = (), listing_head: ListingHead | None = None) -> None:
        super().__init__()
        self.engine = engine
        # the last listing's first rows, painted in the first frame (SessionsPane)
        self.listing_head = listing_head
        self.notices = notices  # said once the app is up (what opening the home recovered)
        # a trace left for one of its steps (widgets/line_trace.py): esc there comes back
        self.trail: tuple[str, int, str, int] | None = None
        # keep the index and history current (not `watch`: that is Textual's App.watch)
        self.live_updates = watch
        self.blink = blink
        self.initial = initial
        self.running = False
        self._cancel: threading.Event | None = None
        self._watch_stop = threading.Event()
        self._pending_action: tuple[str, str] | None = None
        self.held = HeldKeys(self)  # keys typed while a pane is shown: replayed to it
        self._watching = False
        self._listed = False
        self._home_label_fixed = home_label
        self.sub_title = home_label or _home_label(engine)
        self.message_log = MessageLog()  # every notification, to read again (`@`)

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield HomeBanner(id="home-banner")
        with PaneTabs(initial=self.initial, id="panes"):
            for i, (pid, title, _) in enumerate(PANES, 1):
                with TabPane(f"{i} {title}", id=pid):
                    if pid == self.initial:  # the others are built when first shown
                        yield pane_class(pid)(id=f"{pid}-pane")
                    else:  # an empty TabPane would show its own name, `TabPane#settings`
                        yield Static(f"Loading {title}…", classes="pane-placeholder")
        yield PipelineBar(id="pipeline-bar")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(PipelineBar).display = False
        keymap, problems = self.engine.keymap()
        if keymap:
            self.set_keymap(keymap)
        for p in problems:
            self.notify(p, severity="warning", timeout=8)
        for n in self.notices:
            self.notify(n, timeout=10)
        self.call_after_refresh(self._activate, self.initial)
        if self.live_updates and self.initial != "sessions":
            self._watching = True
            self.watch_home()

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """A toast, kept in the message log too. Plain text unless asked: memdeck's messages
        quote config keys such as `[features]`, which markup would swallow."""
        self.message_log.add(str(severity), f"{title}: {message}" if title else message,
                             self.engine.clock.now())
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def action_messages(self) -> None:
        from .widgets.message_log import MessageLogScreen

        self.push_screen(MessageLogScreen(self.message_log))

    def on_descendant_focus(self, event: Any) -> None:
        if not self.blink and hasattr(event.widget, "cursor_blink"):
            event.widget.cursor_blink = False  # snapshots and screenshots stay still

    @property
    def active_pane(self) -> str:
        return str(self.query_one(TabbedContent).active)

    def built(self, pid: str) -> Pane | None:
        """The pane if it has been shown (panes are built on first view), else None."""
        found = self.query(f"#{pid}-pane")
        return found.first(Pane) if found else None

    def pane(self, pid: str) -> Pane:
        return self.query_one(f"#{pid}-pane", Pane)

    async def _activate(self, pid: str) -> None:
        pane = self.built(pid)
        if pane is None:
            gc.disable()  # no collection while it is built; its widgets are long-lived:
            try:  # frozen once it is drawn (tui/collector.py)
                pane = pane_class(pid)(id=f"{pid}-pane")
                tab_pane = self.query_one(f"TabPane#{pid}", TabPane)
                await tab_pane.mount(pane)
                await tab_pane.query(".pane-placeholder").remove()
            finally:
                self.call_after_refresh(collector.settle)
        pane.activate()
        if self.active_pane != pid:
            return  # the user moved on while it was being built: focusing it would pull back
        pane.focus_default()
        self.held.shown(pid)
        if self._pending_action and self._pending_action[0] == pid:
            _, action = self._pending_action
            self._pending_action = None
            self.call_later(pane.run_action, action)

    @on(TabbedContent.TabActivated)
    def _tab(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id:
            self.held.switch_to(event.pane.id)
            self.call_after_refresh(self._activate, event.pane.id)

    def action_show_pane(self, pid: str) -> None:
        if self.active_pane == pid:  # no tab change, so no _activate: keep (or put) the focus
            if (pane := self.built(pid)) is not None and (
                    self.focused is None or pane not in self.focused.ancestors_with_self):
                pane.focus_default()
            self.held.shown(pid)  # what was typed after the key goes to the pane now
            return
        self.held.switch_to(pid)
        # Textual hands the focus of a widget being hidden to a sibling, which can sit in the
        # pane being left, and that makes its tab active again: drop the focus first
        self.screen.set_focus(None)
        self.query_one(TabbedContent).active = pid

    # -- following a memory line (issue 11) ------------------------------------------------
    async def open_memory_at(self, path: str, line: int) -> None:
        """The Memory pane, showing `path` with the cursor on `line`."""
        from .panes.memory import MemoryPane

        self.action_show_pane("memory")
        if self.built("memory") is None:
            await self._activate("memory")
        self.query_one(MemoryPane).open_at(path, line)

    async def open_history_at(self, commit: str) -> None:
        """History, its cursor on `commit` (a trace's "changed" step; esc comes back)."""
        self.action_show_pane("history")
        if self.built("history") is None:
            await self._activate("history")
        from .panes.history import HistoryPane

        self.query_one(HistoryPane).show_commit(commit)

    def action_trail_back(self) -> None:
        """esc after following a trace's step: the trace again, on that step."""
        if self.trail is not None:
            from .widgets.memory.line_trace import LineTraceScreen

            path, line, start, step = self.trail
            self.trail = None
            self.push_screen(LineTraceScreen(path, line, start, highlighted=step))

    # -- keys typed while a pane is being shown or loads (held_keys.py) -------------------
    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and self.held.hold(event):
            return
        await super().on_event(event)

    # -- messages from panes and workers ---------------------------------------------------
    @on(WorkFailed)
    def _failed(self, event: WorkFailed) -> None:
        self.notify(f"{event.what} failed: {one_line(event.error)}", severity="error",
                    timeout=10)

    @on(SessionsChanged)
    def _sessions_changed(self, event: SessionsChanged) -> None:
        if isinstance(sessions := self.built("sessions"), SessionsPane):
            sessions.mark_stale(rescan=event.rescan)
        if pane := self.built("memories"):
            pane.mark_stale()

    @on(MemoryChanged)
    def _memory_changed(self) -> None:
        for pid in ("memories", "memory", "history", "review", "settings"):
            if pane := self.built(pid):
                pane.mark_stale()
        # a session's status follows the memory (consolidated, pruned, forgotten, reset)
        if isinstance(sessions := self.built("sessions"), SessionsPane):
            sessions.mark_stale(rescan=False)
        if self._home_label_fixed is None:
            self.relabel_home()

    @work(thread=True, exclusive=True, group="home-label", exit_on_error=False)
    def relabel_home(self) -> None:
        """The header names the memory version Codex uses now (a settings change or a new
        `memories/` folder switches it)."""
        label = _home_label(self.engine)
        self.call_from_thread(setattr, self, "sub_title", label)

    @on(ShowSession)
    async def _show_session(self, event: ShowSession) -> None:
        self.action_show_pane("sessions")
        if self.built("sessions") is None:
            await self._activate("sessions")
        self.query_one(SessionsPane).open_session(event.session_id, event.at, event.marks,
                                                  event.why)

    @on(SessionsPane.Loaded)
    def _first_listing(self, event: SessionsPane.Loaded) -> None:
        # the watcher's first round re-indexes too: start it once the listing is on screen
        if not event.final or self._listed:
            return
        self._listed = True
        self.call_after_refresh(collector.settle)
        self.import_panes()
        if self.live_updates and not self._watching:
            self._watching = True
            self.set_timer(2.0, self.watch_home)  # GitPython and watchfiles load after paint

    @work(thread=True, group="warm-up", name="loading the panes", exit_on_error=False)
    def import_panes(self) -> None:
        """Import the other panes' code while the user reads the table: first visits are
        then as quick as later ones."""
        for pid, _, _ in PANES:
            pane_class(pid)

    # -- extract + consolidate -------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "show_pane":  # not over a dialog, not out of a field being typed in
            focused = self.focused
            return self.screen is self.screen_stack[0] and not (
                focused is not None and focused.check_consume_key("1", "1"))
        if action in ("copy", "undo_memory"):  # a dialog's own y comes first
            return self.screen is self.screen_stack[0]
        if action == "cancel_run":
            return self.running
        if action == "trail_back":
            return self.trail is not None and self.screen is self.screen_stack[0]
        if action == "consolidate":
            return not self.running or None
        return True

    def action_consolidate(self) -> None:
        if self.running:
            return
        if self.engine.config_get("generate_memories").value is False:
            def answered(yes: bool | None) -> None:
                if yes:
                    self._start_run()

            self.push_screen(ConfirmScreen(
                "Generating memories is off: extract anyway?",
                "generate_memories = false in config.toml: new sessions start with memories "
                "off. Codex still extracts the sessions that started with them on, the next "
                "time it starts; this runs that extraction and a consolidation now.",
                yes="Extract anyway"), answered)
            return
        self._start_run()

    def _start_run(self) -> None:
        if self.running:
            return
        self.running = True
        self._cancel = threading.Event()
        self.query_one(PipelineBar).start("extract: choosing sessions…")
        self.refresh_bindings()
        self.run_pipeline(self._cancel)

    def action_cancel_run(self) -> None:
        if self._cancel is not None and self.running:
            self._cancel.set()
            self.query_one(PipelineBar).step("cancelling: waiting for calls in flight…", 0, 0)

    @work(thread=True, exclusive=True, group="pipeline", name="extract + consolidate",
          exit_on_error=False)
    def run_pipeline(self, cancel: threading.Event) -> None:
        try:
            self._pipeline(cancel)
        except Exception as e:  # noqa: BLE001 - shown as one line, the app goes on
            self.post_message(WorkFailed("extract + consolidate", e))
            self.post_message(PipelineFinished("failed", None, cancelled=True))

    def _pipeline(self, cancel: threading.Event) -> None:
        seen = [0, 0]  # done, total: so far

        def progress(done: int, total: int, result: Any) -> None:
            seen[:] = [done, total]
            detail = f"{result.outcome}: {result.thread_id[:8]}" if result else "asking the model"
            self.post_message(PipelineProgress("extract", done, total, detail))

        def waiting(what: str) -> None:  # every slot held elsewhere: say so, not a still bar
            self.post_message(PipelineProgress("extract", seen[0], seen[1], what))

        report = self.engine.extract(progress=progress, cancel=cancel, on_wait=waiting)
        n = report.count("extracted")
        done = f"{n} session{'s' if n != 1 else ''} extracted"
        failed = report.count("failed")
        if failed:
            done += f", {failed} failed"
        self.post_message(SessionsChanged(rescan=False))  # the extract read the disk first
        if cancel.is_set() or report.cancelled:
            self.post_message(PipelineFinished(f"cancelled: {done}", None, cancelled=True))
            return
        self.post_message(PipelineProgress("consolidate", 0, 0, done))
        proposal = self.engine.consolidate()  # not cancellable: a cancel now ends the run after it
        cancelled = cancel.is_set()
        self.post_message(PipelineFinished(f"cancelled: {done}" if cancelled else done, proposal,
                                           cancelled=cancelled))

    @on(PipelineProgress)
    def _progress(self, event: PipelineProgress) -> None:
        label = (f"extract {event.done}/{event.total}" if event.stage == "extract"
                 else f"{event.stage}…")
        self.query_one(PipelineBar).step(label, event.done, event.total, event.detail)

    @on(PipelineFinished)
    def _finished(self, event: PipelineFinished) -> None:
        self.running = False
        self._cancel = None
        self.query_one(PipelineBar).stop()
        self.refresh_bindings()
        self.post_message(MemoryChanged("pipeline"))
        p = event.proposal
        if event.cancelled:
            if event.summary == "failed":
                return
            if p is None:
                self.notify(f"Run {event.summary}.", severity="warning")
                return
            # cancelled while consolidating: the consolidation under way still finished
            self.notify(f"Run {event.summary}; the consolidation under way finished: "
                        f"proposal {p.id} is {'in Review' if p.status == 'pending' else p.status}.",
                        severity="warning")
            self.post_message(ProposalReady(p))
            return
        if p is None:
            self.notify(f"{event.summary}; memory is up to date, nothing to consolidate.")
        elif p.status == "pending":
            self.notify(f"{event.summary}; proposal {p.id} is ready for review.")
            self.action_show_pane("review")
        else:
            self.notify(f"{event.summary}; proposal {p.id} was accepted (auto-accept is on).")
        self.post_message(ProposalReady(p))

    # -- the watcher -----------------------------------------------------------------------
    @work(thread=True, group="watch", name="watching the Codex home", exit_on_error=False)
    def watch_home(self) -> None:
        def on_event(ev: Any) -> None:
            kind = ev.kind
            if kind == "indexed":  # the watcher brought the index up to date itself
                self.post_message(SessionsChanged(rescan=False))
            elif kind in ("memory_changed", "extracted", "proposal"):
                self.post_message(MemoryChanged(kind))
                if kind == "extracted":
                    self.post_message(SessionsChanged(rescan=False))
                if kind == "proposal":
                    self.notify(f"{ev.detail} (auto-extract); see Review (5).")
            elif kind == "config_changed":  # statuses, the banner, the version may change
                self.post_message(SessionsChanged(rescan=False))
                self.post_message(MemoryChanged(kind))
            elif kind == "error":
                self.post_message(WorkFailed("watcher", ev.detail))

        self.engine.watcher(on_event, stop=self._watch_stop).run()

    async def action_quit(self) -> None:
        """Quit, but never drop an unsaved edit of a memory file without asking."""
        memory = self.built("memory")
        if getattr(memory, "has_unsaved_changes", lambda: False)():
            def answered(yes: bool | None) -> None:
                if yes:
                    self.exit()

            self.action_show_pane("memory")
            self.push_screen(ConfirmScreen(
                "Quit and lose your unsaved edit?",
                "The file you are editing in the Memory pane has changes that are not saved. "
                "Cancel, then ctrl+s to save them.", yes="Quit without saving", danger=True),
                answered)
            return
        self.exit()

    def on_unmount(self) -> None:
        self._watch_stop.set()
        if self._cancel is not None:
            self._cancel.set()
        collector.release()  # what the app froze can be collected once it is gone

    # -- help and the command palette (app_commands.py) ------------------------------------
    def action_help(self) -> None:
        self.push_screen(HelpScreen(help_rows(self), self.active_pane))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from palette_commands(self)
        yield from super().get_system_commands(screen)

    def pane_action(self, pid: str, action: str) -> None:
        """Run a pane's action from the palette: at once, or once the pane is shown."""
        if self.active_pane == pid:
            self.call_later(self.pane(pid).run_action, action)
        else:  # after the pane is shown and focused, or the focusing would undo the action
            self._pending_action = (pid, action)
            self.action_show_pane(pid)


def _home_label(engine: Engine) -> str:
    """`~/.codex · memory v2`: the home, and the memory version Codex uses in it now."""
    import os

    info = engine.home_info()  # config.toml read again
    root = str(info.root)
    user = os.path.expanduser("~")
    where = "~" + root[len(user):] if root.startswith(user + os.sep) else root
    if info.version is None:  # a broken config.toml is reported elsewhere
        return where
    v = info.version
    return f"{where} · memory {v.name}" + ("" if v.known else " (unknown: read-only)")


def run_app(home: str | None) -> NoReturn:
    recovered: list[str] = []
    Engine.announce = recovered.append  # shown in the app, not on a screen it covers
    engine = Engine.open(home)
    MemdeckApp(engine, watch=True, notices=tuple(f"recovered: {d}" for d in recovered),
               listing_head=engine.listing_head()).run()
    leave(0)


def leave(code: int) -> NoReturn:
    """End the process once the app has closed. Python's teardown frees every object the
    app held one by one (measured: 0.2-0.7 s after a 10,000-row listing, most of a quit);
    nothing in it is needed once the app is gone, so it is skipped: what `atexit` holds runs
    (a read-only home's scratch index removed, logs flushed), then the process ends. When
    another thread is still at work (not a daemon), the usual exit waits for it instead."""
    import atexit
    import os
    import sys
    import threading

    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    if any(t is not threading.main_thread() and t.is_alive() and not t.daemon
           for t in threading.enumerate()):
        raise SystemExit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)
