"""Time: an injectable clock, and reading the timestamps Codex writes (`parse_iso`).

Writing times, durations and sizes is `formatting`'s job."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the Unix epoch."""
        ...


class SystemClock:
    def now(self) -> float:
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
