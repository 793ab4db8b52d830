"""`c`: extract + consolidate with a progress bar, cancellable, opening Review; the screen
keeps answering keys while a slow model server works."""

from __future__ import annotations

import threading
from typing import Any

from llm_server import json_reply

from memdeck.tui.messages import PipelineProgress
from memdeck.tui.widgets.pipeline_bar import PipelineBar
from memdeck.tui.widgets.session_table import SessionTable
from tests.tui.conftest import SIZE, settle


def progress_recorder() -> tuple[list[PipelineProgress], Any]:
    """The pipeline's progress messages as the app receives them, and the hook that records
    them (`run_test(message_hook=…)`)."""
    seen: list[PipelineProgress] = []

    def hook(message: Any) -> None:
        if isinstance(message, PipelineProgress):
            seen.append(message)

    return seen, hook


GOOD = {"rollout_summary": "# Work\n\n## Task 1: done\n", "rollout_slug": "work",
        "raw_memory": "---\ndescription: work\n---\n\n### Task 1\n- it worked\n"}


async def test_c_extracts_consolidates_and_opens_review(demo_engine, make_app) -> None:
    seen, hook = progress_recorder()
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(app, pilot)
        eligible = sum(1 for s in app.query_one(SessionTable).rows
                       if s.status in ("eligible", "failed"))
        await pilot.press("c")
        await settle(app, pilot)
        assert not app.running and not app.query_one(PipelineBar).display
        assert app.active_pane == "review"
        pending = [p for p in demo_engine.proposals() if p.status == "pending"]
        assert len(pending) == 1
        extract = [m for m in seen if m.stage == "extract"]
        assert [m.done for m in extract] == list(range(0, eligible + 1))
        assert {m.total for m in extract} == {eligible}
        assert any(m.stage == "consolidate" for m in seen)
        assert any("ready for review" in n.message for n in app._notifications)


async def test_screen_answers_keys_while_a_slow_model_works_then_cancel(
        demo_engine, make_app, llm_server) -> None:
    demo_engine.config_set("memdeck.base_url", llm_server.url)
    demo_engine.config_set("memdeck.max_retries", "0")
    gate = threading.Event()

    def handler(body: Any) -> Any:
        gate.wait(30)  # the model "thinks" until the test has used the screen
        return json_reply(GOOD)

    llm_server.handler = handler
    app = make_app(demo_engine)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press("c")
            for _ in range(500):  # until the model has been asked
                await pilot.pause(0.01)
                if llm_server.chat_requests():
                    break
            assert llm_server.chat_requests(), "the run reached the model server"
            assert app.running and app.query_one(PipelineBar).display

            # the screen is alive: panes switch and the filter works mid-run
            await pilot.press("2")
            assert app.active_pane == "memories"
            await pilot.press("1", "slash", *"infra")
            table = app.query_one(SessionTable)
            assert table.rows and {s.project for s in table.rows} == {"infra"}
            assert app.running, "all that happened while the model was still answering"
            assert "extract" in str(app.query_one("#pipeline-stage").render())

            await pilot.press("escape")  # leave the filter input
            await pilot.press("ctrl+x")
            gate.set()
            await settle(app, pilot)
            assert not app.running
            assert any("cancelled" in n.message for n in app._notifications)
            assert demo_engine.proposals() == []  # cancelled before consolidation
    finally:
        gate.set()


async def test_c_says_what_it_waits_for_when_every_slot_is_held(demo_engine, make_app,
                                                                monkeypatch) -> None:
    """Every extraction slot held by another process (Codex): the bar says who holds them
    and until when, instead of standing still at 0/N."""
    import sqlite3
    import uuid

    monkeypatch.setenv("MEMDECK_SLOT_WAIT", "1")
    conn = sqlite3.connect(demo_engine.home.root / "memories_1.sqlite")
    with conn:
        for i in range(8):
            conn.execute("INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, "
                         "started_at, lease_until, retry_remaining, input_watermark) VALUES "
                         "('memory_stage1', ?, 'running', 'codex:other', ?, ?, ?, 3, 0)",
                         (f"held-{i}", str(uuid.uuid4()), int(demo_engine.clock.now()),
                          int(demo_engine.clock.now()) + 3600))
    conn.close()
    seen, hook = progress_recorder()
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        waits = [m.detail for m in seen if m.detail.startswith("waiting for an extraction")]
        assert waits and "held by other processes (codex:other ×8" in waits[0]
