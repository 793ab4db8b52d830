"""When Python's cyclic garbage collector may run in the app.

Measured (bench/tui.py; 2026-12-03): a full collection walks every object the app holds,
~155,000 on the demo home and far more with a 10,000-row listing, and takes 150–200 ms on the
2-core machine we develop on. Textual allocates enough while laying out a screen that one
such collection fell inside nearly every switch to the Settings pane: the switch took
~210 ms instead of ~40. So:

* while the app starts, nothing is collected (`hold`): startup builds long-lived objects
  only, and its few cycles are freed at the first `settle`;
* once the first listing is drawn, and once each pane is built for the first time (`settle`),
  everything alive then is frozen: later collections (which still run, and free what the
  app drops later) walk only what was allocated after it. Freezing is a list splice, no
  collection; a cycle that was garbage at that moment is kept, a bounded cost paid at most
  once per pane.

Nothing here changes what the app shows; a watchdog re-enables collection if no first paint
ever comes."""

from __future__ import annotations

import gc
import threading

HOLD_LIMIT_S = 10.0  # however start-up ends, collection is back on by then


def hold() -> None:
    """No collection until the first `settle` (or HOLD_LIMIT_S)."""
    gc.disable()
    timer = threading.Timer(HOLD_LIMIT_S, gc.enable)
    timer.daemon = True
    timer.start()


def settle() -> None:
    """Freeze what is alive now and turn collection (back) on. The app calls it once after
    its first listing and once per pane it builds."""
    gc.freeze()
    gc.enable()


def release() -> None:
    """The app is closing: what was frozen may be collected again (a process that runs
    several apps, such as the test suite, would otherwise keep every one of them)."""
    gc.unfreeze()
    gc.enable()
