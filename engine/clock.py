"""Time: an injectable clock and the few formats memdeck prints."""

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


def iso_utc(ts: float | None) -> str | None:
    """ISO-8601 UTC with a Z suffix, second precision (the CLI's JSON time format)."""
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(ts)))


def rfc3339_utc(ts: float) -> str:
    """`2026-08-20T14:05:00+00:00`, the form Codex writes in rollout summary headers."""
    return datetime.fromtimestamp(int(ts), UTC).isoformat()


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


def human_duration(seconds: float) -> str:
    """Short, rounded durations for reasons: `45 s`, `12 min`, `1.2 h`, `3.5 d`."""
    s = abs(seconds)
    if s < 90:
        return f"{s:.0f} s"
    if s < 90 * 60:
        return f"{s / 60:.0f} min"
    if s < 48 * 3600:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"
