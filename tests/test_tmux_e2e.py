"""End to end: the real `memdeck demo` console script in a real terminal (tmux), driven by keys
the way a user drives it; what it shows is read back with `capture-pane`, what it did is read
from disk after it quit.

A tmux server of its own (`-L`, a config file of its own) keeps the user's tmux and its
environment out of the test; a shell around memdeck prints its exit status into the pane, and
`remain-on-exit` keeps the pane to read it. Polling with a deadline is the synchronisation:
memdeck is another process, there is no worker to wait for.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

WIDTH, HEIGHT = 120, 36
START_TIMEOUT = 60.0  # a cold CI machine compiles bytecode and builds the demo home first
STEP_TIMEOUT = 20.0
EXITED = re.compile(r"\[memdeck exited with status (\d+)\]")
TABLE_HEADER = re.compile(r"updated[▲▼]?\s+project\s+source\s+status")  # ▲▼: the sort
TABS = ("1 Sessions", "2 Raw memories", "3 Memory", "4 History", "5 Review", "6 Settings")


def _memdeck_script() -> Path:
    """The installed console script of the venv running the tests (`.venv/bin/memdeck`)."""
    script = Path(sys.executable).parent / "memdeck"
    assert script.exists(), f"no memdeck console script next to {sys.executable}; " \
                            "install the package (pip install -e '.[test]')"
    return script


def _tmux_or_skip() -> str:
    tmux = shutil.which("tmux")
    if tmux:
        return tmux
    if os.environ.get("CI"):
        pytest.fail("tmux is missing on this CI machine; .ci/run should have installed it")
    pytest.skip("tmux is not installed (apt-get install tmux; .ci/run installs it in CI)")


class Terminal:
    """One memdeck process in a detached tmux pane of WIDTH x HEIGHT on a private server."""

    def __init__(self, tmux: str, socket: str, config: Path) -> None:
        self.base = [tmux, "-L", socket, "-f", str(config)]
        self.target = "e2e"
        # COLUMNS/LINES (pytest-xdist's workers inherit them) would override the pane's size
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("TMUX") and k not in ("COLUMNS", "LINES")}
        if env.get("TERM", "dumb") == "dumb":  # CI runners often have none
            env["TERM"] = "xterm-256color"
        self.env = env

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.base, *args], env=self.env, capture_output=True,
                              text=True, check=check, timeout=30)

    def start(self, command: str) -> None:
        self.tmux("new-session", "-d", "-s", self.target, "-x", str(WIDTH), "-y", str(HEIGHT),
                  command)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.target, *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.target, "-l", text)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.target).stdout

    def pane(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", self.target, fmt).stdout.strip()

    def wait(self, what: str, ok: Callable[[str], bool], timeout: float = STEP_TIMEOUT) -> str:
        """Poll the screen until `ok(screen)`; fail with the last screen otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if ok(text):
                return text
            if EXITED.search(text) or self.pane("#{pane_dead}") == "1":
                pytest.fail(f"memdeck ended while waiting for {what}; last screen:\n{text}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} after {timeout:.0f} s; last screen:\n{text}")
            time.sleep(0.05)

    def exit_status(self, timeout: float = STEP_TIMEOUT) -> int:
        """The status the shell printed once memdeck ended."""
        deadline = time.monotonic() + timeout
        while not (ended := EXITED.search(text := self.screen())):
            if time.monotonic() > deadline:
                pytest.fail(f"memdeck did not end in {timeout:.0f} s; last screen:\n{text}")
            time.sleep(0.05)
        assert "Traceback" not in text, text
        return int(ended.group(1))

    def kill(self) -> None:
        """End the private server and everything in it; its socket file goes too."""
        socket = self.tmux("display-message", "-p", "#{socket_path}", check=False).stdout
        socket = socket.strip()
        self.tmux("kill-server", check=False)
        if socket:
            Path(socket).unlink(missing_ok=True)


