"""Accepting some hunks of a proposal."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import plant_secret

from memdeck.engine import Engine, demo_home
from memdeck.engine.memory_folder.accept import AcceptRefused
from memdeck.engine.phase2.hunks import apply_hunks, file_hunks

OLD = [f"line {i}\n" for i in range(1, 21)]
NEW = OLD[:2] + ["inserted early\n"] + OLD[2:15] + ["changed late\n"] + OLD[16:]


def test_hunks_apply_one_by_one() -> None:
    hunks = file_hunks("f", OLD, NEW)
    assert [h.index for h in hunks] == [0, 1]
    assert "+inserted early\n" in hunks[0].lines and "-line 16\n" in hunks[1].lines
    assert apply_hunks(OLD, NEW, {0, 1}) == NEW
    assert apply_hunks(OLD, NEW, set()) == OLD
    only_late = apply_hunks(OLD, NEW, {1})
    assert "inserted early\n" not in only_late and "changed late\n" in only_late
    assert apply_hunks([], ["a\n", "b\n"], {0}) == ["a\n", "b\n"]  # a new file


@pytest.fixture
def proposed(tmp_path: Path):
    home = demo_home(tmp_path / "demo")
    eng = Engine.open(home)
    eng.extract(backend="offline")
    return home, eng, eng.consolidate()


def test_accept_only_the_chosen_hunks(proposed) -> None:
    home, eng, p = proposed
    memory_hunks = [h for h in eng.proposal_hunks(p.id) if h.path == "MEMORY.md"]
    django = next(h for h in memory_hunks if any("Upgrade Django" in x for x in h.lines))
    others = [h for h in memory_hunks if h is not django]
    assert others  # the proposal changes MEMORY.md in more than one place
    result = eng.accept(p.id, hunks={"MEMORY.md": [django.index]})
    assert result.status == "partial"
    text = (home / "memories" / "MEMORY.md").read_text()
    assert "Upgrade Django to 5.1" in text and "Add a bucket for invoices" not in text
    assert "Upgrade Django" not in (home / "memories" / "raw_memories.md").read_text()


def test_bad_hunk_choices_are_refused(proposed) -> None:
    home, eng, p = proposed
    with pytest.raises(AcceptRefused, match="no hunk 99"):
        eng.accept(p.id, hunks={"MEMORY.md": [99]})
    with pytest.raises(AcceptRefused, match="not changed by proposal"):
        eng.accept(p.id, hunks={"nope.md": [0]})


def test_a_hunk_that_adds_a_secret_is_refused(tmp_path: Path) -> None:
    home = demo_home(tmp_path / "s")
    eng = Engine.open(home)
    eng.extract(backend="offline")
    plant_secret(home)
    p = eng.consolidate()
    secret = p.secrets[0]
    bad = next(h for h in eng.proposal_hunks(p.id) if h.path == secret["path"] and
               h.new_range[0] <= secret["line"] < h.new_range[0] + h.new_range[1])
    with pytest.raises(AcceptRefused, match="adds a secret"):
        eng.accept(p.id, hunks={bad.path: [bad.index]})
