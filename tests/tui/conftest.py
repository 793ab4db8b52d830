"""Fixtures for the app's tests: the demo home at a fixed time, an app that does not blink,
a fixed time zone, no animations."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memdeck.engine import Engine, demo_home
from memdeck.engine.clock import FixedClock

# 2026-11-20 12:00:00 UTC: every relative time in the demo home is measured from here
FIXED_NOW = 1795176000.0
SIZE = (120, 36)


async def settle(app: Any, pilot: Any) -> None:
    """Let the app finish what a key started: messages, workers, and what they set off."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


@pytest.fixture(autouse=True)
def _still_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def demo_engine(tmp_path: Path) -> Engine:
    """The bundled demo Codex home, built and read at FIXED_NOW."""
    clock = FixedClock(FIXED_NOW)
    path = demo_home(tmp_path / "demo-home", clock)
    return Engine.open(path, clock=clock)


@pytest.fixture
def make_app() -> Callable[..., Any]:
    """`make_app(engine, initial="sessions")`: the app as a user gets it, minus blinking and
    the watcher (tests drive changes themselves)."""
    from memdeck.tui.app import MemdeckApp

    def build(engine: Engine, **kwargs: Any) -> MemdeckApp:
        kwargs.setdefault("blink", False)
        kwargs.setdefault("home_label", "demo Codex home")  # tmp paths differ between runs
        return MemdeckApp(engine, **kwargs)

    return build
