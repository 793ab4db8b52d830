"""First paint from the last listing (issue 23 item 10): the app paints the head of the listing
it kept last time in its first frame, says how old it is, and replaces it in place with the
listing of now; a listing that fails leaves the rows saying they are not up to date."""

from __future__ import annotations

import json
import threading
from typing import Any

from memdeck.engine import Engine
from memdeck.engine.clock import FixedClock
from memdeck.engine.index.listing_head import HEAD_FILE
from memdeck.tui.widgets.home_banner import HomeBanner
from memdeck.tui.widgets.session_table import SessionTable
from tests.tui.conftest import FIXED_NOW, SIZE, settle


def _count(app: Any) -> str:
    return str(app.query_one("#session-count").render().plain)


async def _list_once(engine: Engine, make_app: Any) -> None:
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)


class HeldListing:
    """The engine's listings wait until the test lets them go: what the first frames show
    is then the head alone, whatever the machine's speed."""

    def __init__(self, engine: Engine, fail: bool = False) -> None:
        self.go = threading.Event()
        self.fail = fail
        self.app: Any = None  # set: the listing also goes once this app is exiting
        real = engine.listing

        def listing(refresh: bool = True, on_progress: Any = None) -> Any:
            for _ in range(600):  # 30 s at most
                if self.go.wait(0.05) or (self.app is not None and not self.app.is_running):
                    break
            if self.fail:
                raise OSError("the index could not be read (as a test makes it)")
            return real(refresh, on_progress)

        engine.listing = listing  # type: ignore[method-assign]


async def test_the_last_listing_is_painted_at_once_then_replaced_in_place(
        demo_engine, make_app) -> None:
    await _list_once(demo_engine, make_app)
    head_file = demo_engine.home.memdeck_dir / HEAD_FILE
    kept = json.loads(head_file.read_text())
    assert kept["total"] == 19 and len(kept["rows"]) == 19

    # five minutes later, a session the head lists is gone from the disk
    later = Engine.open(demo_engine.root, clock=FixedClock(FIXED_NOW + 300))
    head = later.listing_head()
    assert head is not None and head.total == 19
    gone = head.sessions[0]
    import os

    os.unlink(gone.rollout_path)
    held = HeldListing(later)
    app = make_app(later, listing_head=head)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.query_one(SessionTable)
        assert len(table.rows) == 19  # before any listing: the head's rows
        assert not table.loading
        assert _count(app) == "19 sessions · 5 min ago…"
        await pilot.press("down", "down")
        kept_row = table.current
        assert kept_row is not None and kept_row.rollout_path != gone.rollout_path
        held.go.set()
        await settle(app, pilot)
        assert len(table.rows) == 18  # the listing of now: the deleted session is gone
        assert gone.rollout_path not in {s.rollout_path for s in table.rows}
        assert table.current is not None
        assert table.current.rollout_path == kept_row.rollout_path  # the cursor stayed
        assert _count(app) == "18 sessions"
    # and the head kept for the next start is the listing of now
    assert json.loads(head_file.read_text())["total"] == 18


async def test_a_failed_listing_leaves_the_head_saying_it_is_not_up_to_date(
        demo_engine, make_app) -> None:
    await _list_once(demo_engine, make_app)
    later = Engine.open(demo_engine.root, clock=FixedClock(FIXED_NOW + 2 * 3600))
    head = later.listing_head()
    held = HeldListing(later, fail=True)
    app = make_app(later, listing_head=head)
    async with app.run_test(size=SIZE) as pilot:
        held.go.set()
        await settle(app, pilot)
        assert len(app.query_one(SessionTable).rows) == 19
        assert _count(app) == "19 sessions · 2 h ago"  # no "…": nothing is coming
        banner = app.query_one(HomeBanner)
        assert banner.display
        assert banner.warnings[-1] == ("the sessions shown are the listing of 2 h ago: listing "
                                       "them again failed (@ shows why; R tries again)")
        assert any("loading sessions failed" in m.text for m in app.message_log.entries)
        await pilot.press("R")  # failing again: said once, not twice
        await settle(app, pilot)
        assert sum("listing them again failed" in w for w in banner.warnings) == 1
        # R lists again; this time it works, and the rows and the banner say so
        held.fail = False
        await pilot.press("R")
        await settle(app, pilot)
        assert _count(app) == "19 sessions"
        assert not any("listing them again failed" in w for w in banner.warnings)