def active_tab(screen: str) -> str | None:
    """The tab whose label the underline highlights: TabbedContent draws `╸━━━╺` around it."""
    lines = screen.splitlines()
    for i, line in enumerate(lines[:-1]):
        if TABS[0] in line and TABS[-1] in line:
            bar = lines[i + 1]
            left, right = bar.find("╸"), bar.find("╺")
            if left < 0 or right < 0:
                return None
            for tab in TABS:
                start = line.find(tab)
                if (start, start + len(tab)) == (left + 1, right):
                    return tab
    return None


def footer(screen: str) -> str:
    rows = [r for r in screen.splitlines() if r.strip()]
    return rows[-1] if rows else ""


def memdeck_json(*args: str) -> object:
    out = subprocess.run([str(_memdeck_script()), *args, "--json"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_memdeck_demo_in_a_real_terminal(tmp_path: Path) -> None:
    tmux = _tmux_or_skip()
    script = _memdeck_script()
    demo = tmp_path / "demo-home"
    config = tmp_path / "tmux.conf"
    config.write_text("set -g status off\n"  # all HEIGHT rows are memdeck's
                      "set -g remain-on-exit on\n"  # keep the pane to read the exit status
                      "set -g default-terminal screen-256color\n"
                      "set -g history-limit 100\n")
    # the isolated CODEX_HOME / XDG_* of tests/conftest.py, spelled out for the pane (the
    # private server inherits them too; a reused server would not)
    passed = {k: os.environ[k] for k in ("CODEX_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                                         "XDG_CACHE_HOME") if k in os.environ}
    memdeck = shlex.join(["env", *(f"{k}={v}" for k, v in passed.items()),
                          str(script), "demo", "--dir", str(demo)])
    # the shell reports memdeck's exit status in the pane: tmux's own `pane_dead_status`
    # depends on it catching SIGCHLD, which it was seen to miss now and then
    command = "sh -c " + shlex.quote(f'{memdeck}; echo "[memdeck exited with status $?]"')
    term = Terminal(tmux, f"memdeck-e2e-{uuid.uuid4().hex[:12]}", config)
    try:
        term.start(command)

        # the sessions table of the demo home
        # (the tab's underline is drawn a frame after the rest: the footer can come first)
        screen = term.wait("the sessions table, focused (footer offers Open), its tab underlined",
                           lambda s: "19 sessions" in s and "eligible" in s
                           and "Open" in footer(s) and active_tab(s) is not None, START_TIMEOUT)
        assert active_tab(screen) == "1 Sessions", "\n".join(screen.splitlines()[:4])
        assert "Upgrade Django" in screen and "Deploy the API" in screen, screen

        # keys typed in one burst (one write to the terminal, as a fast typist or a paste
        # gives them) all land: five pane switches, back to Sessions, two rows down
        term.keys("2", "3", "4", "5", "6", "1", "j", "j")
        screen = term.wait("the third row highlighted after the burst",
                           lambda s: active_tab(s) == TABS[0]
                           and "running: extraction running" in s)
        term.keys("5")
        term.wait("Review shown", lambda s: active_tab(s) == TABS[4])
        term.keys("1", "k", "k")  # one write again: the switch, then the keys for the table
        term.wait("the first row again", lambda s: active_tab(s) == TABS[0]
                  and "too_recent: idle 1.5 h" in s)

        # `/` and a word narrow the table
        term.keys("/")  # keys typed before the focus moved would go to the table: wait
        term.wait("the filter focused (footer without Open)", lambda s: "Open" not in footer(s))
        term.type("Django")
        screen = term.wait("a narrowed table", lambda s: "1 of 19" in s)
        assert "Upgrade Django" in screen and "Deploy the API" not in screen

        # Enter leaves the filter for the table, Enter again opens the transcript
        term.keys("Enter")
        term.wait("the table focused (footer offers Open)", lambda s: "Open" in footer(s))
        term.keys("Enter")
        screen = term.wait(
            "the transcript with role labels",
            lambda s: not TABLE_HEADER.search(s) and re.search(r"\buser\b", s) is not None
            and re.search(r"\bassistant\b", s) is not None)
        assert "Django" in screen

        # Escape goes back to the (still filtered) table
        term.keys("Escape")
        term.wait("the table again", lambda s: TABLE_HEADER.search(s) is not None
                  and "1 of 19" in s)

        # number keys switch panes; the underline moves to the pane's tab
        for key, tab in [("2", TABS[1]), ("3", TABS[2]), ("4", TABS[3]), ("5", TABS[4]),
                         ("6", TABS[5]), ("1", TABS[0])]:
            term.keys(key)
            term.wait(f"tab {tab!r} active", lambda s, tab=tab: active_tab(s) == tab)
        term.wait("the sessions table back", lambda s: "1 of 19" in s)

        # `c`: extract + consolidate on the offline backend, then Review is shown
        term.keys("c")
        screen = term.wait("the Review pane after extract + consolidate",
                           lambda s: active_tab(s) == TABS[4] and "ready for review" in s)

        # `q` quits: the process ends with status 0 and the terminal is the shell's again
        term.keys("q")
        assert term.exit_status() == 0
    finally:
        term.kill()

    # on disk: a pending proposal from the offline backend, the eligible sessions extracted
    proposals = memdeck_json("proposals", "--home", str(demo))
    assert isinstance(proposals, list)
    pending = [p for p in proposals if p["status"] == "pending"]
    assert len(pending) == 1 and pending[0]["backend"] == "offline"
    assert (demo / "memdeck" / "proposals" / pending[0]["id"]).is_dir()
    assert any(f["path"] == "MEMORY.md" for f in pending[0]["files"])
    sessions = memdeck_json("sessions", "--home", str(demo))
    assert isinstance(sessions, list)
    django = [s for s in sessions if "Upgrade Django" in (s.get("preview") or "")]
    assert [s["status"] for s in django] == ["extracted"]
    assert not [s for s in sessions if s["status"] == "eligible"]


def test_y_reaches_the_terminal_clipboard_and_E_hands_the_terminal_to_an_editor(
        tmp_path: Path) -> None:
    """Issue 23, item 9, in a real terminal: `y` sends the session id as OSC 52 (tmux with
    `set-clipboard on` keeps it as a buffer, as a terminal would on its clipboard), and `E`
    suspends the app, runs $EDITOR on the terminal and comes back with the change saved."""
    tmux = _tmux_or_skip()
    demo = tmp_path / "demo-home"
    config = tmp_path / "tmux.conf"
    config.write_text("set -g status off\nset -g remain-on-exit on\n"
                      "set -s set-clipboard on\nset -g default-terminal screen-256color\n")
    editor = tmp_path / "editor.sh"
    # an editor that needs the terminal: it reads a line typed at it, then appends it
    editor.write_text('#!/bin/sh\nprintf "editing %s, type a line: " "$1"\nread line\n'
                      'printf -- "- %s\\n" "$line" >> "$1"\n')
    editor.chmod(0o755)
    passed = {k: os.environ[k] for k in ("CODEX_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                                         "XDG_CACHE_HOME") if k in os.environ}
    memdeck = shlex.join(["env", f"EDITOR={editor}", "VISUAL=",
                          *(f"{k}={v}" for k, v in passed.items()),
                          str(_memdeck_script()), "demo", "--dir", str(demo)])
    command = "sh -c " + shlex.quote(f'{memdeck}; echo "[memdeck exited with status $?]"')
    term = Terminal(tmux, f"memdeck-e2e-{uuid.uuid4().hex[:12]}", config)
    try:
        term.start(command)
        term.wait("the sessions table", lambda s: "19 sessions" in s and "Open" in footer(s),
                  START_TIMEOUT)
        term.keys("y")
        screen = term.wait("the copy's toast", lambda s: "Copied session id" in s)
        copied = term.tmux("show-buffer", check=False).stdout
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f-]{27}", copied), (copied, screen)
        term.keys("3")
        term.wait("the Memory pane", lambda s: "memory_summary.md" in s and "Edit" in footer(s))
        term.keys("E")
        term.wait("the editor on the terminal", lambda s: "type a line:" in s)
        term.type("typed in my editor")
        term.keys("Enter")
        term.wait("the app back, the edit saved", lambda s: "Saved memory_summary.md" in s)
        summary = demo / "memories" / "memory_summary.md"
        assert summary.read_text().endswith("- typed in my editor\n")
        term.keys("q")
        assert term.exit_status() == 0
    finally:
        term.kill()
