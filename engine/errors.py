"""Errors the engine raises on purpose. Each carries one line a person can act on."""

import errno
import re


class MemdeckError(Exception):
    """An expected failure: bad input, a refused action. `str()` is the one-line message."""


class ConfigError(MemdeckError):
    """A setting is unknown, of the wrong type, out of range, or config.toml cannot be parsed."""


class NotFound(MemdeckError):
    """A session, proposal or commit that does not exist."""


class HomeError(MemdeckError):
    """The Codex home (or a folder in it) is missing, unreadable or unsafe (a symlinked root)."""


def os_error_text(e: OSError) -> str:
    """One line for an error of the machine (a full disk, a read-only or vanished folder):
    what failed, where, and what to do. A change stopped by one is old or new: it was
    refused before its journal, or the next command finishes it."""
    where = f": {e.filename}" if e.filename else ""
    what = e.strerror or type(e).__name__
    code = e.errno
    copies = e.args[0] if e.args and isinstance(e.args[0], list) else None
    if e.strerror is None and copies and isinstance(copies[0], tuple) and len(copies[0]) == 3:
        # shutil.Error: a list of (source, destination, why) for the files a copy missed
        src, _, why = copies[0]
        found = re.match(r"\[Errno (\d+)\] ([^:]+)", str(why))
        code = int(found.group(1)) if found else None
        what = found.group(2) if found else str(why).split(":")[0]
        where = f": cannot copy {src}" + (f" (and {len(copies) - 1} more)" if len(copies) > 1
                                          else "")
    hint = {errno.ENOSPC: "; free some space and run it again",
            errno.EDQUOT: "; free some space and run it again",
            errno.EROFS: "; the folder is read-only",
            errno.EACCES: "; check the folder's permissions"}.get(code or 0, "")
    return f"{what}{where}{hint} (nothing is left half-written)"
