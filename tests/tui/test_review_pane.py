"""The Review pane: the pending proposal, hunk toggles, accept some or all, reject, and the
secrets gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import plant_secret
from textual.app import App, ComposeResult

from memdeck.engine import Engine
from memdeck.engine.phase2.proposals import root_state
from memdeck.tui.messages import MemoryChanged
from memdeck.tui.widgets.confirm import AskScreen, ConfirmScreen
from memdeck.tui.widgets.diff_view import RELAYOUT_IN_THREAD, lay_out
from memdeck.tui.widgets.review.hunk_list import HunkList, hunk_rows, hunk_text, with_layout
from tests.tui import stable_demo
from tests.tui.conftest import SIZE, settle

stable_engine = stable_demo.stable_engine  # fixtures: the demo home at a fixed path
fixed_proposal_ids = stable_demo.fixed_proposal_ids




def propose(engine: Engine, secret: bool = False) -> Any:
    engine.extract(backend="offline")
    if secret:
        plant_secret(engine.home.root)
    return engine.consolidate()


def status_of(engine: Engine, pid: str) -> Any:
    return next(p for p in engine.proposals() if p.id == pid)


def workspace(engine: Engine, pid: str) -> Path:
    return engine.home.proposals_dir / pid / "workspace"


def notes(app: Any) -> list[str]:
    return [n.message for n in app._notifications]


def text(app: Any, selector: str) -> str:
    return app.query_one(selector).render().plain


async def to_hunk(pilot: Any, hunks: HunkList, k: int) -> None:
    await pilot.press("home", *["down"] * k)
    assert hunks.cursor == k


async def test_the_pending_proposal_with_its_inputs_files_and_hunks(demo_engine,
                                                                   make_app) -> None:
    p = propose(demo_engine)
    app = make_app(demo_engine, initial="review")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        hunks = app.query_one(HunkList)
        assert hunks.count == len(demo_engine.proposal_hunks(p.id)) == 8
        assert hunks.selected == set(range(8)) and hunks.has_focus
        title = text(app, "#proposal-title")
        assert p.id in title and "heuristic" in title and "2026-11-20 12:00" in title
        inputs = text(app, "#proposal-inputs")
        assert "Inputs · 5 sessions" in inputs and "shop" in inputs
        assert "Upgrade Django to 5.1" in inputs and p.threads[0][:8] in inputs
        files = text(app, "#proposal-files")
        assert "Files · 6 changed" in files and "M MEMORY.md" in files and "+37" in files
        headers = [r for r in hunks.rows if r.kind == "hunk"]
        assert headers[0].body.startswith("MEMORY.md  @@ -8,15 +8,26 @@")
        # nothing the demo's memory holds is deleted (its hand-written index lines stay, issue
        # 9); removed lines are drawn in test_a_forget_note_names_itself_on_its_hunk
        assert {r.kind for r in hunks.rows} >= {"add", "ctx", "meta"}
        assert "del" not in {r.kind for r in hunks.rows}
        # the demo's remember note, named under the hunks it caused
        named = [r.body for r in hunks.rows if r.kind == "meta"]
        assert named and all(x.startswith("    from note 2026-11-19 'remember: the shop's "
                                          "staging database") for x in named)
        assert "8 hunks · 8 selected in 6 files" in text(app, "#review-status")
        assert not app.query_one("#review-banner").display


def drawn(hunks: HunkList) -> list[str]:
    """Every visual line of the list, top to bottom, as the user scrolls through it."""
    lines: list[str] = []
    for top in range(0, hunks.virtual_size.height, hunks.size.height):
        hunks.scroll_to(0, top, animate=False, immediate=True)
        lines += [hunks.render_line(y).text for y in range(hunks.size.height)]
    return lines[:hunks.virtual_size.height]


async def test_long_lines_wrap_whole_and_a_wrapped_header_follows_its_check_box(
        demo_engine, make_app) -> None:
    """The proposal's rows are wrapped in the loading worker, to the list's width (the app
    answers keys meanwhile); what is drawn holds every line whole, and a hunk header that
    wraps shows its check box as toggled, also after the width changed."""
    propose(demo_engine)
    app = make_app(demo_engine, initial="review")
    messages: list[Any] = []
    async with app.run_test(size=(40, 30), message_hook=messages.append) as pilot:
        await settle(app, pilot)
        hunks = app.query_one(HunkList)
        loaded = [m for m in messages if type(m).__name__ == "Loaded"
                  and hasattr(m, "data") and m.data.proposal is not None]
        layout = loaded[-1].data.view.layout
        assert layout is not None and layout.width == hunks.text_width
        assert hunks.virtual_size.height == layout.height > len(hunks.rows)  # lines wrap
        lines = drawn(hunks)
        first = lines[0][hunks.GUTTER:].rstrip()
        assert first.startswith("[x] MEMORY.md  @@ -8,15 +8,26 @@")
        assert "+11 −0" not in first and "+11 −0" in lines[1]  # the header wraps at 40
        flat = "".join(x[hunks.GUTTER:].rstrip() for x in lines).replace(" ", "")
        for row in hunks.rows:  # nothing cut: each line's text is drawn, in order
            assert (row.sign + row.body).replace(" ", "") in flat
        await pilot.press("home", "space")
        assert drawn(hunks)[0][hunks.GUTTER:].startswith("[ ] MEMORY.md")
        await pilot.resize_terminal(34, 30)
        await settle(app, pilot)
        again = drawn(hunks)
        assert again[0][hunks.GUTTER:].startswith("[ ] MEMORY.md")
        assert len(again) == hunks.virtual_size.height > len(lines)  # re-wrapped narrower


class ListApp(App[None]):
    """The hunk list alone, to be filled with rows the way the pane fills it."""

    def compose(self) -> ComposeResult:
        yield HunkList()


async def test_a_long_proposal_rewraps_off_the_event_loop_when_the_width_changes(
        demo_engine) -> None:
    """Thousands of rows: a width change wraps them again in a thread, then the list draws
    them at the new width, its last line included."""
    p = propose(demo_engine)
    many = hunk_rows(demo_engine.proposal_hunks(p.id) * 60, [])
    assert len(many.rows) >= RELAYOUT_IN_THREAD
    app = ListApp()
    async with app.run_test(size=SIZE) as pilot:
        hunks = app.query_one(HunkList)
        hunks.set_hunks(with_layout(many, hunks.text_width))
        await settle(app, pilot)
        wide = hunks.virtual_size.height
        await pilot.resize_terminal(70, 30)
        await settle(app, pilot)
        want = lay_out(many.rows, (hunk_text(r, True) for r in many.rows), hunks.text_width)
        assert hunks.virtual_size.height == want.height > wide
        hunks.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        shown = [hunks.render_line(y).text for y in range(hunks.size.height)]
        last = next(r for r in reversed(many.rows) if r.body)
        assert any(last.body[-20:] in x for x in shown)


async def test_a_forget_note_names_itself_on_its_hunk(demo_engine, make_app) -> None:
    """Issue 9: the hunk a note caused says which note, the lines it removes are drawn
    removed, and a note that changed nothing is said in the banner."""
    demo_engine.extract(backend="offline")
    demo_engine.accept(demo_engine.consolidate().id)
    demo_engine.memory_note("never on Fridays", "forget")
    demo_engine.memory_note("the printer in room 4", "forget")
    p = demo_engine.consolidate()
    root = demo_engine.home.memory_root
    app = make_app(demo_engine, initial="review")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        hunks = app.query_one(HunkList)
        data = app.query_one("#review-pane").data
        assert [h.path for h in data.hunks] == ["MEMORY.md", "memory_summary.md"]
        for k in range(hunks.count):
            under = hunks.rows[hunks.header_rows[k] + 1]
            assert (under.kind, under.body) == (
                "meta", "    from note 2026-11-20 'forget: never on Fridays'")
            assert [r.body for r in hunks.rows if r.hunk == k and r.kind == "del"] == [
                "- Deploy only through `make deploy`; never on Fridays [Task 1]",
                "- Deploys only through `make deploy`, never on Fridays."][k:k + 1]
        shown = "\n".join(hunks.render_line(y).text for y in range(hunks.size.height))
        assert "from note 2026-11-20 'forget: never on Fridays'" in shown  # on screen
        assert ("Note 2026-11-20 'forget: the printer in room 4': matched no line in memory; "
                "nothing was removed.") in text(app, "#review-banner")
        await pilot.press("A")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert status_of(demo_engine, p.id).status == "accepted"
        assert "never on Fridays" not in (root / "memory_summary.md").read_text()


async def test_toggle_one_off_then_accept_applies_only_the_others(demo_engine,
                                                                 make_app) -> None:
    p = propose(demo_engine)
    root, ws = demo_engine.home.memory_root, workspace(demo_engine, p.id)
    old_memory = (root / "MEMORY.md").read_text()
    app = make_app(demo_engine, initial="review")
    messages: list[Any] = []
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await settle(app, pilot)
        hunks = app.query_one(HunkList)
        django = next(k for k, h in enumerate(app.query_one("#review-pane").data.hunks)
                      if h.path == "MEMORY.md" and any("Upgrade Django" in x for x in h.lines))
        await to_hunk(pilot, hunks, django)
        await pilot.press("space")
        assert hunks.selected == set(range(8)) - {django}
        assert "7 selected in 6 files" in text(app, "#review-status")
        await pilot.press("a")
        await settle(app, pilot)
        assert status_of(demo_engine, p.id).status == "partial"
        memory = (root / "MEMORY.md").read_text()
        assert "Upgrade Django to 5.1" not in memory  # the hunk left out
        assert "Add a bucket for invoices" in memory  # the other MEMORY.md hunk went in
        assert memory != old_memory
        for rel in ("memory_summary.md", "raw_memories.md"):
            assert (root / rel).read_text() == (ws / rel).read_text()
        summaries = sorted(x.name for x in (root / "rollout_summaries").glob("*.md"))
        assert len(summaries) == 5 and any("upgrade_django" in x for x in summaries)
        assert "Accepted 7 of 8 hunks in 6 files." in notes(app)
        assert any(isinstance(m, MemoryChanged) and m.source == "accept" for m in messages)
        assert "No proposal is waiting for review." in text(app, "#review-empty-text")


async def test_accept_all_asks_first_naming_the_counts(demo_engine, make_app) -> None:
    p = propose(demo_engine)
    root, ws = demo_engine.home.memory_root, workspace(demo_engine, p.id)
    expected = {rel: (ws / rel).read_text() for rel in ("MEMORY.md", "memory_summary.md")}
    before = root_state(root)
    app = make_app(demo_engine, initial="review")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "All 8 hunks in 6 files" in app.screen.detail
        await pilot.press("n")  # no: nothing happens
        await settle(app, pilot)
        assert root_state(root) == before and status_of(demo_engine, p.id).status == "pending"
        await pilot.press("A")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert status_of(demo_engine, p.id).status == "accepted"
        for rel, content in expected.items():
            assert (root / rel).read_text() == content
        assert "Accepted all 8 hunks in 6 files." in notes(app)


async def test_reject_with_a_reason_and_escape_cancels(demo_engine, make_app) -> None:
    p = propose(demo_engine)
    app = make_app(demo_engine, initial="review")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, AskScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        assert status_of(demo_engine, p.id).status == "pending"
        await pilot.press("r")
        await pilot.pause()
        await pilot.press(*"too vague", "enter")
        await settle(app, pilot)
        rejected = status_of(demo_engine, p.id)
        assert (rejected.status, rejected.reason) == ("rejected", "too vague")
        empty = text(app, "#review-empty-text")
        assert "No proposal is waiting" in empty and "press c" in empty.lower()
        assert p.id in empty and "rejected" in empty and "too vague" in empty
        assert not app.query_one("#review-proposal").display


async def test_a_secret_blocks_accept_and_is_highlighted(demo_engine, make_app) -> None:
    p = propose(demo_engine, secret=True)
    assert p.secrets
    root = demo_engine.home.memory_root
    before = root_state(root)
    app = make_app(demo_engine, initial="review")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        hunks = app.query_one(HunkList)
        banner = text(app, "#review-banner")
        assert "Acceptance blocked" in banner and "MEMORY.md:72" in banner
        marked = [r for r in hunks.rows if r.secret and r.kind == "add"]
        assert {r.body.split("key ")[-1][:4] for r in marked} == {"ghp_"}
        assert "accept blocked" in text(app, "#review-status")
        await pilot.press("a")
        await settle(app, pilot)
        assert any("Accept blocked: MEMORY.md line 72 adds a secret" in n for n in notes(app))
        await pilot.press("A")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)  # not even asked
        await settle(app, pilot)
        assert root_state(root) == before and status_of(demo_engine, p.id).status == "pending"
        # the hunks without the secret may still go in, as the engine allows
        for k in sorted(hunks.secret_hunks):
            await to_hunk(pilot, hunks, k)
            await pilot.press("space")
        assert "accept blocked" not in text(app, "#review-status")
        await pilot.press("a")
        await settle(app, pilot)
        assert status_of(demo_engine, p.id).status == "partial"
        assert "ghp_" not in "".join(x.read_text() for x in root.rglob("*.md"))


async def test_the_engines_refusal_is_one_line(demo_engine, make_app) -> None:
    p = propose(demo_engine)
    memory = demo_engine.home.memory_root / "MEMORY.md"
    memory.write_text(memory.read_text() + "- edited meanwhile\n")
    app = make_app(demo_engine, initial="review")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "memory folder changed since" in text(app, "#review-banner")
        await pilot.press("a")
        await settle(app, pilot)
        assert any(n.startswith("accepting the proposal failed: memory changed since")
                   and "\n" not in n for n in notes(app))
        assert memory.read_text().endswith("- edited meanwhile\n")
        assert status_of(demo_engine, p.id).status == "pending"


async def test_a_proposal_without_its_workspace_offers_nothing_to_accept(demo_engine,
                                                                       make_app) -> None:
    import shutil

    p = propose(demo_engine)
    shutil.rmtree(workspace(demo_engine, p.id))
    app = make_app(demo_engine, initial="review")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "lost its workspace" in text(app, "#review-banner")
        assert app.query_one(HunkList).count == 0  # not every file shown as deleted
        await pilot.press("r", "enter")
        await settle(app, pilot)
        assert status_of(demo_engine, p.id).status == "rejected"


async def test_c_makes_a_proposal_and_opens_it(demo_engine, make_app) -> None:
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.active_pane == "sessions"
        await pilot.press("c")
        await settle(app, pilot)
        assert app.active_pane == "review"
        pending = [p for p in demo_engine.proposals() if p.status == "pending"]
        assert len(pending) == 1
        assert pending[0].id in text(app, "#proposal-title")
        assert app.query_one(HunkList).count == 8


async def test_without_a_proposal_the_keys_are_hidden(demo_engine, make_app) -> None:
    app = make_app(demo_engine, initial="review")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "Press c to extract" in text(app, "#review-empty-text")
        pane = app.query_one("#review-pane")
        for action in ("toggle", "accept", "accept_all", "reject"):
            assert pane.check_action(action, ()) is False
        await pilot.press("r")
        await pilot.pause()
        assert not isinstance(app.screen, AskScreen)


def test_snapshot_review_with_one_hunk_toggled_off(stable_engine, make_app,
                                                   snap_compare, fixed_proposal_ids) -> None:
    propose(stable_engine)

    async def run_before(pilot: Any) -> None:
        await settle(pilot.app, pilot)
        await pilot.press("down", "down", "space")  # memory_summary.md's hunk: off
        hunks = pilot.app.query_one(HunkList)
        hunks.scroll_relative(y=-4, animate=False, immediate=True)  # the one before, too
        await pilot.pause()

    assert snap_compare(make_app(stable_engine, initial="review"), terminal_size=SIZE,
                        run_before=run_before)


def test_snapshot_review_blocked_by_a_secret(stable_engine, make_app,
                                             snap_compare, fixed_proposal_ids) -> None:
    propose(stable_engine, secret=True)

    async def run_before(pilot: Any) -> None:
        await settle(pilot.app, pilot)
        await pilot.press("down", "a")  # MEMORY.md's second hunk holds the secret
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(stable_engine, initial="review"), terminal_size=SIZE,
                        run_before=run_before)


def test_snapshot_review_with_nothing_pending(stable_engine, make_app,
                                              snap_compare, fixed_proposal_ids) -> None:
    p = propose(stable_engine)
    stable_engine.reject(p.id, "the deploy notes are wrong")

    async def run_before(pilot: Any) -> None:
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(stable_engine, initial="review"), terminal_size=SIZE,
                        run_before=run_before)
