#!/usr/bin/env python3
"""The memdeck app (or a bare Textual app) in a child process on a 120x36 pseudo-terminal,
reporting moments as JSON lines on a pipe; and the parent's side: spawning it, writing keys to
the pty, reading the moments. Used by bench/tui.py, which explains the figures, and by
bench/app_scenarios.py (what a user does in the app, timed).

The child is started as memdeck starts the app (`Engine.open(home)`, `MemdeckApp(engine,
watch=True).run()`, Textual's Linux driver drawing on the pty); it subclasses the app only to
report when something was handled and the next frame drawn (`call_after_refresh`). Both
processes read `time.perf_counter`, CLOCK_MONOTONIC on Linux: one clock for both.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLS, ROWS = 120, 36
PANES = ("sessions", "memories", "memory", "history", "review", "settings")
PAGE_DOWN = b"\x1b[6~"
PAINT_TIMEOUT_S = 300
FAILED_GRACE_S = 10.0  # after a worker failed, how long a paint may still come
PACE_S = 0.15  # between pane keys: a fast human, and time for a pane's first load to start


# ======================================================================================
# the child: the app on a pty, reporting moments on a pipe
# ======================================================================================


def child(args: argparse.Namespace) -> int:
    fd = args.report_fd

    def emit(ev: str, **kw: object) -> None:
        os.write(fd, (json.dumps({"ev": ev, "t": time.perf_counter(), **kw}) + "\n").encode())

    emit("started")  # the interpreter is up; nothing of Textual or memdeck is imported yet
    profiler = None
    threads: list = []
    if args.profile_out:
        import cProfile
        import threading

        profiler = cProfile.Profile()
        profiler.enable()
        if args.profile_threads:  # every worker thread under its own profiler, merged at exit
            run = threading.Thread.run

            def profiled_run(self: threading.Thread) -> None:
                pr = cProfile.Profile()
                threads.append(pr)
                pr.enable()
                try:
                    run(self)
                finally:
                    pr.disable()

            threading.Thread.run = profiled_run  # type: ignore[method-assign]
    if args.child == "memdeck":  # as `memdeck` starts the app (tui/cli/home.py `cmd_tui`)
        from memdeck.tui import collector

        collector.hold()
    app = _bare_app(emit, args) if args.child == "bare" else _memdeck_app(emit, args)
    app.run()
    import resource

    emit("exited", rss_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
         children_rss_kb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    if profiler is not None:
        import pstats

        profiler.disable()
        profiler.dump_stats(args.profile_out)
        for i, pr in enumerate(threads):
            pr.disable()  # a thread still running (the watcher) stops counting here
            pr.dump_stats(f"{args.profile_out}.thread{i}")
        if threads:
            pstats.Stats(args.profile_out).dump_stats(f"{args.profile_out}.main")
            merged = pstats.Stats(args.profile_out)
            for i in range(len(threads)):
                merged.add(f"{args.profile_out}.thread{i}")
            merged.dump_stats(args.profile_out)
    if args.child == "memdeck":  # and ends as `memdeck` ends (tui/app.py `leave`)
        from memdeck.tui.app import leave

        leave(0)
    return 0


def _state() -> dict[str, object]:
    import resource

    return {"openai": "openai" in sys.modules, "git": "git" in sys.modules,
            "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def _bare_app(emit, args):  # noqa: ANN001, ANN202 - imports stay inside the child
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("Hello from a bare Textual app.")

        def on_mount(self) -> None:
            self.call_after_refresh(self.painted)

        def painted(self) -> None:
            emit("painted", **_state())
            if args.quit_after_paint:
                self.exit()

    return Bare()


def _memdeck_app(emit, args):  # noqa: ANN001, ANN202
    from textual import on
    from textual.widgets import TabbedContent

    import memdeck.tui.app as tui_app
    from memdeck.engine import Engine
    from memdeck.tui.messages import WorkFailed
    from memdeck.tui.panes.sessions import SessionsPane
    from memdeck.tui.widgets.session_table import SessionTable

    emit("imported")  # Textual, the app and the engine
    styles = Path(tui_app.__file__).parent

    class TimedApp(tui_app.MemdeckApp):
        CSS_PATH = [str(styles / p) for p in tui_app.MemdeckApp.CSS_PATH]  # not bench/'s
        _painted = False

        def on_mount(self) -> None:  # Textual calls MemdeckApp.on_mount as well, first
            # every pane composed, not loaded; the rows already on screen (the last listing's
            # head, when memdeck kept one: engine/index/listing_head.py)
            self.call_after_refresh(
                lambda: emit("first_frame", shown=len(self.query_one(SessionTable).rows)))

        @on(SessionsPane.Loaded)
        def _bench_loaded(self, event: SessionsPane.Loaded) -> None:
            self.call_after_refresh(self._bench_drawn, len(event.sessions), event.final)

        def _bench_drawn(self, sessions: int, final: bool) -> None:
            shown = len(self.query_one(SessionTable).rows)
            extracted = sum(getattr(s, "status", "") == "extracted"
                            for s in self.query_one(SessionsPane).sessions)
            emit("painted" if final else "first_rows", sessions=sessions, shown=shown,
                 extracted=extracted, head=self.listing_head is not None, **_state())
            if final and not self._painted:
                self._painted = True
                if args.quit_after_paint:
                    self.exit()

        @on(WorkFailed)
        def _bench_failed(self, event: WorkFailed) -> None:
            error = event.error
            text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) \
                else str(error)
            emit("failed", what=event.what, error=text)

        @on(TabbedContent.TabActivated)
        def _bench_tab(self, event: TabbedContent.TabActivated) -> None:
            pane = self.built(str(event.pane.id))  # stale: its data is reloaded on this visit
            # (or still being reloaded: the Sessions pane reloads while hidden)
            stale = pane is None or pane.stale or bool(getattr(pane, "_loading", False))
            extra: dict[str, int] = {}
            if isinstance(pane, SessionsPane):  # what the rows say as the tab is drawn
                extra = {"shown": len(self.query_one(SessionTable).rows), "extracted": sum(
                    getattr(s, "status", "") == "extracted" for s in pane.sessions)}
            self.call_after_refresh(emit, "tab", pane=event.pane.id, stale=stale, **extra)

        # each pane's "data loaded" messages, handled by the pane (then bubbled here), then
        # drawn; by name, so that the panes' modules are not imported before the app does
        def _bench_pane(self, pane: str, what: str, n: int) -> None:
            self.call_after_refresh(emit, "loaded", pane=pane, what=what, n=n)

        def on_memories_pane_loaded(self, event) -> None:  # noqa: ANN001
            self._bench_pane("memories", "Loaded", len(event.rows))

        def on_memory_pane_loaded(self, event) -> None:  # noqa: ANN001
            self._bench_pane("memory", "Loaded", len(event.files))

        def on_memory_pane_file_loaded(self, event) -> None:  # noqa: ANN001
            self._bench_pane("memory", "FileLoaded", 1)

        def on_history_pane_loaded(self, event) -> None:  # noqa: ANN001
            self._bench_pane("history", "Loaded", len(event.entries))

        def on_history_pane_diff_loaded(self, event) -> None:  # noqa: ANN001
            self._bench_pane("history", "DiffLoaded", 1)

        def on_review_pane_loaded(self, event) -> None:  # noqa: ANN001
            self._bench_pane("review", "Loaded", 1)

        def on_settings_pane_loaded(self, event) -> None:  # noqa: ANN001
            self._bench_pane("settings", "Loaded", len(event.settings))

        def on_pipeline_finished(self, event) -> None:  # noqa: ANN001
            self.call_after_refresh(emit, "run_done", summary=event.summary,
                                    cancelled=event.cancelled)

        def on_sessions_pane_detail_loaded(self, event) -> None:  # noqa: ANN001
            # the pane's handler has mounted the first batch; once it is composed, a frame
            from memdeck.tui.widgets.sessions.transcript import TranscriptView

            view = self.query_one(TranscriptView)
            path = str(event.detail.session.rollout_path)
            entries = len(event.detail.entries)

            def drawn(tries: int = 0) -> None:
                if entries and not view.query(".turn") and tries < 100:
                    self.call_after_refresh(drawn, tries + 1)
                    return
                self.call_after_refresh(emit, "transcript", path=path, entries=entries,
                                        shown=len(view.query(".turn")))

            self.call_after_refresh(drawn)

        @on(SessionTable.Highlighted)
        def _bench_cursor(self) -> None:
            table = self.query_one(SessionTable)
            self.call_after_refresh(lambda: emit("cursor", cursor=table.cursor,
                                                 rows=len(table.rows)))

    engine = Engine.open(args.home)  # as tui/app.py `run_app` starts it
    return TimedApp(engine, watch=not args.no_watch, listing_head=engine.listing_head())


# ======================================================================================
# the parent: spawning children on a pty, writing keys, reading moments
# ======================================================================================


class Child:
    """One child process on a fresh 120x36 pty; its report pipe read into a queue."""

    def __init__(self, kind: str, home: Path, env: dict[str, str], *extra: str) -> None:
        import fcntl
        import pty
        import queue
        import struct
        import subprocess
        import termios
        import threading

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        r, w = os.pipe()
        argv = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--home",
                str(home), "--report-fd", str(w), *extra]
        self.events: queue.Queue[dict] = queue.Queue()
        self.log: list[dict] = []
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                                     pass_fds=(w,), env=env, cwd=ROOT, start_new_session=True)
        os.close(slave)
        os.close(w)
        self.screen_bytes = 0

        def drain() -> None:  # the child blocks if nobody reads what it draws
            while True:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    return
                if not data:
                    return
                self.screen_bytes += len(data)

        def report() -> None:
            with os.fdopen(r, "rb") as f:
                for line in f:
                    self.events.put(json.loads(line))

        threading.Thread(target=drain, daemon=True).start()
        threading.Thread(target=report, daemon=True).start()

    def wait_for(self, match, timeout: float) -> dict | None:  # noqa: ANN001
        import queue

        deadline = time.perf_counter() + timeout
        while (left := deadline - time.perf_counter()) > 0:
            try:
                ev = self.events.get(timeout=left)
            except queue.Empty:
                break
            self.log.append(ev)
            if match(ev):
                return ev
        return None

    def pending(self) -> list[dict]:
        """What the child reported since the last look, without waiting."""
        import queue

        out = []
        while True:
            try:
                out.append(self.events.get_nowait())
            except queue.Empty:
                self.log += out
                return out

    def key(self, data: bytes) -> float:
        t = time.perf_counter()
        os.write(self.master, data)
        return t

    def finish(self, timeout: float = 30.0) -> tuple[float | None, dict | None]:
        """(seconds until the process ended or None when it had to be killed, its exit
        report)."""
        import subprocess

        t0 = time.perf_counter()
        try:
            self.proc.wait(timeout=timeout)
            took: float | None = time.perf_counter() - t0
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            took = None
        exited = self.wait_for(lambda e: e["ev"] == "exited", 1.0)
        os.close(self.master)
        return took, exited


def paint_once(kind: str, home: Path, env: dict[str, str], *extra: str) -> dict:
    """One start to first full paint; `paint` is None when the app reported a failed worker
    (`failed` says which) or never painted within the time allowed."""
    c = Child(kind, home, env, "--quit-after-paint", *extra)
    painted = c.wait_for(lambda e: e["ev"] in ("painted", "failed"), PAINT_TIMEOUT_S)
    failed = []
    while painted is not None and painted["ev"] == "failed":  # another worker's? wait a bit
        failed.append(f"{painted['what']} failed: {painted['error']}")
        painted = c.wait_for(lambda e: e["ev"] in ("painted", "failed"), FAILED_GRACE_S)
    if painted is None:
        failed.append(f"no full paint within {FAILED_GRACE_S if failed else PAINT_TIMEOUT_S} s"
                      + (" of that" if failed else ""))
    ok = painted is not None and painted["ev"] == "painted"
    if not ok:
        c.key(b"q")
    _, exited = c.finish(timeout=30.0 if ok else 5.0)
    marks = {e["ev"]: e["t"] - c.t_spawn for e in c.log}
    # the first frame with session rows in it: the head of the last listing, or the listing
    with_rows = [e["t"] - c.t_spawn for e in c.log if e["ev"] in ("first_rows", "painted")
                 or (e["ev"] == "first_frame" and e.get("shown"))]
    return {"paint": marks["painted"] if ok else None, "marks": marks,
            "rows_at": min(with_rows) if ok and with_rows else None,
            "painted": painted if ok else {}, "failed": failed, "exited": exited or {}}


def child_env() -> dict[str, str]:
    import tempfile

    env = dict(os.environ)
    # as an installed memdeck runs: with a bytecode cache (bench/index.py's, shared)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "memdeck-bench-pycache")
    env.update(TERM="xterm-256color", COLORTERM="truecolor")
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TEXTUAL_ANIMATIONS"):
        env.pop(var, None)
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="the child of bench/tui.py")
    ap.add_argument("--child", choices=("bare", "memdeck"), required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--report-fd", type=int, required=True)
    ap.add_argument("--quit-after-paint", action="store_true")
    ap.add_argument("--no-watch", action="store_true")
    ap.add_argument("--profile-out")
    ap.add_argument("--profile-threads", action="store_true",
                    help="profile the worker threads too (merged into --profile-out)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))  # the `tui` package, not bench/tui.py beside this file
    return child(args)


if __name__ == "__main__":
    raise SystemExit(main())
