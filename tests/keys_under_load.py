"""Keys typed while a pane is being built, in the real app in a real terminal (tmux), with
every core kept busy (issue 23, item 6). Used by tests/test_tmux_keys_under_load.py (a few
trials) and bench/keys_under_load.py (50, as the issue asks).

One trial is one fresh `memdeck` process on a copy of a home that has a consolidation waiting
for review, so Settings and Review are both built on their first visit:

1. `6`, then `5` 150 ms later (a fast typist): it must end on Review, its hunk list focused
   (the footer offers Accept), never on Settings;
2. `1` and back to `5`, three times (a pane visited before): Review focused each time;
3. `j` right after `5`: the key reaches the hunk list (the second hunk is selected).

A miss is any step that ends elsewhere: wrong tab, nothing focused (the footer without the
Review keys), or the `j` lost.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shlex
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.test_tmux_e2e import TABS, Terminal, active_tab, footer

SETTLE_S = 1.5  # a step's screen must hold this long unchanged before it is judged
STEP_S = 30.0  # a step that has not settled by then is a miss (a user would call it hung)
PACE_S = 0.15


@dataclass
class Trials:
    runs: int = 0
    checks: int = 0
    misses: list[str] = field(default_factory=list)


def prepare_home(where: Path) -> Path:
    """The demo home with its sessions extracted and a consolidation waiting for review."""
    from memdeck.engine import Engine, demo_home

    home = demo_home(where)
    engine = Engine.open(home)
    engine.extract(backend="offline")
    proposal = engine.consolidate("offline")
    assert proposal is not None, "the demo home gave nothing to consolidate"
    return home


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def every_core_busy() -> Iterator[int]:
    """One spinning process per core until the block ends."""
    n = os.cpu_count() or 1
    procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield n
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.join()


def _settled(term: Terminal, timeout: float = STEP_S) -> str:
    """The screen once it has not changed for SETTLE_S (or the last one at the deadline)."""
    deadline = time.monotonic() + timeout
    last, since = term.screen(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = term.screen()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= SETTLE_S:
            break
    return last


def _review_focused(screen: str) -> bool:
    return active_tab(screen) == TABS[4] and "Accept" in footer(screen)


def run_trials(n: int, work: Path, memdeck: Path, env: dict[str, str]) -> Trials:
    """`n` trials (module docstring) of the `memdeck` console script, on copies of one
    prepared home under `work`."""
    base = prepare_home(work / "base")
    config = work / "tmux.conf"
    config.write_text("set -g status off\nset -g remain-on-exit on\n"
                      "set -g default-terminal screen-256color\n")
    result = Trials()

    def check(trial: int, what: str, ok: bool, screen: str) -> None:
        result.checks += 1
        if not ok:
            tab = active_tab(screen)
            result.misses.append(f"trial {trial}: {what}: tab {tab!r}, footer "
                                 f"{footer(screen).strip()!r}")

    for trial in range(1, n + 1):
        home = work / f"home-{trial}"
        shutil.copytree(base, home, symlinks=True)
        passed = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = "sh -c " + shlex.quote(
            f"env {passed} {shlex.quote(str(memdeck))} --home {shlex.quote(str(home))}; "
            'echo "[memdeck exited with status $?]"')
        term = Terminal(shutil.which("tmux") or "tmux", f"memdeck-keys-{uuid.uuid4().hex[:10]}",
                        config)
        try:
            term.start(command)
            term.wait("the sessions table", lambda s: "sessions" in s and "Open" in footer(s)
                      and active_tab(s) == TABS[0], 120.0)
            term.keys("6")
            time.sleep(PACE_S)
            term.keys("5")
            screen = _settled(term)
            check(trial, "6 then 5 on first visits", _review_focused(screen), screen)
            for again in range(3):
                term.keys("1")
                term.wait("Sessions again", lambda s: active_tab(s) == TABS[0])
                term.keys("5")
                screen = _settled(term)
                check(trial, f"Review visited again ({again + 1})", _review_focused(screen),
                      screen)
            before = _selected_hunk(screen)
            term.keys("1")
            term.wait("Sessions again", lambda s: active_tab(s) == TABS[0])
            term.keys("5", "j")
            screen = _settled(term)
            check(trial, "j right after 5", _review_focused(screen)
                  and before is not None and _selected_hunk(screen) not in (None, before),
                  screen)
            term.keys("q")
            deadline = time.monotonic() + STEP_S
            while term.pane("#{pane_dead}") != "1":
                assert time.monotonic() < deadline, "memdeck did not quit after q"
                time.sleep(0.1)
        finally:
            term.kill()
            shutil.rmtree(home, ignore_errors=True)
        result.runs += 1
    return result


def _selected_hunk(screen: str) -> str | None:
    """The hunk list's position as the Review pane shows it: `hunk 1 of 8` gives "1"."""
    import re

    m = re.search(r"hunk (\d+) of (\d+)", screen)
    return m.group(1) if m else None
