"""The interactive Codex TUI in a detached tmux pane on a private tmux server.

    result = run_tui(home, server, ["first", "second"], expect=["reply 1", "reply 2"])
    result.screens[i]        # scrollback + pane after turn i ended
    result.final_screen, result.exit_status, result.stderr

or, for finer control, `TuiSession(home, server)` with `wait_ready()`, `turn(prompt, expect)`,
`screen()`, `type(text)`, `quit()`, `close()` (always call close: it kills the tmux server,
runs `codex app-server daemon stop` and SIGKILLs, by pid, any process left with this
CODEX_HOME).

Measured on 0.171.0: with an `env_key` provider the TUI shows no trust, onboarding or login
screen; the composer (`›`) is ready ~1 s after start; a turn ends with a `Worked for …` line
and shows `esc to interrupt` while busy; a burst of keys is taken as a paste, so the prompt is
typed, then Enter is sent 0.3 s later. The TUI sends one extra thread-title request per
session (kind "title" in the fake server), which never takes a scripted turn reply.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .fake_responses import FakeResponses
from .runner import (
    codex_env,
    config_flags,
    kill_codex_processes,
    provider_flags,
    require_codex,
    stop_app_server_daemon,
)


@dataclass
class TuiResult:
    screens: list[str] = field(default_factory=list)  # scrollback+pane after each turn
    final_screen: str = ""  # after /quit
    stderr: str = ""  # what Codex wrote to stderr (redirected to a file)
    exit_status: int | None = None  # the TUI's exit status, None if it had to be killed


TURN_DONE = "Worked for"  # the TUI prints "Worked for <1s • 00:03" when a turn ends
BUSY = "esc to interrupt"


class TuiSession:
    """One interactive `codex` in a detached tmux pane on a private tmux server."""

    def __init__(self, home: Path, server: FakeResponses, *,
                 extra_config: Mapping[str, Any] | Iterable[str] = (),
                 extra_args: Sequence[str] = (), cwd: Path | None = None,
                 width: int = 120, height: int = 40) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            if os.environ.get("CI"):
                pytest.fail("tmux is missing on this CI machine; .ci/run installs it",
                            pytrace=False)
            pytest.skip("tmux is not installed (apt-get install tmux)")
        binary = require_codex()
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.work = cwd or home.parent / "codex-work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.stderr_path = home.parent / f"codex-tui-{uuid.uuid4().hex[:6]}.stderr"
        self.socket = f"memdeck-codex-{uuid.uuid4().hex[:10]}"
        conf = home.parent / "codex-tmux.conf"
        conf.write_text("set -g remain-on-exit on\nset -g history-limit 20000\n")
        self.base = [tmux, "-L", self.socket, "-f", str(conf)]
        env = codex_env(home, {"TERM": "xterm-256color"})
        cmd = [str(binary), *provider_flags(server), *config_flags(extra_config), *extra_args]
        shell = (f"{shlex.join(cmd)} 2>{shlex.quote(str(self.stderr_path))}; "
                 "echo \"[codex exited with status $?]\"")
        env_args = [a for k in ("CODEX_HOME", "HOME", "FAKE_KEY", "TERM", "NO_COLOR", "PATH",
                                "RUST_LOG")
                    for a in ("-e", f"{k}={env[k]}")]
        subprocess.run([*self.base, "new-session", "-d", "-s", "codex", "-x", str(width),
                        "-y", str(height), "-c", str(self.work), *env_args, shell],
                       check=True, env=env, timeout=20)
        self.socket_path = subprocess.run(
            [*self.base, "display-message", "-p", "#{socket_path}"], capture_output=True,
            text=True, timeout=10).stdout.strip()

    def screen(self, history: bool = True) -> str:
        args = [*self.base, "capture-pane", "-p", "-J", "-t", "codex"]
        if history:
            args += ["-S", "-"]
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout

    def wait(self, pred: Any, timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        while True:
            s = self.screen()
            if pred(s):
                return s
            if time.monotonic() >= deadline:
                raise AssertionError(f"codex TUI: timed out after {timeout:g}s waiting for "
                                     f"{what}; screen:\n{s[-3000:]}\nstderr:\n"
                                     f"{self.stderr()[-2000:]}")
            time.sleep(0.2)

    def type(self, text_: str) -> None:
        subprocess.run([*self.base, "send-keys", "-t", "codex", "-l", text_], check=True,
                       timeout=10)
        time.sleep(0.3)  # the composer treats a fast key burst as a paste
        subprocess.run([*self.base, "send-keys", "-t", "codex", "Enter"], check=True,
                       timeout=10)

    def wait_ready(self, timeout: float = 30.0) -> str:
        return self.wait(lambda s: "OpenAI Codex" in s and "›" in s, timeout, "the composer")

    def turn(self, prompt: str, expect: str | None = None, timeout: float = 30.0) -> str:
        """Send one prompt; wait until the turn ended (and `expect` is on screen)."""
        before = self.screen().count(TURN_DONE)
        self.type(prompt)
        self._submitted(before)
        return self.wait(lambda s: s.count(TURN_DONE) > before and BUSY not in
                         self.screen(history=False) and (expect is None or expect in s),
                         timeout, f"the reply to {prompt!r}"
                         + (f" showing {expect!r}" if expect else ""))

    def _submitted(self, before: int, tries: int = 3) -> None:
        """An Enter sent while the composer was still taking the typed text can be lost (seen
        on a loaded CI machine: the prompt stayed in the composer). While no turn has started
        or ended, press Enter again; on an empty composer Enter does nothing."""
        for _ in range(tries):
            time.sleep(2.0)
            live = self.screen(history=False)
            if BUSY in live or self.screen().count(TURN_DONE) > before:
                return
            subprocess.run([*self.base, "send-keys", "-t", "codex", "Enter"], check=True,
                           timeout=10)

    def quit(self, timeout: float = 20.0) -> tuple[str, int | None]:
        self.type("/quit")
        try:
            s = self.wait(lambda s: "[codex exited with status" in s, timeout, "/quit")
        except AssertionError:
            return self.screen(), None
        tail = s.rsplit("[codex exited with status", 1)[1]
        return s, int(tail.split("]", 1)[0].strip())

    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        """Kill the tmux server, stop Codex's app-server daemon, kill leftovers by pid."""
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=10)
        if self.socket_path:  # tmux leaves its socket file behind
            Path(self.socket_path).unlink(missing_ok=True)
        stop_app_server_daemon(self.home)
        kill_codex_processes(self.home)


def run_tui(home: Path, server: FakeResponses, prompts: Sequence[str], *,
            expect: Sequence[str | None] | None = None,
            extra_config: Mapping[str, Any] | Iterable[str] = (),
            extra_args: Sequence[str] = (), cwd: Path | None = None,
            turn_timeout: float = 30.0) -> TuiResult:
    """Start the TUI in tmux, send each prompt as one turn (waiting for its end and for
    `expect[i]` on screen), `/quit`, stop the app-server daemon, kill leftovers."""
    session = TuiSession(home, server, extra_config=extra_config, extra_args=extra_args,
                         cwd=cwd)
    result = TuiResult()
    try:
        session.wait_ready()
        for i, prompt in enumerate(prompts):
            want = expect[i] if expect else None
            result.screens.append(session.turn(prompt, want, turn_timeout))
        result.final_screen, result.exit_status = session.quit()
    finally:
        result.stderr = session.stderr()
        session.close()
    return result
