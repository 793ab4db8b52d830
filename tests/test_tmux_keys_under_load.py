"""Issue 23, item 6, in the real app in a real terminal with every core busy: keys typed while
a pane is built land where they were meant to, and a pane visited again always has its focus
where its keys work (tests/keys_under_load.py says what one trial does; bench/keys_under_load.py
runs 50)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.keys_under_load import every_core_busy, run_trials
from tests.test_tmux_e2e import _memdeck_script, _tmux_or_skip

TRIALS = 4  # 20 checks; the bench runs 50 trials

pytestmark = pytest.mark.slow


def test_keys_during_a_pane_build_and_revisits_never_miss_under_load(tmp_path: Path) -> None:
    _tmux_or_skip()
    env = {k: os.environ[k] for k in ("CODEX_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                                      "XDG_CACHE_HOME") if k in os.environ}
    with every_core_busy():
        result = run_trials(TRIALS, tmp_path, _memdeck_script(), env)
    assert result.runs == TRIALS and result.checks == TRIALS * 5
    assert result.misses == [], "\n".join(result.misses)
