"""The app watches the Codex home with real watchfiles: a new rollout appears in the table and
an outside edit of the memory folder lands in history, without a key pressed."""

from __future__ import annotations

import shutil
from typing import Any

from memdeck.engine.memory_folder.history import History
from memdeck.tui.widgets.session_table import SessionTable
from tests.conftest import FIXTURES
from tests.tui.conftest import SIZE


async def wait_until(pilot: Any, condition: Any, seconds: float = 20.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        await pilot.pause(0.05)
    return condition()


async def test_new_rollout_and_outside_memory_edit_show_up(demo_engine, make_app) -> None:
    app = make_app(demo_engine, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(SessionTable)
        assert await wait_until(pilot, lambda: len(table.rows) == 19)

        day = demo_engine.home.sessions_dir / "2026" / "11" / "20"
        day.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / "cli-preferences.jsonl",
                        day / "rollout-2026-11-20T11-00-00-cli-preferences.jsonl")
        assert await wait_until(pilot, lambda: len(table.rows) == 20), "new rollout shown"

        memory_md = demo_engine.home.memory_root / "MEMORY.md"
        history = History(demo_engine.home)  # entries() only reads; it records nothing itself
        before = len(history.entries())
        memory_md.write_text(memory_md.read_text() + "\n- edited by hand outside memdeck\n")
        assert await wait_until(pilot, lambda: len(history.entries()) == before + 1)
        assert history.entries()[0].origin == "external"
    # leaving the app stops the watcher thread
    assert not any(w.is_running for w in app.workers)
