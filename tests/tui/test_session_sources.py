"""The Sessions pane on rollouts of today's Codex: the Source column says what the user ran
(never Codex's raw JSON), and a 0.169 transcript shows each turn once with the exit code."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Collapsible, Static

from memdeck.engine import Engine
from memdeck.tui.widgets.session_table import SessionHeader, SessionTable
from memdeck.tui.widgets.sessions.transcript import TranscriptView
from tests.tui.conftest import SIZE, settle

BUNDLED = Path(__file__).resolve().parent.parent / "fixtures" / "rollouts"
TUI_ID = "01a2393e-b426-7cc3-892d-8f30f1c8d939"


def screen_rows(table: SessionTable) -> list[str]:
    return [table.render_line(y).text for y in range(len(table.rows))]


async def test_source_column_names_what_the_user_ran(home, make_app) -> None:
    home.add(BUNDLED / "codex-0.169-tui.jsonl")
    home.add(BUNDLED / "codex-0.169-exec.jsonl")
    home.add(BUNDLED / "codex-0.34-no-source.jsonl")
    home.add("subagent-review.jsonl")
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one(SessionTable)
        rows = screen_rows(table)
        by_label = {s.source_label: row for s, row in zip(table.rows, rows, strict=True)}
        assert set(by_label) == {"Codex TUI", "exec", "CLI", "sub-agent: review"}
        for label, row in by_label.items():
            assert f" {label} " in row, row  # whole, not cut off
        assert not any("{" in row for row in rows)
        header = str(app.query_one(SessionHeader).render())
        start = header.index("source")
        assert header[start:].split()[1] == "status"
        # the column is as wide as "sub-agent: review": the status column starts after it
        assert rows[0].index(table.rows[0].status) > start + len("sub-agent: review")


async def test_tui_transcript_each_turn_once_with_exit_code(home, make_app) -> None:
    home.add(BUNDLED / "codex-0.169-tui.jsonl")
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        view = app.query_one(TranscriptView)
        assert view.detail.session.id == TUI_ID
        users = [w for w in view.query(".turn.user")]
        assistants = [w for w in view.query(".turn.assistant")]
        assert len(users) == 2 and len(assistants) == 2
        [output] = view.query(".turn.tool-output").results(Collapsible)
        assert output.title == "↳ output · exit code 1 · 1 line"
        header = str(view.query_one("#transcript-header", Static).render())
        assert "source Codex TUI (vscode)" in header
