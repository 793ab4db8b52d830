"""What a rollout's path and the index's file problems say, without the scanner (the warm
listing never scans, and importing the scanner and its JSON and redaction machinery cost it
25 ms)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ..codex.linestream import NOT_REGULAR

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_NAME_ID = re.compile(rf"rollout-.*?({_UUID})(?:_{_UUID})?\.jsonl(?:\.zst)?$")


def thread_id_from_name(path: str | Path) -> str | None:
    m = _NAME_ID.search(Path(path).name)
    return m.group(1).lower() if m else None


def not_regular_warning(rows: Iterable[tuple[str, str | None]]) -> str | None:
    """One line for a listing's warnings, from (path, file problem) of every indexed rollout:
    the files skipped for not being regular files (a FIFO, a socket, a device), counted, the
    first one named; None when there is none."""
    skipped = [(rel, problem) for rel, problem in rows
               if problem is not None and problem.startswith(NOT_REGULAR)]
    if not skipped:
        return None
    rel, problem = skipped[0]
    kind = problem[len(NOT_REGULAR):].split(":", 1)[0].strip()  # "(a FIFO)"
    n = len(skipped)
    files = "1 file that is" if n == 1 else f"{n} files that are"
    more = f" and {n - 1} more" if n > 1 else ""
    return f"skipped {files} not a regular file: {rel} {kind}{more}"
