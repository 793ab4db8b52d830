"""The Sessions pane's transcript on real rollout shapes (issue 10): base instructions as one
collapsed item, one marker per image and per compaction, the role once, the whole rollout
path in the header, and keys that say how collapsed items open."""

from __future__ import annotations

from typing import Any

from textual.widgets import Collapsible, Static

from memdeck.engine import Engine
from memdeck.tui.widgets.key_footer import KeyFooter
from memdeck.tui.widgets.session_table import SessionTable
from memdeck.tui.widgets.sessions.transcript import TranscriptView
from tests.tui.conftest import settle

NARROW = (100, 30)


async def open_transcript(app: Any, pilot: Any, session_id: str) -> TranscriptView:
    await settle(app, pilot)
    table = app.query_one(SessionTable)
    table.cursor = next(i for i, s in enumerate(table.rows) if s.id.startswith(session_id))
    await pilot.press("enter")
    await settle(app, pilot)
    return app.query_one(TranscriptView)


def shown_text(view: TranscriptView) -> str:
    """Every line the transcript's widgets draw, as plain text (a collapsed body has no
    height, so draws nothing)."""
    return "\n".join(w.render_line(y).text for w in view.query(Static)
                     for y in range(w.size.height))


async def test_base_instructions_are_one_collapsed_item(home, make_app) -> None:
    home.add("codex-0.169-tui.jsonl")
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=NARROW) as pilot:
        view = await open_transcript(app, pilot, "01a2393e")
        base = view.query(Collapsible).filter(".context").first()
        assert base.title == "base instructions (173 lines)" and base.collapsed
        assert "You are Codex" not in shown_text(view)


async def test_images_and_compaction_are_one_line_markers(home, make_app) -> None:
    home.add("images-and-compaction.jsonl")
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=(160, 48)) as pilot:
        view = await open_transcript(app, pilot, "01a23c41")
        markers = [str(m.render()) for m in view.query(".turn.marker").results(Static)]
        assert markers == ["── [image] ──  line 4", "── context compacted here ──  line 11",
                           "── [image] ──  line 13", "── [image] ──  line 13"]
        text = shown_text(view)
        assert "<image" not in text and "</image>" not in text
        assert " assistant  commentary" in text and "assistant assistant" not in text


async def test_header_holds_the_whole_rollout_path(home, make_app) -> None:
    path = home.add("images-and-compaction.jsonl")
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=NARROW) as pilot:
        await open_transcript(app, pilot, "01a23c41")
        header = app.query_one("#transcript-header", Static)
        lines = [header.render_line(y).text.rstrip() for y in range(header.size.height)]
        drawn = "".join(line.strip() for line in lines)
        assert f"rollout {path}".replace(" ", "") in drawn.replace(" ", "")
        assert not any(line.endswith("…") for line in lines)


async def test_tab_and_enter_open_a_collapsed_item_and_the_footer_says_so(home,
                                                                         make_app) -> None:
    home.add("codex-0.34-no-source.jsonl")
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=NARROW) as pilot:
        view = await open_transcript(app, pilot, "5b8c2f4e")
        footer = {e.description for e in app.screen.query_one(KeyFooter).entries()[0]}
        assert {"Next item", "Open item"} <= footer
        items = list(view.query(Collapsible).filter(".turn"))
        assert all(c.collapsed for c in items)
        await pilot.press("tab")
        await pilot.press("enter")
        await pilot.pause()
        assert not items[0].collapsed and all(c.collapsed for c in items[1:])
        await pilot.press("tab", "tab", "tab", "tab", "enter")  # the shell call's output
        await pilot.pause()
        output = items[4]
        assert output.title.startswith("↳ output · exit code 1") and not output.collapsed
        assert "skipped row 7: amount '12.5' is not an integer" in shown_text(view)
        await pilot.press("enter")
        await pilot.pause()
        assert output.collapsed


def long_rollout(turns: int) -> bytes:
    """The 0.34 fixture's session with `turns` more turns of its last shape (a request, a
    patch, its output, the answer): four entries each."""
    from tests.conftest import FIXTURES

    lines = (FIXTURES / "codex-0.34-no-source.jsonl").read_text().splitlines()
    head, turn = lines[:14], lines[14:21]
    out = list(head)
    for i in range(1, turns + 1):
        for line in turn:
            out.append(line.replace("Convert them to cents on import then.", f"Request {i:03}.")
                       .replace("Done: amounts are converted to integer cents with Decimal, "
                                "so no row is skipped.", f"Answer {i:03}.")
                       .replace("call_Pa7cH2b9", f"call_{i:03}"))
    return ("\n".join(out) + "\n").encode()


