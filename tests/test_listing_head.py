"""The listing's head kept for the next start (engine/index/listing_head.py): written whole or
not at all, read back as the sessions it was, never trusted when it is not memdeck's own."""

from __future__ import annotations

import json

from memdeck.engine import Engine
from memdeck.engine.index.listing_head import HEAD_FILE, HEAD_ROWS, save_head


def test_a_kept_head_reads_back_as_the_listing_it_was(home) -> None:
    for i in range(3):
        home.add("cli-preferences.jsonl", name=f"rollout-2026-12-01T10-00-0{i}-x{i}.jsonl")
    home.add("codex-0.171-exec.jsonl")
    engine = Engine.open(home.root)
    listing = engine.listing()
    engine.keep_listing_head(listing)
    head = engine.listing_head()
    assert head is not None
    assert head.sessions == listing.sessions  # every field, in the listing's order
    assert head.total == 4
    assert abs(head.listed_at - engine.clock.now()) < 60


def test_only_the_first_rows_are_kept_with_the_total(home) -> None:
    engine = Engine.open(home.root)
    home.add("cli-preferences.jsonl")
    [one] = engine.listing().sessions
    engine.home.memdeck_dir.mkdir(exist_ok=True)
    save_head(engine.home.memdeck_dir, [one] * (HEAD_ROWS + 50), 1000.0)
    head = engine.listing_head()
    assert head is not None and len(head.sessions) == HEAD_ROWS
    assert head.total == HEAD_ROWS + 50


def test_a_damaged_or_foreign_head_is_not_trusted(home) -> None:
    home.add("cli-preferences.jsonl")
    engine = Engine.open(home.root)
    engine.keep_listing_head(engine.listing())
    path = engine.home.memdeck_dir / HEAD_FILE
    good = json.loads(path.read_text())
    bad_docs = [
        "", "{", "[]", "null",
        json.dumps({**good, "format": 2}),  # a newer memdeck's
        json.dumps({**good, "fields": good["fields"][:-1]}),  # a Session of another shape
        json.dumps({**good, "rows": [good["rows"][0][:-1]]}),
        json.dumps({**good, "rows": [[None] * len(good["fields"])]}),
        json.dumps({**good, "total": "many"}),
    ]
    for text in bad_docs:
        path.write_text(text)
        assert engine.listing_head() is None, text
    path.write_bytes(b"\xff\xfe not utf-8")
    assert engine.listing_head() is None


def test_no_head_is_written_where_memdeck_cannot_write(home, monkeypatch) -> None:
    home.add("cli-preferences.jsonl")
    engine = Engine.open(home.root)
    listing = engine.listing()
    monkeypatch.setattr(type(engine.home), "read_only", lambda self: True)
    engine.keep_listing_head(listing)
    assert not (engine.home.memdeck_dir / HEAD_FILE).exists()
    assert engine.listing_head() is None


def test_no_memdeck_folder_is_made_for_a_head(tmp_path) -> None:
    (tmp_path / "sessions").mkdir()
    save_head(tmp_path / "memdeck", [], 0.0)
    assert not (tmp_path / "memdeck").exists()
