"""Directory swaps: readers see the old folder or the new one, even across a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdeck.engine.memory_folder.swap import _journaled_swap, exchange, recover


def make(tmp_path: Path) -> tuple[Path, Path, Path]:
    live, new = tmp_path / "memories", tmp_path / "memories.new"
    for d, text in ((live, "old"), (new, "new")):
        (d / "sub").mkdir(parents=True)
        (d / "MEMORY.md").write_text(text)
        (d / "sub" / "f").write_text(text)
    return live, new, tmp_path / "swap.journal"


@pytest.mark.parametrize("atomic", [True, False])
def test_exchange_swaps_whole_folders(tmp_path: Path, atomic: bool) -> None:
    live, new, journal = make(tmp_path)
    method = exchange(live, new, journal, atomic=atomic)
    assert method == ("exchange" if atomic else "journal")
    assert (live / "MEMORY.md").read_text() == "new" and (live / "sub" / "f").read_text() == "new"
    assert (new / "MEMORY.md").read_text() == "old"
    assert not journal.exists() and recover(journal, live, new) is None


@pytest.mark.parametrize("crash_after", [0, 1, 2])
def test_a_crash_anywhere_is_finished_on_recovery(tmp_path: Path, crash_after: int) -> None:
    live, new, journal = make(tmp_path)
    with pytest.raises(SystemExit):
        _journaled_swap(live, new, journal, crash_after=crash_after)
    assert journal.exists()
    recover(journal, live, new)
    assert not journal.exists()
    # readers never see a mix: the live folder is entirely one version
    texts = {(live / "MEMORY.md").read_text(), (live / "sub" / "f").read_text()}
    if crash_after == 0:  # nothing had moved: the old state stands
        assert texts == {"old"} and (new / "MEMORY.md").read_text() == "new"
    else:  # past the first rename: the swap is completed
        assert texts == {"new"} and (new / "MEMORY.md").read_text() == "old"


def test_a_swap_journal_is_only_followed_for_the_folders_it_was_written_for(
        tmp_path: Path) -> None:
    """An edited swap journal naming other folders moves nothing: the names come from the
    change's own journal, never from the swap journal."""
    live, new, journal = make(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    journal.write_text(json.dumps({"a": str(outside), "b": str(live), "tmp": str(new)}))
    assert recover(journal, live, new) is None  # not about these two: left alone
    assert (live / "MEMORY.md").read_text() == "old" and outside.is_dir()