async def test_a_long_transcript_opens_at_its_start_and_scrolls_to_its_last_entry(
        home, make_app) -> None:
    """A long rollout is mounted a screenful at a time (issue 10, requirement 5): its first
    entries at once, more as the user scrolls, End shows the last one and Home the first."""
    from tests.tui.test_keys import screen_text

    home.write("rollout-2026-12-01T10-00-00-5b8c2f4e-91d3-4a7b-b6e2-3c4d5e6f7a81.jsonl",
               long_rollout(100))
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=NARROW) as pilot:
        view = await open_transcript(app, pilot, "5b8c2f4e")
        assert len(view.detail.entries) > 400
        assert "Why does the ledger import skip rows?" in screen_text(app)
        assert len(view.query(".turn")) < 100  # not all of them
        assert "Answer 100." not in shown_text(view)
        await pilot.press("pagedown", "pagedown", "pagedown")
        await settle(app, pilot)
        assert "Request 010." in shown_text(view)  # mounted as the view came near them
        await pilot.press("end")
        await settle(app, pilot)
        assert "Answer 100." in screen_text(app) and view.scroll_y == view.max_scroll_y
        await pilot.press("pageup", "pageup", "pageup")
        await settle(app, pilot)
        # End mounted turns 95..100 only: the ones before them come back as the user scrolls
        # up (mounted a frame or two later on a loaded machine)
        from tests.tui.test_live_updates import wait_until

        assert await wait_until(pilot, lambda: "Answer 092." in screen_text(app), 5.0)
        await pilot.press("home")
        await settle(app, pilot)
        assert "Why does the ledger import skip rows?" in screen_text(app)


async def test_tab_goes_on_past_the_entries_mounted_first(home, make_app) -> None:
    """`Tab` from item to item does not wrap round at the end of the first screenful: the
    items after it are mounted as it gets there; End with an item focused keeps the keys."""
    from tests.tui.test_keys import screen_text

    home.write("rollout-2026-12-01T10-00-00-5b8c2f4e-91d3-4a7b-b6e2-3c4d5e6f7a81.jsonl",
               long_rollout(100))
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=NARROW) as pilot:
        view = await open_transcript(app, pilot, "5b8c2f4e")
        first_items = len(view.query(Collapsible))
        for _ in range(first_items + 20):
            await pilot.press("tab")
            await pilot.pause()
        await settle(app, pilot)
        items = list(view.query(Collapsible).filter(".turn"))
        focused = app.focused.parent if app.focused is not None else None  # the item's title
        assert focused in items and items.index(focused) == first_items + 19
        assert focused.region.height > 0  # scrolled to, on screen
        await pilot.press("end")
        await settle(app, pilot)
        assert app.focused is view
        assert view.detail.entries[-1].kind == "assistant" and view.scroll_y == view.max_scroll_y
        await pilot.press("home")
        await settle(app, pilot)
        assert view.scroll_y == 0
        assert "Why does the ledger import skip rows?" in screen_text(app)


async def test_a_transcript_opens_at_a_given_entry_with_its_words_marked(home, make_app) -> None:
    """A trace or a citation opens the transcript at its turn (issue 11): the window is
    mounted around that entry, far past the first screen, the entry is on screen, framed,
    with the matched words highlighted and the reason beside its heading."""
    from memdeck.tui.messages import ShowSession
    from tests.tui.test_keys import screen_text

    home.write("rollout-2026-12-01T10-00-00-5b8c2f4e-91d3-4a7b-b6e2-3c4d5e6f7a81.jsonl",
               long_rollout(100))
    app = make_app(Engine.open(home.root))
    async with app.run_test(size=NARROW) as pilot:
        view = await open_transcript(app, pilot, "5b8c2f4e")
        at = next(i for i, e in enumerate(view.detail.entries) if e.text == "Request 077.")
        await pilot.press("escape")
        app.post_message(ShowSession("5b8c2f4e", at=at, marks=("request 077",),
                                     why="exact phrase"))
        await settle(app, pilot)
        target = view.query(".-target").first(Static)
        assert target.region.y < app.size.height, "the entry is on screen"
        text = screen_text(app)
        assert "Request 077." in text and "◀ exact phrase" in text
        assert "Why does the ledger import skip rows?" not in shown_text(view)
        lines = [target.render_line(y) for y in range(target.size.height)]
        assert any(seg.text.lower() == "request 077" and seg.style and seg.style.bgcolor
                   for strip in lines for seg in strip), "the matched words are highlighted"
        await pilot.press("escape", "enter")  # the table's Enter opens at the top again
        await settle(app, pilot)
        assert "Why does the ledger import skip rows?" in screen_text(app)
