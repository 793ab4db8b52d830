"""The suite on any date (issue 28): the date-sensitive tests, run with the clock moved.

Each case runs the modules that build the demo, name notes and backups, or read ages and dates
in a fresh `pytest` with `MEMDECK_CLOCK_SHIFT` set, so that the tests (`suite_clock.now()`),
the engine and every `memdeck` process they start all live at the moved date, and in a time
zone far from UTC, so that the local date and the UTC date differ. The cases that start at
23:59:50 local time cross midnight ten seconds in: the tests before it and after it run on
different local dates (and months, and years), and the ones that span it see the date change
under them.

The shift moves memdeck's clock, not the kernel's: a file the tests write without dating it
(`suite_clock.written_now`) carries the kernel's time, as it would on a machine whose clock is
wrong. The codex_oracle tests are not run here: the real Codex binary lives on the kernel's
clock."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memdeck.engine.clock import SHIFT_ENV

REPO = Path(__file__).resolve().parent.parent

# what moves with the date: notes and backups named by the time, the demo built relative to
# now, ages and drop-out dates, the dates of history commits, idle and age rules
DATE_SENSITIVE = [
    "tests/test_workspace.py",
    "tests/test_status_pruning.py",
    "tests/test_index_incremental.py",
    "tests/test_line_usage.py",
    "tests/test_citation_usage.py",
    "tests/test_reset_backup.py",
    "tests/test_consolidate_notes.py",
    "tests/test_memory_edit.py",
    "tests/test_forget.py",
    "tests/test_demo.py",
    "tests/test_history.py",
    "tests/test_trace.py",
    "tests/test_said_remembered.py",
    "tests/test_cli.py",
    "tests/tui/test_history_pane.py",
    "tests/tui/test_memory_pane.py::test_snapshot_viewing_memory_md",
]

# POSIX TZ strings (no tz database needed): the sign is the other way round, "<+14>-14" is
# UTC+14, where the local date is already tomorrow's for most of a UTC day
ZONES = {"UTC": ("UTC0", 0), "UTC+9": ("<+09>-9", 9), "UTC-10": ("<-10>10", -10),
         "UTC+14": ("<+14>-14", 14)}


def _last_day(year: int, month: int) -> int:
    nxt = datetime(year + (month == 12), month % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day


def _next_month(year: int, month: int) -> tuple[int, int]:
    return year + (month == 12), month % 12 + 1


def _local(real: float, zone: str, pick: str) -> float:
    """The instant of `pick` in `zone`, always after `real` (so that no case goes back to
    before the dates the fixtures were written on)."""
    offset = timezone(timedelta(hours=ZONES[zone][1]))
    today = datetime.fromtimestamp(real, offset)
    year, month = _next_month(today.year, today.month)
    if pick == "month end":  # 23:59:50 on the last day of next month (not December)
        if month == 12:
            year, month = year + 1, 1
        at = datetime(year, month, _last_day(year, month), 23, 59, 50, tzinfo=offset)
    elif pick == "year end":  # 23:59:50 on the next 31 December at least a day away
        year = today.year if (today.month, today.day) < (12, 31) else today.year + 1
        at = datetime(year, 12, 31, 23, 59, 50, tzinfo=offset)
    else:  # "00:01": the first of the month after next
        year, month = _next_month(year, month)
        at = datetime(year, month, 1, 0, 1, tzinfo=offset)
    return at.timestamp()


CASES = {
    # name: (zone, how far to move the clock, given the real time now)
    "tomorrow": ("UTC", lambda real: 86400.0),
    "in 31 days": ("UTC+9", lambda real: 31 * 86400.0),
    # these two cross midnight ten seconds in: a month's end, and the year's
    "23:59 on a month's last day": (
        "UTC-10", lambda real: _local(real, "UTC-10", "month end") - real),
    "23:59 on 31 December": ("UTC+14", lambda real: _local(real, "UTC+14", "year end") - real),
    "00:01 on the first of a month": (
        "UTC+9", lambda real: _local(real, "UTC+9", "00:01") - real),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_date_sensitive_tests_pass_at(case: str, tmp_path: Path) -> None:
    zone, shift_for = CASES[case]
    shift = shift_for(time.time())  # the one reading of the kernel's clock: the distance
    env = {**os.environ, SHIFT_ENV: f"{shift:.0f}", "TZ": ZONES[zone][0]}
    env.pop("PYTEST_XDIST_WORKER", None)
    moved = datetime.fromtimestamp(time.time() + shift, UTC)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "--basetemp", str(tmp_path / "run"), *DATE_SENSITIVE],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
    assert proc.returncode == 0, f"at {moved:%Y-%m-%d %H:%M} UTC ({zone}):\n{tail}"
