"""Named moments inside a change of the memory folder, where a crash trial may kill memdeck.

`bench/soak.py` and the crash tests set `MEMDECK_CRASH_AT=<step>` (one of `STEPS`) in a
memdeck process's environment; when that process reaches the step it kills itself with
SIGKILL, exactly as `kill -9` would, leaving whatever is on disk for the next command's
recovery (docs/architecture.md "Changing the memory folder"). `MEMDECK_CRASH_AT=<step>@N`
kills at the N-th time the step is reached (1-based). Unset, a step costs one dict lookup.

`MEMDECK_PAUSE_AT=<step>[,<step>…]` with `MEMDECK_PAUSE_DIR=<dir>` pauses instead: at each
named step the process creates `<dir>/<step>` and waits (at most a minute) until it is
removed, so a race test can write into the memory folder at exactly that moment.

Foundation module: imports nothing from the engine.
"""

from __future__ import annotations

import os
import signal
import time

# every step, by operation; the soak enumerates these, and `crash_point` refuses others
STEPS: tuple[str, ...] = (
    # the one switch every change goes through (engine/memory_folder/switch.py)
    "switch.staged",        # the new folder is built beside the live one; no journal yet
    "switch.journaled",     # the journal is durable; the live folder is still the old one
    "switch.swapped",       # the new folder is live; rows, history and clean-up not done
    "switch.rows",          # the rows that go with it are written; history not yet
    "switch.recorded",      # history holds the new state; the old folder is not removed yet
    # history (engine/memory_folder/history.py)
    "history.added",        # `git add` ran (index.lock may be held by git until commit)
    # forget (engine/phase1/forget.py)
    "forget.appended",      # the disabled session_meta is appended; rows not deleted yet
    # a backup being written (engine/memory_folder/backup.py)
    "backup.writing",       # part of the archive is in its temp file
)

_SEEN: dict[str, int] = {}


def crash_point(step: str) -> None:
    """Die here, as `kill -9` would, or pause, if this process was told to (module doc)."""
    want = os.environ.get("MEMDECK_CRASH_AT")
    if os.environ.get("MEMDECK_PAUSE_AT"):
        _pause(step)
    if not want:
        return
    if step not in STEPS:
        raise ValueError(f"unknown crash point {step!r}")
    name, _, nth = want.partition("@")
    if name != step:
        return
    _SEEN[step] = _SEEN.get(step, 0) + 1
    if _SEEN[step] >= (int(nth) if nth.isdigit() else 1):
        os.kill(os.getpid(), signal.SIGKILL)


def _pause(step: str) -> None:
    if step not in os.environ["MEMDECK_PAUSE_AT"].split(","):
        return
    marker = os.path.join(os.environ.get("MEMDECK_PAUSE_DIR", "."), step)
    with open(marker, "w"):
        pass
    deadline = time.monotonic() + 60
    while os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.01)
