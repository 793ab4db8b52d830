"""Who holds a lease: memdeck's worker ids, and whether such a worker is still alive."""

from __future__ import annotations

import os


def memdeck_worker_id() -> str:
    return f"memdeck:{_host()}:{os.getpid()}"


def dead_memdeck_worker(worker_id: str | None) -> bool:
    """A lease of a memdeck process on this host that no longer exists."""
    if not worker_id or not worker_id.startswith("memdeck:"):
        return False
    try:
        _, host, pid = worker_id.rsplit(":", 2)
        pid_n = int(pid)
    except ValueError:
        return False
    if host != _host() or pid_n == os.getpid():
        return False
    try:
        os.kill(pid_n, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _host() -> str:
    """This machine's name, as `socket.gethostname()` says it (on POSIX that is the uname
    node name, read without importing socket: every command reads the worker ids)."""
    try:
        return os.uname().nodename
    except AttributeError:  # pragma: no cover - not POSIX
        import socket

        return socket.gethostname()
