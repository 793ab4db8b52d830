"""The one formatting module gives every screen the strings the five `when`s, `ago` and
`human_size` gave before it (TZ is UTC here: see conftest)."""

from __future__ import annotations

from memdeck.engine import (
    ago,
    human_duration,
    human_size,
    iso_utc,
    local_time,
    local_time_with_seconds,
    rfc3339_utc,
    time_of_day,
)
from tests.tui.conftest import FIXED_NOW  # 2026-11-20 12:00:00 UTC


def test_local_times() -> None:
    t = FIXED_NOW + 9
    assert local_time(t) == "2026-11-20 12:00"  # tables, headers, confirmations
    assert local_time(None) == "?" and local_time(0) == "?"
    assert local_time(None, "never") == "never"  # raw memories: never used, never generated
    assert local_time_with_seconds(t) == "2026-11-20 12:00:09"  # backups
    assert time_of_day(t) == "12:00:09"  # `memdeck watch` lines


def test_relative_times() -> None:
    assert ago(None, FIXED_NOW) == "?"
    assert ago(FIXED_NOW + 1, FIXED_NOW) == "in the future"
    assert ago(FIXED_NOW - 600, FIXED_NOW) == "10 min ago"
    assert ago(FIXED_NOW - 5 * 3600, FIXED_NOW) == "5 h ago"
    assert ago(FIXED_NOW - 3 * 86400, FIXED_NOW) == "3 d ago"
    assert ago(FIXED_NOW - 30 * 86400, FIXED_NOW) == "2026-10-21"


def test_machine_times_durations_and_sizes() -> None:
    assert iso_utc(FIXED_NOW + 0.7) == "2026-11-20T12:00:00Z" and iso_utc(None) is None
    assert rfc3339_utc(FIXED_NOW) == "2026-11-20T12:00:00+00:00"
    assert [human_duration(s) for s in (45, -45, 720, 6 * 3600 + 720, 302400)] == [
        "45 s", "45 s", "12 min", "6.2 h", "3.5 d"]
    assert [human_size(n) for n in (0, 1023, 1024, 3481, 1024**2, 5 * 1024**3)] == [
        "0 B", "1023 B", "1.0 KB", "3.4 KB", "1.0 MB", "5120.0 MB"]


def test_statuses_a_user_must_tell_apart_have_colours_far_apart() -> None:
    """Issue 10: `disabled` (the user's choice) was the red of `failed`, `no_output` the green
    of `extracted`. Compared as the RGB a terminal shows, not as style names."""
    from rich.style import Style

    from memdeck.tui.render import STATUS_STYLE

    def rgb(status: str) -> tuple[int, int, int]:
        color = Style.parse(STATUS_STYLE[status]).color
        assert color is not None, status
        t = color.get_truecolor()
        return t.red, t.green, t.blue

    def far(a: str, b: str) -> bool:
        return sum((x - y) ** 2 for x, y in zip(rgb(a), rgb(b), strict=True)) ** 0.5 > 150

    for a, b in [("disabled", "failed"), ("disabled", "unreadable"), ("no_output", "extracted"),
                 ("polluted", "failed"), ("no_output", "running")]:
        assert far(a, b), (a, b, rgb(a), rgb(b))
