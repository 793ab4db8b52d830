"""The Sessions pane on a home of real shapes (issue 10): a Windows cwd is listed and filtered
by its last folder, a VS Code session by the user's request."""

from __future__ import annotations

from typing import Any

from textual.widgets import Select

from memdeck.engine import Engine
from memdeck.tui.widgets.session_table import SessionTable
from tests.tui.conftest import SIZE, settle


async def test_windows_cwd_is_its_last_folder_in_rows_and_project_filter(home,
                                                                         make_app) -> None:
    home.add("windows-cwd.jsonl")
    home.add("vscode-ide-context.jsonl")
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        rows = {s.project: table.render_line(y).text for y, s in enumerate(table.rows)}
        assert set(rows) == {"shop", "cart"}
        assert " shop " in rows["shop"] and "C:\\" not in rows["shop"]
        assert "Why does the cart tota" in rows["cart"]
        assert "Context from my IDE" not in rows["cart"]
        projects: Select[str] = app.query_one("#project-filter", Select)
        labels = [str(prompt) for prompt, _ in projects._options if str(prompt)]
        assert labels == ["cart (1)", "shop (1)"]
        projects.value = "shop"
        await settle(app, pilot)
        assert [s.id for s in table.rows] == ["01a23a41-0c7e-7d2b-9f4e-2b1c0d9e8f71"]


async def test_a_clamped_setting_says_what_config_toml_holds(home, make_app) -> None:
    from memdeck.tui.panes.settings import SettingsPane

    home.add("windows-cwd.jsonl")
    home.config("[features]\nmemories = true\n\n[memories]\nmax_rollout_age_days = 3650\n")
    app = make_app(Engine.open(home.root), initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        row = app.query_one(SettingsPane).row("max_rollout_age_days")
        assert row.control.value == "90"
        help_text = str(row.query_one(".setting-help").render())
        assert help_text.startswith("config.toml says 3650; Codex clamps it to 90 (0 to 90).")
        idle = app.query_one(SettingsPane).row("min_rollout_idle_hours")
        assert "says" not in str(idle.query_one(".setting-help").render())


async def test_backup_list_says_why_each_backup_was_taken(demo_engine, make_app) -> None:
    from memdeck.tui.widgets.settings.backup_list import BackupList

    first = demo_engine.reset()
    second = demo_engine.restore_backup(first.id)  # the state it replaced is backed up too
    app = make_app(demo_engine, initial="settings")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(BackupList)
        assert [str(c) for c in table.get_column("id")] == [second.id, first.id]
        assert [str(c) for c in table.get_column("reason")] == [
            f"before restore of backup {first.id}", "before reset"]


async def test_cancel_during_consolidation_says_cancelled(demo_engine, make_app,
                                                           llm_server) -> None:
    """ctrl+x while the consolidation model works: the run ends after it, and says so."""
    import threading

    from llm_server import json_reply

    from memdeck.tui.widgets.pipeline_bar import PipelineBar

    demo_engine.config_set("memdeck.base_url", llm_server.url)
    demo_engine.config_set("memdeck.max_retries", "0")
    demo_engine.config_set("memdeck.tools", "on")  # the agent's prose answer is its last word
    gate = threading.Event()
    good = {"rollout_summary": "# Work\n\n## Task 1: done\n", "rollout_slug": "work",
            "raw_memory": "---\ndescription: work\n---\n\n### Task 1\n- it worked\n"}

    def handler(body: Any) -> Any:
        if "tools" in body:  # the consolidation agent: it "thinks" until the test cancels
            gate.wait(30)
            return json_reply("No change needed.")
        return json_reply(good)

    llm_server.handler = handler
    app = make_app(demo_engine)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press("c")
            for _ in range(1000):  # until the consolidation has asked the model
                await pilot.pause(0.01)
                if any("tools" in r.body for r in llm_server.chat_requests()):
                    break
            assert "consolidate" in str(app.query_one("#pipeline-stage").render())
            await pilot.press("ctrl+x")
            gate.set()
            await settle(app, pilot)
            assert not app.running and not app.query_one(PipelineBar).display
            [note] = [n.message for n in app._notifications if n.message.startswith("Run ")]
            assert note.startswith("Run cancelled: ") and "sessions extracted" in note
    finally:
        gate.set()


async def test_browsing_every_pane_creates_nothing_outside_memdeck(home, make_app) -> None:
    """The app on a fresh home (rollouts and config.toml only): each pane is shown, and the
    only new paths are memdeck's own, under `memdeck/`."""
    home.config("[features]\nmemories = true\n")
    home.add("windows-cwd.jsonl")
    home.add("cli-preferences.jsonl")
    before = {p.relative_to(home.root).as_posix() for p in home.root.rglob("*")}
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for key in "234561":
            await pilot.press(key)
            await settle(app, pilot)
        assert app.active_pane == "sessions"
    new = {p.relative_to(home.root).as_posix() for p in home.root.rglob("*")} - before
    assert {p for p in new if p.split("/")[0] != "memdeck"} == set()
