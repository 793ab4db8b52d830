#!/usr/bin/env python3
"""Keys typed while a pane is built, 50 times, in the real app in tmux with every core busy
(issue 23, item 6): tests/keys_under_load.py says what one trial checks (`6` then `5` 150 ms
later on first visits, three revisits of Review, `j` right after `5`). Prints the checks and
the misses; exits 1 on any miss.

    .venv/bin/python bench/keys_under_load.py [--trials 50] [--no-load]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.keys_under_load import every_core_busy, run_trials  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--no-load", action="store_true", help="leave the cores idle")
    args = ap.parse_args()
    memdeck = Path(sys.executable).parent / "memdeck"
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memdeck-keys-") as tmp:
        env = {"XDG_DATA_HOME": f"{tmp}/data", "XDG_CONFIG_HOME": f"{tmp}/config",
               "XDG_CACHE_HOME": f"{tmp}/cache"}
        load = contextlib.nullcontext(0) if args.no_load else every_core_busy()
        with load as busy:
            result = run_trials(args.trials, Path(tmp), memdeck, env)
    print(f"{result.runs} fresh app processes, {result.checks} checks, "
          f"{len(result.misses)} misses ({busy or 'no'} busy cores, "
          f"{time.monotonic() - start:.0f} s)")
    for m in result.misses:
        print("  miss:", m)
    return 1 if result.misses else 0


if __name__ == "__main__":
    sys.exit(main())
