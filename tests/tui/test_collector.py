"""The app holds Python's garbage collector off while it starts and freezes what it has built
(tui/collector.py): collection must be on again once the first listing is drawn, and what the
app froze must be released when it closes."""

from __future__ import annotations

import gc

from memdeck.tui import collector
from tests.tui.conftest import SIZE
from tests.tui.test_live_updates import wait_until


async def test_collection_is_back_on_after_the_first_listing(demo_engine, make_app) -> None:
    collector.hold()  # as `memdeck` does before importing Textual
    assert not gc.isenabled()
    try:
        app = make_app(demo_engine)
        async with app.run_test(size=SIZE) as pilot:
            assert await wait_until(pilot, lambda: app._listed)
            assert await wait_until(pilot, gc.isenabled, 5.0), "collection stays off after start"
            frozen = gc.get_freeze_count()
            assert frozen > 0, "the start-up objects are frozen"
            await pilot.press("6")
            assert await wait_until(pilot, lambda: gc.get_freeze_count() > frozen), \
                "the Settings pane's widgets are frozen once built"
        assert gc.get_freeze_count() == 0, "released when the app closes"
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()
