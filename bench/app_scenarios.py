"""What a user does in the memdeck app on a pty, timed (bench/app_pty.py's `Child`): paging,
first visits of the panes, switching panes, opening a transcript, a run then back to Sessions.
bench/tui.py explains the figures."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from app_pty import PACE_S, PAGE_DOWN, PAINT_TIMEOUT_S, PANES, Child

# what a pane's first visit waits for: its Loaded message handled and drawn, then (when that
# listed something) the first item it opens by itself (Memory: the file, History: the diff)
FOLLOW_UP = {"memory": "FileLoaded", "history": "DiffLoaded"}
LOAD_TIMEOUT_S = 10.0


def started(home: Path, env: dict[str, str], *extra: str) -> tuple[Any, dict | None]:
    """A memdeck child painted in full and its "painted" moment; or (why not, None), the
    child already quit."""
    c = Child("memdeck", home, env, *extra)
    painted = c.wait_for(lambda e: e["ev"] in ("painted", "failed"), PAINT_TIMEOUT_S)
    if painted is None or painted["ev"] != "painted":
        c.key(b"q")
        c.finish(timeout=5.0)
        return (painted["error"] if painted else "no full paint"), None
    return c, painted


def first_visits(c: Child) -> list[dict]:
    """Keys 2..6 once each, waiting for each pane's data to be drawn before the next key:
    key written -> `TabActivated` drawn (`tab`), and -> the pane's Loaded drawn (`loaded`)."""
    visits = []
    for i in range(2, 7):
        pid = PANES[i - 1]
        c.pending()
        t0 = c.key(str(i).encode())
        tab = c.wait_for(lambda e, pid=pid: e["ev"] == "tab" and e["pane"] == pid, 3.0)
        got = c.wait_for(lambda e, pid=pid: e["ev"] == "loaded" and e["pane"] == pid
                         and e["what"] == "Loaded", LOAD_TIMEOUT_S)
        what = "Loaded"
        if got is not None and got["n"] and pid in FOLLOW_UP:
            more = c.wait_for(lambda e, pid=pid: e["ev"] == "loaded" and e["pane"] == pid
                              and e["what"] == FOLLOW_UP[pid], LOAD_TIMEOUT_S)
            got, what = more or got, (FOLLOW_UP[pid] if more else "Loaded")
        visits.append({"pane": pid, "tab": tab["t"] - t0 if tab else None,
                       "loaded": got["t"] - t0 if got else None, "what": what,
                       "n": got["n"] if got else 0})
        time.sleep(PACE_S)
    return visits


def open_transcript(c: Child, rollout: str) -> dict:
    """On Sessions: `/`, the session's id, Enter (the table), then Enter timed: key written ->
    the TranscriptView has drawn its first batch of entries."""
    sid = Path(rollout).stem[-36:]  # rollout-<time>-<uuid>.jsonl
    for _ in range(3):  # a focused field elsewhere may take the key: Esc leaves it
        c.pending()
        c.key(b"1")
        if c.wait_for(lambda e: e["ev"] == "tab" and e["pane"] == "sessions", 2.0):
            break
        c.key(b"\x1b")
        time.sleep(0.3)
    time.sleep(0.5)
    c.key(b"/")
    time.sleep(0.2)
    c.key(sid.encode())
    time.sleep(1.5)  # one row left: its cursor event
    c.key(b"\r")  # Input.Submitted: the table takes the focus
    time.sleep(0.5)
    c.pending()
    t0 = c.key(b"\r")
    ev = c.wait_for(lambda e: e["ev"] == "transcript", 30.0)
    if ev is None:
        return {"took": None, "error": "no transcript drawn within 30 s"}
    if ev["path"] != rollout:
        return {"took": None, "error": f"opened {ev['path']}, not {rollout}"}
    return {"took": ev["t"] - t0, "entries": ev["entries"], "shown": ev["shown"]}


def interact(home: Path, env: dict[str, str], rounds: int, settle: float,
             transcript: str | None = None, *extra: str) -> dict:
    """One warm memdeck: page through the table, visit each pane once (timing its first
    load), switch panes for `rounds` rounds, open the `transcript` rollout, quit. `failed` is
    set when the table was never painted."""
    c, painted = started(home, env, *extra)
    if painted is None:
        return {"failed": c}
    time.sleep(settle)  # the watcher's first round (re-index, history snapshot) runs now
    pages: list[float] = []  # first, while the table has the focus it starts with
    rows = painted.get("shown", 0)
    cursor = 0
    while cursor < rows - 1:
        c.pending()  # nothing reported earlier may count as this key's answer
        t0 = c.key(PAGE_DOWN)
        ev = c.wait_for(lambda e, at=cursor: e["ev"] == "cursor" and e["cursor"] > at, 3.0)
        if ev is None:
            break
        pages.append(ev["t"] - t0)
        cursor = ev["cursor"]
    visits = first_visits(c)
    switches: list[tuple[str, float | None, bool]] = []
    for _ in range(rounds):
        for i in (1, 2, 3, 4, 5, 6):  # from the last pane visited (6) to 1 first
            pid = PANES[i - 1]
            c.pending()
            t0 = c.key(str(i).encode())
            ev = c.wait_for(lambda e, pid=pid: e["ev"] == "tab" and e["pane"] == pid, 3.0)
            time.sleep(PACE_S)
            later = [e["pane"] for e in c.pending() if e["ev"] == "tab"]
            stayed = ev is not None and (not later or later[-1] == pid)  # no bounce back
            switches.append((pid, (ev["t"] - t0) if ev else None, stayed))
    opened = open_transcript(c, transcript) if transcript else None
    t_quit = c.key(b"q")
    took, exited = c.finish()
    return {"switches": switches, "pages": pages, "cursor": cursor, "rows": rows,
            "visits": visits, "transcript": opened,
            "quit": (time.perf_counter() - t_quit) if took is not None else None,
            "exited": exited or {}, "painted": painted, "failed": None}


def run_then_sessions(home: Path, env: dict[str, str], settle: float, *extra: str,
                      run_timeout: float = 900.0) -> dict:
    """memdeck on `home`: `c` (extract + consolidate, the offline backend), wait for the run's
    end (the app then shows Review when a proposal waits), then `1` timed: key written -> the
    Sessions pane shown with a listing loaded after the key drawn (when the pane was stale; a
    pane already fresh: its TabActivated drawn)."""
    c, painted = started(home, env, *extra)
    if painted is None:
        return {"failed": c}
    time.sleep(settle)
    t_run = c.key(b"c")
    done = c.wait_for(lambda e: e["ev"] in ("run_done",), run_timeout)
    out: dict = {"failed": None, "run_s": (done["t"] - t_run) if done else None,
                 "summary": done["summary"] if done else "no end within the time allowed"}
    if done is not None:
        time.sleep(1.0)  # the user reads the toast and the Review pane
        tab_now = [e for e in c.pending() if e["ev"] == "tab"]
        out["before"] = tab_now[-1]["pane"] if tab_now else "sessions"
        t0 = c.key(b"1")
        tab = c.wait_for(lambda e: e["ev"] == "tab" and e["pane"] == "sessions", 3.0)
        out["tab"] = tab["t"] - t0 if tab else None
        out["stale"] = bool(tab and tab.get("stale"))
        shown = c.wait_for(lambda e: e["ev"] == "painted", 30.0) if out["stale"] else tab
        out["took"] = shown["t"] - t0 if shown else None
        out["extracted"] = shown.get("extracted") if shown else None
        out["rows"] = shown.get("shown") if shown else None
    c.key(b"q")
    c.finish()
    return out
