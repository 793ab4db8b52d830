"""The one way the engine writes a file that must never be seen half-written.

`write_atomic` (and `atomic_file`, for a writer that streams) follows one discipline: the
bytes go to a hidden temp file in the target's own folder (a rename never crosses file
systems), the file is flushed and fsynced, `os.replace` puts it over the target, and the
folder is fsynced so the new name survives a power cut. Readers see the old file or the new
one, never a mix; a failure at any step leaves the old file as it was and removes the temp
file. An existing target keeps its permission bits; a symlink at the target is kept and its
target replaced (config.toml kept in a dotfiles repository stays a link).

`write_new` is the create-only variant: the name appears complete, or not at all when it
already exists (ad-hoc notes, which must never overwrite each other).

Foundation module: imports nothing from the engine.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

NEW_FILE_MODE = 0o644  # a file that did not exist yet, unless the caller says otherwise


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make the folder's entries (a rename, a new name) durable. A file system that cannot
    fsync a folder (some network mounts say EINVAL) is tolerated: there is nothing to do."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EPERM):  # a folder we may write but not open
            return
        raise
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _temp_beside(target: Path) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)


def _target(path: str | os.PathLike[str]) -> Path:
    target = Path(os.path.realpath(path))  # a symlink stays; what it points to is written
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


@contextmanager
def atomic_file(path: str | os.PathLike[str], *, mode: int | None = None,
                times_ns: tuple[int, int] | None = None) -> Iterator[IO[bytes]]:
    """A binary file to write; on a clean exit it replaces `path` atomically.

    `mode`: the permission bits of a file that does not exist yet (an existing one keeps
    its own); NEW_FILE_MODE by default. `times_ns`: (atime, mtime) the new file gets, as
    `os.utime(ns=...)` takes them, set before it appears under the name. If the block
    raises, `path` is untouched and the temp file is gone."""
    target = _target(path)
    try:
        keep = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        keep = NEW_FILE_MODE if mode is None else mode
    fd, tmp = _temp_beside(target)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, keep)
        if times_ns is not None:
            os.utime(tmp, ns=times_ns)
        os.replace(tmp, target)
    except BaseException:
        _remove_quietly(tmp)
        raise
    fsync_dir(target.parent)


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, mode: int | None = None,
                 times_ns: tuple[int, int] | None = None) -> None:
    """Replace `path` with `data` (text is written as UTF-8, line endings as given).
    See `atomic_file` for `mode` and `times_ns`."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_file(path, mode=mode, times_ns=times_ns) as f:
        f.write(raw)


def write_new(path: str | os.PathLike[str], data: str | bytes, *,
              mode: int = NEW_FILE_MODE) -> bool:
    """Write `data` to `path` only if nothing is there yet; False (nothing written) when
    something is. The temp file is hard-linked into place, so the name appears complete or
    not at all and an existing file is never replaced; a file system without hard links
    gets an exclusive create instead."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_beside(target)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        try:
            os.link(tmp, target)
        except FileExistsError:
            return False
        except OSError:  # no hard links here
            if not _create_exclusive(target, raw, mode):
                return False
    finally:
        _remove_quietly(tmp)
    fsync_dir(target.parent)
    return True


def _create_exclusive(target: Path, raw: bytes, mode: int) -> bool:
    try:
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        return False
    try:
        with os.fdopen(out, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _remove_quietly(str(target))  # ours, and not complete: never leave half a note
        raise
    return True
