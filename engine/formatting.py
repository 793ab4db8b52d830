"""How memdeck writes times, durations and sizes: for JSON, for Codex's files and for people.

The one formatting module: the CLI, the TUI and the engine's own reasons all format through
it, so a date reads the same on every screen. Pure functions of their arguments (local time
comes from the process's time zone); foundation level, so it imports nothing of memdeck.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

# -- machine-readable ------------------------------------------------------------------------


def iso_utc(ts: float | None) -> str | None:
    """ISO-8601 UTC with a Z suffix, second precision (the CLI's JSON time format)."""
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(ts)))


def rfc3339_utc(ts: float) -> str:
    """`2026-08-20T14:05:00+00:00`, the form Codex writes in rollout summary headers."""
    return datetime.fromtimestamp(int(ts), UTC).isoformat()


# -- for people: local times ------------------------------------------------------------------


def local_time(ts: float | None, missing: str = "?") -> str:
    """`2026-08-20 16:05`, local time, to the minute; `missing` when there is no time (None
    or 0). Tables, headers and confirmations use this one."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else missing


def local_time_with_seconds(ts: float | None, missing: str = "?") -> str:
    """`2026-08-20 16:05:09`: as `local_time`, with seconds (backups: two may be taken in
    the same minute)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else missing


def time_of_day(ts: float) -> str:
    """`16:05:09`, local time: the stamp of a line in a running log (`memdeck watch`)."""
    return time.strftime("%H:%M:%S", time.localtime(ts))


def ago(ts: float | None, now: float) -> str:
    """How long before `now`: `12 min ago`, `5 h ago`, `3 d ago`; a date after two weeks."""
    if ts is None:
        return "?"
    d = now - ts
    if d < 0:
        return "in the future"
    if d < 3600:
        return f"{d / 60:.0f} min ago"
    if d < 48 * 3600:
        return f"{d / 3600:.0f} h ago"
    if d < 14 * 86400:
        return f"{d / 86400:.0f} d ago"
    return time.strftime("%Y-%m-%d", time.localtime(ts))


# -- for people: amounts ----------------------------------------------------------------------


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


def human_size(n: int) -> str:
    """A file's size: `812 B`, `3.4 KB`, `1.2 MB` (binary units)."""
    if n < 1024:
        return f"{n} B"
    if n < 1024**2:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024**2:.1f} MB"
