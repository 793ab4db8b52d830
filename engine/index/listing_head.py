"""The head of the last listing, kept so that the app paints rows the moment it starts.

A listing of 10,000 sessions takes a few hundred milliseconds even from a warm index (every
status is decided again); the app cannot wait for it before its first frame and still start
as fast as a bare Textual app. So after each listing that read the disk, the app keeps its
first rows (what fits on the first screens, in the listing's order), the total and the time
in `memdeck/listing-head.json`, written atomically; the next start paints them at once, says
they are the last listing and how old, and replaces them in place when the listing of now
arrives (stale-while-revalidate, docs/architecture.md "First paint").

The file is memdeck's own (Codex never reads memdeck/) and a cache: a missing, damaged or
older-format one reads as None, and the app then waits for the listing as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from .sessions import Session
from .status import STATUSES

HEAD_FILE = "listing-head.json"
HEAD_ROWS = 200  # the first screens of the tallest terminal, and a few pages more
_FORMAT = 1
_FIELDS = list(Session._fields)  # a memdeck whose Session differs reads no head of this one


@dataclass(frozen=True)
class ListingHead:
    sessions: list[Session]  # the listing's first rows, in its order
    total: int  # how many sessions that listing had
    listed_at: float  # when it was made (the engine clock)


def head_path(memdeck_dir: Path) -> Path:
    return memdeck_dir / HEAD_FILE


def save_head(memdeck_dir: Path, sessions: list[Session], now: float) -> None:
    """Keep the listing's head (atomically: a start reading it meanwhile sees the old one or
    this one). Only into a memdeck folder that exists: a listing made it, with the index."""
    if not memdeck_dir.is_dir():
        return
    doc = {"format": _FORMAT, "fields": _FIELDS, "listed_at": now, "total": len(sessions),
           "rows": [list(s) for s in sessions[:HEAD_ROWS]]}
    write_atomic(head_path(memdeck_dir), json.dumps(doc, ensure_ascii=False))


def read_head(memdeck_dir: Path) -> ListingHead | None:
    """The last listing's head, or None (none kept, damaged, or another memdeck's format)."""
    try:
        doc = json.loads(head_path(memdeck_dir).read_bytes())
        return _decoded(doc)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _decoded(doc: Any) -> ListingHead | None:
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT or doc.get("fields") != _FIELDS:
        return None
    rows = doc["rows"]
    if not isinstance(rows, list) or not all(
            isinstance(r, list) and len(r) == len(_FIELDS) for r in rows):
        return None
    sessions = [Session(*r) for r in rows]
    if not all(isinstance(s.rollout_path, str) and s.status in STATUSES
               and isinstance(s.updated_at, int) for s in sessions):
        return None
    total, listed_at = doc["total"], doc["listed_at"]
    if not isinstance(total, int) or not isinstance(listed_at, int | float):
        return None
    return ListingHead(sessions, max(total, len(sessions)), float(listed_at))
