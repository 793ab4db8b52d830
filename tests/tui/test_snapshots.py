"""How the app looks: the Sessions pane, a transcript, help, a run in progress.

Deterministic: the demo home at a fixed time, UTC, 120×36, no blinking, no animations.
The other panes' snapshots live beside their Pilot tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from llm_server import json_reply

from memdeck.tui.widgets.session_table import SessionTable
from tests.tui import stable_demo
from tests.tui.conftest import SIZE

stable_engine = stable_demo.stable_engine  # fixture: the demo home at a fixed path


async def _ready(pilot: Any) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_sessions_table(demo_engine, make_app, snap_compare) -> None:
    assert snap_compare(make_app(demo_engine), terminal_size=SIZE, run_before=_ready)


def test_sessions_filtered_by_status(demo_engine, make_app, snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await _ready(pilot)
        pilot.app.query_one("#status-filter").value = "extracted"
        await pilot.press("down")
        await pilot.pause()

    assert snap_compare(make_app(demo_engine), terminal_size=SIZE, run_before=run_before)


def test_transcript_of_a_session(stable_engine, make_app, snap_compare) -> None:
    """The header names the rollout's whole path: the home is at a fixed one."""

    async def run_before(pilot: Any) -> None:
        await _ready(pilot)
        table = pilot.app.query_one(SessionTable)
        table.cursor = next(i for i, s in enumerate(table.rows) if "Django" in s.preview)
        await pilot.press("enter")
        await _ready(pilot)

    assert snap_compare(make_app(stable_engine), terminal_size=SIZE, run_before=run_before)


def test_help(demo_engine, make_app, snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await _ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(make_app(demo_engine), terminal_size=SIZE, run_before=run_before)


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    g = threading.Event()
    yield g
    g.set()


def test_run_in_progress(demo_engine, make_app, snap_compare, llm_server, gate) -> None:
    demo_engine.config_set("memdeck.base_url", llm_server.url)
    demo_engine.config_set("memdeck.max_retries", "0")
    llm_server.handler = lambda body: (gate.wait(15), json_reply({  # held past the screenshot
        "rollout_summary": "s", "rollout_slug": "s", "raw_memory": "r"}))[1]

    async def run_before(pilot: Any) -> None:
        await _ready(pilot)
        await pilot.press("c")
        for _ in range(500):
            await pilot.pause(0.01)
            bar = pilot.app.query_one("#pipeline-progress")
            if len(llm_server.chat_requests()) == 2 and bar.progress == 1:
                break  # two sessions wait on the model; the third was skipped (leased)
        await pilot.pause()

    assert snap_compare(make_app(demo_engine), terminal_size=SIZE, run_before=run_before)
