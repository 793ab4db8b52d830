"""Pane 1, Sessions: every session with its memory status and the reason; filters; the
transcript of the one opened; extract it now or forget it."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import ContentSwitcher, Input, Label, Select, Static
from textual.worker import Worker, WorkerState

from memdeck.engine import ago

from ..external_editor import EditorError, run_editor
from ..messages import MemoryChanged, SessionsChanged
from ..widgets.confirm import ConfirmScreen
from ..widgets.home_banner import HomeBanner
from ..widgets.session_table import SORTS, SessionHeader, SessionTable, detail_line, matches
from ..widgets.sessions.transcript import TranscriptView
from .base import Pane

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

ALL = "*"
FILTER_SELECTS = (("status-filter", "any status"), ("project-filter", "any project"))
SELECT_WIDTH = 24  # app.tcss: #status-filter, #project-filter, .filter-slot
AGE_TICK_S = 10.0
AFTER_FIRST_FRAME_S = 0.02
PROGRESS_EVERY_S = 0.5  # a cold start: the rows indexed so far, this often


class SessionsPane(Pane):
    TITLE = "Sessions"
    BINDINGS = [
        Binding("slash", "filter", "Filter", id="sessions.filter"),
        Binding("x", "extract", "Extract now", id="sessions.extract"),
        Binding("f", "forget", "Forget", id="sessions.forget"),
        Binding("m", "remembered", "Said vs remembered", id="sessions.remembered"),
        Binding("s", "sort", "Sort", id="sessions.sort"),
        Binding("E", "external_open", "Rollout in $EDITOR", id="sessions.external_open",
                show=False),
        Binding("S", "sort(True)", "Reverse sort", id="sessions.sort_reverse", show=False),
        Binding("escape", "back", "Back", id="sessions.back"),
        Binding("R", "reload", "Rescan", id="sessions.rescan", show=False),
    ]
    COMMANDS = [
        ("Filter sessions", "Type words to narrow the sessions table", "filter"),
        ("Extract this session now", "Phase 1 for the session under the cursor", "extract"),
        ("Forget this session", "Disable its memory and delete its raw memory", "forget"),
        ("Said vs remembered", "What the session said beside what memory kept of it",
         "remembered"),
        ("Rescan sessions", "Read new and changed rollouts now", "reload"),
        ("Open the rollout in $EDITOR", "The session's JSONL file where it is; memdeck reads "
         "it again afterwards", "external_open"),
        ("Sort sessions by the next column", "A click on a column's title sorts by it too",
         "sort"),
        ("Reverse the sessions' sort", "Newest or oldest first, A to Z or Z to A",
         "sort(True)"),
    ]

    @dataclass
    class Loaded(Message):
        sessions: list[Any]
        warnings: list[str]
        final: bool
        indexing: tuple[int, int] | None = None  # a cold index: rollouts stored so far, of

    @dataclass
    class DetailLoaded(Message):
        detail: Any

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sessions: list[Any] = []
        self._pending_open: str | None = None
        self._open_at: tuple[int | None, tuple[str, ...], str] = (None, (), "")
        # reloads coalesce: one loader at a time; a reload asked for meanwhile makes it go
        # round again (with a rescan if any asked for one), so an older listing never lands
        # after a newer one
        self._load_lock = threading.Lock()
        self._loading = False
        self._again = False
        self._rescan = True  # the next load reads the disk (else: statuses recomputed)
        # until the first listing of this run lands: the head of the last one, on screen
        # (stale-while-revalidate, engine/index/listing_head.py), and whether the rows shown
        # are not yet the listing of now
        self._head: Any | None = None
        self._updating = False
        self._indexing: tuple[int, int] | None = None  # a cold index: stored so far, of
        self._failed = False  # the last listing failed: the rows shown are not up to date
        self._hold_listing = False  # the head is being painted: the listing starts after it
        self._again_after_paint = False  # a reload asked for meanwhile
        self._listed = False  # a full listing arrived: the selects offer what it holds
        self._selects_ready = False  # mounted in place of their slots

    def compose(self) -> ComposeResult:
        with Horizontal(id="sessions-filters"):
            yield Input(placeholder="/ filter: words in preview, project, id, reason",
                        id="session-filter", compact=True)
            # the selects are mounted after the first frame (`_mount_selects`): two Selects
            # cost the first paint 40 ms, and they have no options before a listing anyway
            for sel_id, prompt in FILTER_SELECTS:
                yield Label(f"{prompt:<{SELECT_WIDTH - 2}}▼", id=f"{sel_id}-slot",
                            classes="filter-slot")
            yield Label("", id="session-count")
        with ContentSwitcher(initial="sessions-list", id="sessions-switcher"):
            with Vertical(id="sessions-list"):
                yield SessionHeader(id="session-header")
                yield SessionTable(id="session-table")
                yield Static("", id="session-detail")
            yield TranscriptView(id="sessions-transcript")

    def on_mount(self) -> None:
        # what the first frame does without, a moment after it (its writer thread needs the
        # GIL to put it on the terminal): the selects, and with a head the listing of now
        self.call_after_refresh(self.set_timer, AFTER_FIRST_FRAME_S, self._after_first_frame)
        head = getattr(self.app, "listing_head", None)
        if head is not None and head.sessions:  # the last listing's rows, in this frame
            self._head = head
            self._hold_listing = True
            self.sessions = list(head.sessions)
            self.apply_filter()
        else:
            self.query_one(SessionTable).loading = True
            self.activate()  # start reading at once: the listing is what the user waits for
        self.set_interval(AGE_TICK_S, self._tick)

    def mark_stale(self, rescan: bool = True) -> None:
        """Rows changed: `rescan` when rollouts did (read the disk again), else only what
        the statuses are computed from (the pipeline DB, memory, settings)."""
        with self._load_lock:
            self._rescan = self._rescan or rescan
        super().mark_stale()
        if self.stale and self.loaded:
            # hidden (Review after a run, say): reload now all the same, so that coming back
            # shows the rows as they are at once instead of waiting for a reload then
            self.activate()

    def _tick(self) -> None:
        """Ages in the reasons ("extracted 7 s ago") keep up with the clock: the statuses
        are recomputed now and then while the pane is on screen (a big home less often)."""
        self._ticks += 1
        every = max(1, min(6, len(self.sessions) // 1500))  # 10 s, up to 60 s at 9,000 rows
        if self._ticks % every == 0 and self.is_on_screen_pane() and self.loaded \
                and not self.stale and self.app.screen is self.screen:
            self.mark_stale(rescan=False)

    def on_resize(self) -> None:
        self.query_one(SessionHeader).render_header(self.query_one(SessionTable).size.width
                                                    or self.size.width)

    def focus_default(self) -> None:
        # at once, not after a refresh: a deferred focus() could pull the user back here
        # from a pane they switched to meanwhile
        target = self.query_one(TranscriptView) if self.showing_transcript \
            else self.query_one(SessionTable)
        self.screen.set_focus(target)

    @property
    def showing_transcript(self) -> bool:
        return self.query_one(ContentSwitcher).current == "sessions-transcript"

    # -- loading --------------------------------------------------------------------------
    _ticks = 0

    async def _after_first_frame(self) -> None:
        if self._hold_listing:
            self._hold_listing = False
            if self._again_after_paint:
                self.reload()
        await self._mount_selects()

    def reload(self) -> None:
        if self._hold_listing:
            self._again_after_paint = True
            return
        with self._load_lock:
            if self._loading:
                self._again = True
                return
            self._loading = True
        self.load_sessions(first=not self.sessions)

    @work(thread=True, exclusive=True, group="sessions-load", name="loading sessions",
          exit_on_error=False)
    def load_sessions(self, first: bool) -> None:
        try:
            while True:
                with self._load_lock:
                    rescan, self._rescan, self._again = self._rescan, False, False
                self._load_once(first, rescan)
                first = False
                with self._load_lock:
                    if not self._again:
                        self._loading = False
                        return
        except BaseException:
            with self._load_lock:
                self._loading = False
            raise

    def _load_once(self, first: bool, rescan: bool) -> None:
        if first:  # what the index already knows, at once; then catch up with the disk
            quick = self.engine.listing(refresh=False)
            if quick.sessions:
                self.post_message(self.Loaded(quick.sessions, list(quick.warnings), False))
                stats = self.engine.refresh()
                if not (stats.scanned_full or stats.scanned_append or stats.removed):
                    # the disk holds nothing new: the listing shown is the full one
                    self.post_message(self.Loaded(quick.sessions, list(quick.warnings), True))
                    self.engine.keep_listing_head(quick)
                    return
        listing = self.engine.listing(refresh=rescan, on_progress=self._progress(first))
        self.post_message(self.Loaded(listing.sessions, list(listing.warnings), True))
        if rescan:  # the disk as it is now: what the next start paints at once
            self.engine.keep_listing_head(listing)

    def _progress(self, first: bool) -> Any:
        """While a first listing indexes the home (no index yet, or every rollout new): the
        rows indexed so far, now and then, so that a cold start shows rows as they come."""
        if not first:
            return None
        import time

        shown = [time.monotonic()]

        def progress(done: int, total: int) -> None:
            if done < total and time.monotonic() - shown[0] >= PROGRESS_EVERY_S:
                partial = self.engine.listing(refresh=False)  # this thread: what is stored
                self.post_message(self.Loaded(partial.sessions, [], False, (done, total)))
                shown[0] = time.monotonic()

        return progress

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        table = self.query_one(SessionTable)
        table.loading = False
        confirmed = event.sessions is self.sessions  # the quick listing was the full one
        self.sessions = event.sessions
        self._head = None  # the rows of this run from now on
        self._updating = not event.final
        self._indexing = event.indexing
        if event.final:  # the quick listing is on screen for a moment only
            self._fill_selects()
        if not confirmed:
            self.apply_filter()
            if self.showing_transcript and (view := self.query_one(TranscriptView)).detail:
                path = view.detail.session.rollout_path
                now = next((s for s in self.sessions if s.rollout_path == path), None)
                if now is not None:
                    view.refresh_session(now)
        else:  # the same rows, now known to be the listing of now: the count says so
            self.query_one("#session-count", Label).update(
                self._count_line(len(self.query_one(SessionTable).rows)))
        if self.focus_lost():
            self.focus_default()
        if event.final:  # said under the header for as long as it holds, not as a toast
            for banner in self.app.query(HomeBanner):
                banner.show(event.warnings)
        if event.final and self._pending_open:
            key, self._pending_open = self._pending_open, None
            self.open_session(key, *self._open_at)

    async def _mount_selects(self) -> None:
        """The status and project filters, in place of their slots (with the options of the
        listing when one arrived meanwhile)."""
        from textual.css.query import NoMatches

        try:
            row = self.query_one("#sessions-filters")
            for sel_id, prompt in FILTER_SELECTS:
                slot = self.query_one(f"#{sel_id}-slot")
                await row.mount(Select([], prompt=prompt, id=sel_id, compact=True),
                                before=slot)
                await slot.remove()
        except NoMatches:  # the app is closing
            return
        self._selects_ready = True
        if self._listed:  # a listing arrived while they were mounted
            self._fill_selects()

    def _filter_options(self) -> dict[str, list[tuple[str, str]]]:
        """Each filter's options: every status and project of the listing, with its count."""
        status = Counter(s.status for s in self.sessions)
        projects = Counter(s.project for s in self.sessions)
        return {sel_id: [(f"{k} ({n})", k) for k, n in sorted(counts.items())]
                for sel_id, counts in (("status-filter", status), ("project-filter", projects))}

    def _fill_selects(self) -> None:
        self._listed = True
        if not self._selects_ready:  # `_mount_selects` fills them once they are there
            return
        for sel_id, options in self._filter_options().items():
            sel: Select[str] = self.query_one(f"#{sel_id}", Select)
            value = sel.value
            sel.set_options(options)
            if value in {v for _, v in options}:
                sel.value = value

    def _value(self, sel_id: str) -> str:
        if not self._selects_ready:
            return ALL
        v = self.query_one(sel_id, Select).value
        return v if isinstance(v, str) else ALL

    def apply_filter(self) -> None:
        table = self.query_one(SessionTable)
        keep = table.current.rollout_path if table.current is not None else None
        text = self.query_one("#session-filter", Input).value.strip()
        status, project = self._value("#status-filter"), self._value("#project-filter")
        rows = table.order.apply(
            [s for s in self.sessions if matches(s, text, status, project)], SORTS)
        table.set_rows(rows, keep)
        if not rows:
            self.query_one("#session-detail", Static).update(
                "No session matches these filters." if self.sessions else
                f"No sessions in {self.engine.root} yet: Codex writes them to sessions/.")
        self.query_one("#session-count", Label).update(self._count_line(len(rows)))

    def _count_line(self, shown: int) -> str:
        """`12 sessions`, `3 of 12`; and while the rows are not the listing of now, what they
        are: the last listing's head (`19 sessions · 5 min ago…`, its age), or the index as
        it was (`…, updating…`). Short: at 80 columns the filter field keeps its room."""
        head = self._head
        total = head.total if head is not None else len(self.sessions)
        count = f"{shown} of {total}" if shown != total else f"{shown} sessions"
        if head is not None:
            count += f" · {ago(head.listed_at, self.engine.clock.now())}"
            return count if self._failed else count + "…"
        if self._indexing is not None and self._updating and not self._failed:
            done, of = self._indexing
            return f"{count}, indexing {done} of {of}…"
        return f"{count}, updating…" if self._updating and not self._failed else count

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A listing that failed leaves the rows on screen, said not to be up to date for as
        long as that holds, under the header (the error itself is told once by the app, and
        kept in the message log)."""
        if event.worker.group == "sessions-load":
            if event.state is WorkerState.ERROR:
                self._failed = True
                self.query_one(SessionTable).loading = False
                self.apply_filter()
                when = (f"the listing of {ago(self._head.listed_at, self.engine.clock.now())}"
                        if self._head is not None else "what the index last said")
                said = (f"the sessions shown are {when}: listing them again failed (@ shows "
                        "why; R tries again)")
                for banner in self.app.query(HomeBanner):  # once, however often it fails
                    kept = [w for w in banner.warnings if "listing them again failed" not in w]
                    banner.show((*kept, said))
            elif event.state is WorkerState.SUCCESS:
                self._failed = False
        super().on_worker_state_changed(event)

    @on(Input.Changed, "#session-filter")
    @on(Select.Changed)
    def _filter_changed(self) -> None:
        self.apply_filter()

    @on(Input.Submitted, "#session-filter")
    def _filter_done(self) -> None:
        self.query_one(SessionTable).focus()

    @on(SessionTable.Highlighted)
    def _highlighted(self, event: SessionTable.Highlighted) -> None:
        self.query_one("#session-detail", Static).update(detail_line(event.session))

    # -- transcript -----------------------------------------------------------------------
    @on(SessionTable.Opened)
    def _opened(self, event: SessionTable.Opened) -> None:
        self.open_session(event.session.rollout_path)

    def open_session(self, key: str, at: int | None = None, marks: tuple[str, ...] = (),
                     why: str = "") -> None:
        """Show a session's transcript (key: id, id prefix or rollout path); with `at`, at
        that entry, framed, `marks` highlighted (TranscriptView.show)."""
        self._open_at = (at, marks, why)
        if not self.sessions:
            self._pending_open = key
            return
        self.query_one(TranscriptView).loading = True
        self.query_one(ContentSwitcher).current = "sessions-transcript"
        self.refresh_bindings()  # `esc Back` now leads somewhere
        self.load_detail(key)

    @work(thread=True, exclusive=True, group="sessions-detail", name="opening the session",
          exit_on_error=False)
    def load_detail(self, key: str) -> None:
        # the row on screen is the session as the listing has it now (the watcher and the
        # reloads keep it current): no look-up, no rescan of the whole home
        held = next((s for s in self.sessions if s.rollout_path == key), None)
        detail = self.engine.session_of(held) if held is not None \
            else self.engine.session(key, refresh=False)
        self.post_message(self.DetailLoaded(detail))

    @on(DetailLoaded)
    def _detail(self, event: DetailLoaded) -> None:
        view = self.query_one(TranscriptView)
        view.loading = False
        view.show(event.detail, *self._open_at)
        self._open_at = (None, (), "")  # a later Enter on a row opens at the top
        view.focus()

    # -- actions --------------------------------------------------------------------------
    def _target(self) -> Any | None:
        if self.showing_transcript:
            d = self.query_one(TranscriptView).detail
            return d.session if d is not None else None
        return self.query_one(SessionTable).current

    def action_filter(self) -> None:
        if self.showing_transcript:
            self.action_back()
        self.screen.set_focus(self.query_one("#session-filter", Input))  # now: typing follows

    def action_back(self) -> None:
        if self.showing_transcript:
            self.query_one(ContentSwitcher).current = "sessions-list"
            self.query_one(TranscriptView).loading = False
            self.query_one(SessionTable).focus()
            if getattr(self.app, "trail", None) is not None:
                self.app.action_trail_back()  # type: ignore[attr-defined]  # from a trace
        elif self.query_one("#session-filter", Input).has_focus:
            self.query_one("#session-filter", Input).value = ""
            self.query_one(SessionTable).focus()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`esc Back` is offered only where it leads somewhere: out of a transcript, or out
        of the filter field (issue 10: on the table it was shown and did nothing)."""
        if action == "back":
            return self.showing_transcript or self.query_one("#session-filter", Input).has_focus
        if action == "sort":
            return not self.showing_transcript
        return True

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.refresh_bindings()

    def copy_value(self, what: str) -> tuple[str, str] | None:
        s = self._target()
        if s is None:
            return None
        if what == "id":
            return ("session id", s.id) if s.id else None
        return "rollout path", str(s.rollout_path)

    def action_external_open(self) -> None:
        s = self._target()
        if s is None:
            return
        try:
            run_editor(self.app, Path(s.rollout_path))
        except EditorError as e:
            self.notify(f"Opening the rollout failed: {e}", severity="error", timeout=8)
            return
        self.mark_stale(rescan=True)  # whatever the editor did to it is read again

    def action_sort(self, reverse: bool = False) -> None:
        table = self.query_one(SessionTable)
        self._sort_by(table.order.reversed() if reverse else table.order.next(SORTS))

    @on(SessionHeader.SortClicked)
    def _sort_clicked(self, event: SessionHeader.SortClicked) -> None:
        col = next(c for c in SORTS if c.key == event.column)
        self._sort_by(self.query_one(SessionTable).order.clicked(col))

    def _sort_by(self, order: Any) -> None:
        table = self.query_one(SessionTable)
        table.order = order
        self.apply_filter()  # the cursor stays on its session
        self.on_resize()  # the arrow moves

    def action_reload(self) -> None:
        self.reload()

    def action_extract(self) -> None:
        s = self._target()
        if s is not None:
            self.notify(f"Extracting {s.project} · {(s.id or '')[:8]}…", timeout=3)
            self.extract_one(s.rollout_path)

    @work(thread=True, group="sessions-action", name="extract", exit_on_error=False)
    def extract_one(self, key: str) -> None:
        report = self.engine.extract([key])
        r = report.results[0] if report.results else None
        if r is None:
            self.notify("Nothing to extract.")
        else:
            sev: SeverityLevel = "error" if r.outcome in ("failed", "refused") else "information"
            text = f"{r.outcome}: {r.detail}" if r.detail else r.outcome
            self.notify(f"Extract ({report.backend}) — {text}",
                                      severity=sev, timeout=6)
        self.post_message(SessionsChanged(rescan=False))
        self.post_message(MemoryChanged("extract"))

    def action_remembered(self) -> None:
        """The session side by side with what memory kept of it (its screen reads the data
        in a thread)."""
        from ..widgets.sessions.said_remembered import SaidRememberedScreen

        s = self._target()
        if s is not None:
            self.app.push_screen(SaidRememberedScreen(s.rollout_path))

    def action_forget(self) -> None:
        s = self._target()
        if s is None:
            return
        detail = (f"{s.project} · {s.id}\n{s.preview[:200]}\n\nMemories are switched off "
                  "for this session and its raw memory is deleted: it is never extracted "
                  "again.")
        if "in the consolidated memory" in s.reason:
            detail += (" What it taught is still in MEMORY.md until the next consolidation "
                       "is accepted (c, then Review).")

        def answered(yes: bool | None) -> None:
            if yes:
                self.forget_one(s.rollout_path)

        self.app.push_screen(ConfirmScreen("Forget this session?", detail, yes="Forget",
                                           danger=True), answered)

    @work(thread=True, group="sessions-action", name="forget", exit_on_error=False)
    def forget_one(self, key: str) -> None:
        self.engine.forget(key)
        self.notify("Session forgotten.", timeout=4)
        self.post_message(SessionsChanged())
        self.post_message(MemoryChanged("forget"))
