"""A cold index says how far it got, and what is stored so far can be listed meanwhile: the
app shows rows as they are indexed instead of an empty table for seconds (issue 23 item 10)."""

from __future__ import annotations

from memdeck.engine import Engine
from memdeck.engine.index import session_index as index_mod


def test_a_cold_listing_reports_each_stored_batch_and_can_list_it(home, monkeypatch) -> None:
    for i in range(40):
        home.add("cli-preferences.jsonl", name=f"rollout-2026-12-01T10-00-{i:02d}-x{i}.jsonl")
    monkeypatch.setattr(index_mod, "PARALLEL_MIN_BYTES", 0)  # the pool, in batches
    monkeypatch.setattr(index_mod, "BATCH_FILES", 4)
    engine = Engine.open(home.root)
    seen: list[tuple[int, int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total, len(engine.listing(refresh=False).sessions)))

    listing = engine.listing(on_progress=progress)
    assert len(listing.sessions) == 40
    assert len(seen) >= 2  # more than one batch
    assert [t for _, t, _ in seen] == [40] * len(seen)
    dones = [d for d, _, _ in seen]
    assert dones == sorted(dones) and dones[-1] == 40 and dones[0] < 40
    # what a listing made inside the callback holds: exactly the rollouts stored so far
    assert all(listed == done for done, _, listed in seen)


def test_a_warm_listing_reports_nothing(home) -> None:
    home.add("cli-preferences.jsonl")
    engine = Engine.open(home.root)
    engine.listing()
    calls: list[tuple[int, int]] = []
    engine.listing(on_progress=lambda d, t: calls.append((d, t)))
    assert calls == []