async def test_without_a_head_the_table_waits_for_the_listing(demo_engine, make_app) -> None:
    """No head (first start, or one damaged or another memdeck's): the table says it is
    loading, then shows the listing; nothing stale is ever painted."""
    head_file = demo_engine.home.memdeck_dir / HEAD_FILE
    head_file.parent.mkdir(parents=True, exist_ok=True)
    for damaged in ("{not json", json.dumps({"format": 99, "rows": []}), ""):
        head_file.write_text(damaged)
        assert demo_engine.listing_head() is None
    held = HeldListing(demo_engine)
    app = make_app(demo_engine, listing_head=demo_engine.listing_head())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.query_one(SessionTable)
        assert table.loading and not table.rows
        held.go.set()
        await settle(app, pilot)
        assert len(table.rows) == 19 and _count(app) == "19 sessions"
    assert demo_engine.listing_head() is not None  # a good one replaced the damaged file


def test_snapshot_the_last_listing_while_it_is_brought_up_to_date(demo_engine, make_app,
                                                                  snap_compare) -> None:
    """80×24: the head's rows, and the count saying they are the listing of 5 minutes ago."""
    import asyncio

    asyncio.run(_list_once(demo_engine, make_app))
    later = Engine.open(demo_engine.root, clock=FixedClock(FIXED_NOW + 300))
    held = HeldListing(later)
    app = held.app = make_app(later, listing_head=later.listing_head())

    async def run_before(pilot: Any) -> None:
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
    finally:
        held.go.set()


async def test_a_cold_start_shows_rows_as_they_are_indexed(home, make_app, monkeypatch) -> None:
    """No index and no head: the table fills batch by batch, the count saying how far the
    indexing got, before the whole listing lands."""
    from memdeck.engine.index import session_index as index_mod
    from memdeck.tui.panes import sessions as sessions_mod
    from memdeck.tui.panes.sessions import SessionsPane

    for i in range(40):
        home.add("cli-preferences.jsonl", name=f"rollout-2026-12-01T10-00-{i:02d}-x{i}.jsonl")
    monkeypatch.setattr(index_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(index_mod, "BATCH_FILES", 4)
    monkeypatch.setattr(sessions_mod, "PROGRESS_EVERY_S", 0.0)
    partial: list[tuple[int, tuple[int, int]]] = []
    labels: list[str] = []
    real = SessionsPane.apply_filter

    def apply_filter(self: SessionsPane) -> None:  # what each listing that lands shows
        real(self)
        if self._indexing is not None and self._updating:
            partial.append((len(self.sessions), self._indexing))
            labels.append(_count(self.app))

    monkeypatch.setattr(SessionsPane, "apply_filter", apply_filter)
    engine = Engine.open(home.root)
    app = make_app(engine, listing_head=engine.listing_head())
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert len(app.query_one(SessionTable).rows) == 40
        assert _count(app) == "40 sessions"
    assert partial, "no rows were shown before the index was complete"
    assert all(n == done < of == 40 for n, (done, of) in partial)
    assert labels[0] == f"{partial[0][0]} sessions, indexing {partial[0][0]} of 40…"


async def test_a_quick_listing_that_was_the_full_one_stops_saying_updating(
        demo_engine, make_app) -> None:
    """A warm index with nothing new on disk: the listing shown first is confirmed as the
    full one, and the count drops its `updating…` (it once kept it for good)."""
    demo_engine.listing()  # the index is built: the next start's quick listing is the whole
    app = make_app(demo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert _count(app) == "19 sessions"
