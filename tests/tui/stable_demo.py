"""The demo home at a fixed path, for snapshots of what shows memory file contents.

The demo's memory files quote the home's absolute path (rollout_path=…), so under pytest's
numbered `tmp_path` both the diffs on screen and the history's commit hashes change from run
to run even though the engine's fixed clock dates every commit. Built at the same path every
time they do not."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdeck.engine import Engine, demo_home
from memdeck.engine.clock import FixedClock
from tests.tui.conftest import FIXED_NOW

# /tmp itself where there is one: $TMPDIR may differ between machines, the path must not
STABLE_ROOT = (Path("/tmp") if Path("/tmp").is_dir() else Path(tempfile.gettempdir())) \
    / "memdeck-tui-snapshots"


@pytest.fixture
def stable_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """`demo_engine`, but at <tmp>/memdeck-tui-snapshots/<test name>/demo-home. Two suites
    running at once (tests/test_any_date.py runs some beside the main one) take turns at the
    same path: a lock file beside it is held for the test's whole run."""
    import fcntl

    where = STABLE_ROOT / request.node.name
    STABLE_ROOT.mkdir(exist_ok=True)
    with open(STABLE_ROOT / f"{request.node.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(where, ignore_errors=True)
        clock = FixedClock(FIXED_NOW)
        yield Engine.open(demo_home(where / "demo-home", clock), clock=clock)
        shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
def fixed_proposal_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proposal ids end in 4 random hex digits (two proposals in one second must not
    collide); a snapshot shows the id, so the suffix is pinned for it."""
    import types

    import memdeck.engine.phase2.proposals as proposals_mod

    monkeypatch.setattr(proposals_mod, "_random",
                        types.SimpleNamespace(token_hex=lambda n: "5eed"[: 2 * n]))
