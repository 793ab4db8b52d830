"""Run the real `memdeck` command in its own process, optionally killed (SIGKILL, as
`kill -9`) at a named step of a memory-folder change (engine/crash_points.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

KILLED = -signal.SIGKILL


def _env(crash_at: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MEMDECK_CRASH_AT", "MEMDECK_PAUSE_AT", "MEMDECK_PAUSE_DIR")}
    if crash_at:
        env["MEMDECK_CRASH_AT"] = crash_at
    return env


def memdeck_argv(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "memdeck.tui.cli", "--home", str(home), *args]


def run_memdeck(home: Path, *args: str, crash_at: str | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(memdeck_argv(home, *args), capture_output=True, text=True,
                          env=_env(crash_at), timeout=timeout)


def run_engine(home: Path, call: str, *, crash_at: str | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`Engine.open(home).<call>` in its own process (for changes only the app makes: an
    edit, a note)."""
    code = f"from memdeck.engine import Engine; e = Engine.open({str(home)!r}); e.{call}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=_env(crash_at), timeout=timeout)


class Paused:
    """A memdeck command started with `MEMDECK_PAUSE_AT`: `wait(step)` until it reaches a
    step, do something to the folder, `resume(step)`, then `finish()`."""

    def __init__(self, argv: list[str], steps: list[str], pause_dir: Path) -> None:
        pause_dir.mkdir(parents=True, exist_ok=True)
        env = _env(None) | {"MEMDECK_PAUSE_AT": ",".join(steps),
                            "MEMDECK_PAUSE_DIR": str(pause_dir)}
        self.dir = pause_dir
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)

    def wait(self, step: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not (self.dir / step).exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"ended before {step}: {self.proc.stderr.read()}")  # type: ignore[union-attr]
            if time.monotonic() > deadline:
                raise AssertionError(f"never reached {step}")
            time.sleep(0.01)

    def resume(self, step: str) -> None:
        (self.dir / step).unlink()

    def finish(self, timeout: float = 120) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err


def leftovers(home: Path) -> list[str]:
    """What a finished change must not leave: journals, staging, temp files, git locks."""
    md = home / "memdeck"
    found = [p for p in (md / "change.journal", md / "accept.journal", md / "swap.journal")
             if p.exists()]
    if (md / "staging").is_dir():
        found += list((md / "staging").iterdir())
    found += list(md.glob("history*.git/*.lock")) + list(md.glob("backups/.*.tmp"))
    for root in home.glob("memories*"):
        found += [p for p in root.rglob("*.tmp") if ".git" not in p.parts]
    found += list(home.glob(".memories*"))
    return [str(p.relative_to(home)) for p in found]
