"""The suite's one clock.

Tests build homes, name notes and backups and read ages from `now()`, never from the wall
clock: it is the engine's `SystemClock`, so when tests/test_any_date.py runs part of the suite
with `MEMDECK_CLOCK_SHIFT` set, the tests, the engine under test and every `memdeck` process
they start all agree on the moved date."""

from __future__ import annotations

import os

from memdeck.engine.clock import SystemClock


def now() -> float:
    """Seconds since the epoch, as memdeck's own clock says."""
    return SystemClock().now()


def written_now(path: str | os.PathLike[str]) -> None:
    """Date a file the test just wrote by `now()`: the kernel stamps a write with its own
    clock, which is not the suite's when the suite runs at another date."""
    t = now()
    os.utime(path, (t, t))
