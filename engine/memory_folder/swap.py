"""Swap two directories so that readers only ever see the old one or the new one.

On Linux `renameat2(RENAME_EXCHANGE)` exchanges the two names in one step. Where that is
missing (another OS, a filesystem without support) the swap is three renames guarded by a
journal written first; `recover` finishes or undoes a swap a crash interrupted, and is run
before anything else touches the folders. Both paths must be on one filesystem.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from ..atomic import fsync_dir, write_atomic

AT_FDCWD = -100
RENAME_EXCHANGE = 1 << 1

_libc: ctypes.CDLL | Literal[False] | None = None  # False: no C library to load


def _renameat2() -> Callable[..., int] | None:
    global _libc
    if not hasattr(os, "uname") or os.uname().sysname != "Linux":
        return None
    if _libc is None:
        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        except OSError:
            _libc = False
    fn = getattr(_libc, "renameat2", None) if _libc else None
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                       ctypes.c_uint]
        fn.restype = ctypes.c_int
    return fn


def exchange(a: Path, b: Path, journal: Path, *, atomic: bool = True) -> str:
    """Swap the directories at `a` and `b`. Returns "exchange" or "journal" (the method)."""
    fn = _renameat2() if atomic else None
    if fn is not None:
        if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
            fsync_dir(a.parent)
            return "exchange"
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(err, f"cannot swap {a.name} and {b.name}: {os.strerror(err)}")
    _journaled_swap(a, b, journal)
    return "journal"


def _tmp(a: Path) -> Path:
    return a.with_name(f".{a.name}.swap-tmp")


def _journaled_swap(a: Path, b: Path, journal: Path, crash_after: int | None = None) -> None:
    tmp = _tmp(a)
    # names only: what is swapped is known to whoever recovers (the change's own journal
    # names the two folders), so an edited swap journal cannot point a rename elsewhere
    _write_journal(journal, {"a": a.name, "b": b.name})
    steps = [(a, tmp), (b, a), (tmp, b)]
    for i, (src, dst) in enumerate(steps):
        if crash_after is not None and i == crash_after:
            raise SystemExit("simulated crash")  # tests only
        try:
            os.rename(src, dst)
        except OSError:
            if i == 0:  # nothing moved: no swap to finish
                journal.unlink(missing_ok=True)
            raise
    fsync_dir(a.parent)
    journal.unlink()


def _write_journal(journal: Path, data: dict[str, str]) -> None:
    write_atomic(journal, json.dumps(data))  # durable before the first rename


def recover(journal: Path, a: Path, b: Path) -> str | None:
    """Finish a journaled swap of `a` and `b` that a crash interrupted. Returns what was done,
    None if nothing. A journal about two other folders is left to their own recovery."""
    if not journal.exists():
        return None
    try:
        data = json.loads(journal.read_text(encoding="utf-8"))
        names = (Path(str(data["a"])).name, Path(str(data["b"])).name)
    except (ValueError, KeyError, TypeError):  # written atomically: damage means no rename ran
        journal.unlink()
        return "nothing to do"
    if names != (a.name, b.name):
        return None
    tmp = _tmp(a)
    if tmp.exists() and not a.exists():  # step 1 done: a moved aside
        os.rename(b, a)
        os.rename(tmp, b)
        done = "finished"
    elif tmp.exists():  # steps 1 and 2 done
        os.rename(tmp, b)
        done = "finished"
    else:  # nothing moved, or all three steps done
        done = "nothing to do"
    fsync_dir(a.parent)
    journal.unlink()
    return done
