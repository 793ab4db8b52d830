"""Where an interrupted change of the memory folder leaves its traces, found without importing
the machinery that finishes one: every command opens the home through `leftovers.recover`, and
on almost every run there is nothing to recover (importing switch.py and accept.py, and the
phase-2 modules behind them, cost each command 25 ms)."""

from __future__ import annotations

from pathlib import Path

from ..codex.home import CodexHome

JOURNAL = "change.journal"  # switch.py: the change being made, written before anything moves
STAGING = "staging"  # switch.py: the roots a change builds before its journal


def legacy_paths(home: CodexHome) -> tuple[Path, Path, Path, Path]:
    """An older memdeck's accept (accept.py `recover_legacy`): the root, its build folder
    beside it and its journals."""
    root = home.memory_root
    return (root, root.with_name(f".{root.name}.memdeck-new"),
            home.memdeck_dir / "accept.journal", home.memdeck_dir / "swap.journal")


def change_left(home: CodexHome) -> bool:
    """A journal, a staging folder or an older memdeck's accept is left over."""
    staging = home.memdeck_dir / STAGING
    if (home.memdeck_dir / JOURNAL).exists() or (staging.is_dir() and any(staging.iterdir())):
        return True
    return any(p.exists() for p in legacy_paths(home)[1:])
