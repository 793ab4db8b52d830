"""Issue 23, item 1: a History restore leaves every session's status exactly as it was when
the restored state was live, going back and coming forward again, in memory v1 and v2, in the
engine (what the app shows) and in `memdeck sessions --json`.

Codex's selection (`selected_for_phase2`) says which raw memories the memory folder holds; a
restore makes it follow the restored files (docs/architecture.md "History")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from suite_clock import now

from memdeck.engine import Engine, demo_home
from memdeck.engine.clock import FixedClock
from memdeck.tui.cli import main

_NUMBERS = re.compile(r"\d+(?:\.\d+)?")


def statuses(eng: Engine) -> dict[str, tuple[str, str]]:
    """id -> (status, reason with its numbers blanked: ages move, meanings must not)."""
    return {s.id or s.rollout_path: (s.status, _NUMBERS.sub("#", s.reason))
            for s in eng.sessions()}


def cli_statuses(home: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    assert main(["sessions", "--json", "--home", str(home)]) == 0
    return {s["id"] or s["rollout_path"]: s["status"] for s in json.loads(capsys.readouterr().out)}


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_a_restore_brings_back_the_statuses_of_the_state_it_restores(
        tmp_path: Path, version: str, capsys: pytest.CaptureFixture[str]) -> None:
    clock = FixedClock(now())
    home = demo_home(tmp_path / "demo", clock)
    eng = Engine.open(home, clock=clock)
    if version == "v2":
        eng.config_set("version", "v2")
        eng = Engine.open(home, clock=clock)
    if version == "v2":  # no root yet: a first consolidation of one session makes state A
        eng.extract(backend="offline", limit=1)
        eng.accept(eng.consolidate().id)
    eng.extract(backend="offline")  # the rest wait for a consolidation while A is live
    eng.record_outside_edits()  # v1: the demo's folder, as memdeck first finds it
    state_a = eng.history()[0].commit
    seen_a, cli_a = statuses(eng), cli_statuses(home, capsys)

    eng.memory_note("the staging cluster is in eu-west-1")
    eng.accept(eng.consolidate().id)  # state B: a consolidation that takes in every row
    state_b = eng.history()[0].commit
    seen_b, cli_b = statuses(eng), cli_statuses(home, capsys)
    assert seen_a != seen_b  # the consolidation changed what the statuses say
    waiting = [k for k, (s, r) in seen_a.items() if "waiting for consolidation" in r]
    assert waiting and all("in the consolidated memory" in seen_b[k][1] for k in waiting)

    eng.restore(state_a)  # back
    assert statuses(eng) == seen_a
    assert cli_statuses(home, capsys) == cli_a
    eng.restore(state_b)  # and forward again: the sessions in it are in memory again
    assert statuses(eng) == seen_b
    assert cli_statuses(home, capsys) == cli_b
