"""Switching a memory folder that cannot be renamed: one that is a mount point of its own (a
bind mount, a container volume), where `rename` answers EBUSY.

The folder stays where it is and its contents are replaced file by file instead, each file
old or new (written beside it, then renamed over it), under a journal written first, so a
change killed halfway is finished by the next command exactly as a switched one is. The
result has the contract of `swap.exchange`: the folder holds the staged state, and the
staged path holds the folder's old state (copied out first), for the checks that follow a
switch (did someone write into the old state meanwhile?).

Readers may see some files new and others still old for the moment the replacement takes;
a folder that can be renamed is always switched whole (swap.py).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..atomic import fsync_dir, write_atomic

JOURNAL = "in_place.journal"
TMP_PREFIX = ".memdeck-tmp-"


def is_mount(root: Path) -> bool:
    """A mount point of its own (a bind mount of a folder on the same file system included,
    which `os.path.ismount` does not see: that one is found by the EBUSY of its rename)."""
    try:
        return os.path.ismount(root) or root.stat().st_dev != root.parent.stat().st_dev
    except OSError:
        return False


def swap_in_place(root: Path, staged: Path) -> None:
    """Give `root` the contents of `staged`, and `staged` the old contents of `root`."""
    work = staged.parent
    old = work / f"{staged.name}.was"
    shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(root, old, symlinks=True)  # the old state, handed back at the end
    write_atomic(work / JOURNAL, json.dumps({"root": root.name, "staged": staged.name}))
    _finish(root, staged, work)


def recover_in_place(root: Path, staged: Path) -> bool:
    """Finish a replacement a crash interrupted (True), or do nothing (False)."""
    work = staged.parent
    try:
        data = json.loads((work / JOURNAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict) or (data.get("root"), data.get("staged")) != (
            root.name, staged.name):
        return False
    _finish(root, staged, work)
    return True


def _finish(root: Path, staged: Path, work: Path) -> None:
    old, used = work / f"{staged.name}.was", work / f"{staged.name}.in"
    if staged.is_dir() and old.is_dir():
        _mirror(staged, root)
        os.rename(staged, used)
    if old.is_dir() and not staged.exists():
        os.rename(old, staged)
    shutil.rmtree(used, ignore_errors=True)
    (work / JOURNAL).unlink(missing_ok=True)
    fsync_dir(work)


def _same(a: Path, b: Path) -> bool:
    if a.is_symlink() or b.is_symlink():
        return a.is_symlink() and b.is_symlink() and os.readlink(a) == os.readlink(b)
    return b.is_file() and a.stat().st_size == b.stat().st_size \
        and a.read_bytes() == b.read_bytes()


def _put(src: Path, dst: Path) -> None:
    """`dst` becomes a copy of the file or link `src`, in one rename."""
    if dst.is_dir() and not dst.is_symlink():
        shutil.rmtree(dst)
    if src.is_symlink():  # a link is made beside and renamed over (not a file write)
        tmp = dst.with_name(f"{TMP_PREFIX}{dst.name}")
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(os.readlink(src), tmp)
        os.rename(tmp, dst)
        return
    if dst.is_symlink():  # write_atomic would write through it
        dst.unlink()
    write_atomic(dst, src.read_bytes(), mode=src.stat().st_mode & 0o7777)


def _mirror(src: Path, dst: Path) -> None:
    """Make the tree `dst` equal to `src` (every entry, `.git` included). Each step can run
    again: a crash anywhere is finished by running it once more."""
    for folder, dirs, files in os.walk(src):
        rel = Path(folder).relative_to(src)
        here = dst / rel
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            here.unlink()
        here.mkdir(exist_ok=True)
        for name in files + [d for d in dirs if (Path(folder) / d).is_symlink()]:
            s, d = Path(folder) / name, here / name
            if not (d.exists() or d.is_symlink()) or not _same(s, d):
                _put(s, d)
        for name in os.listdir(here):  # what the new state does not have
            if not (Path(folder) / name).exists() and not (Path(folder) / name).is_symlink():
                gone = here / name
                if gone.is_dir() and not gone.is_symlink():
                    shutil.rmtree(gone)
                else:
                    gone.unlink()
        fsync_dir(here)
