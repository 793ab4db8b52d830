"""Time: one injectable clock, and reading the timestamps Codex writes (`parse_iso`).

Every "now" memdeck decides with (ages, idle rules, leases, names of notes and backups, the
dates of history commits) comes from a `Clock`; no other module reads the wall clock (a test
enforces it, tests/test_one_clock.py). `SystemClock` is the wall clock moved by
`MEMDECK_CLOCK_SHIFT` seconds when that is set: the test suite uses it to run at other dates
(tests/test_any_date.py), as git's suite uses GIT_TEST_DATE_NOW. `kernel_now` is the one
exception, for comparing with an mtime the kernel set itself (how old a lock file is).

Writing times, durations and sizes is `formatting`'s job."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the Unix epoch."""
        ...


SHIFT_ENV = "MEMDECK_CLOCK_SHIFT"


def clock_shift() -> float:
    """`MEMDECK_CLOCK_SHIFT` in seconds (0 when unset; a value that is not a number is
    ignored rather than moving every date memdeck writes by accident)."""
    raw = os.environ.get(SHIFT_ENV, "").strip()
    try:
        shift = float(raw) if raw else 0.0
    except ValueError:
        return 0.0
    return shift if shift == shift and abs(shift) < 1e10 else 0.0  # no NaN, no overflow


class SystemClock:
    """The wall clock, moved by `MEMDECK_CLOCK_SHIFT` (read once, when made)."""

    def __init__(self) -> None:
        self.shift = clock_shift()

    def now(self) -> float:
        return time.time() + self.shift


def kernel_now() -> float:
    """The kernel's own time, never shifted: only to compare with an mtime the kernel set
    (how long ago a lock or journal file was last written), never to decide a date."""
    return time.time()


class FixedClock:
    """A clock that stands still (tests, snapshots); `advance` moves it."""

    def __init__(self, at: float) -> None:
        self.at = float(at)

    def now(self) -> float:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += seconds


def parse_iso(text: object) -> float | None:
    """Parse an RFC 3339 / ISO-8601 timestamp into epoch seconds; None when it is not one."""
    if not isinstance(text, str) or not text:
        return None
    s = text.strip()
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()
