"""Citation events parsed once per version of a rollout and kept in memdeck's store
(docs/architecture.md "The read path").

The index scan flags each rollout whose bytes hold `<oai-mem-citation` (index/scan.py,
`cites_memory`, the `cites` column): a rollout without the flag is not opened. A flagged one
is parsed with Codex's rules (docs/codex-format.md "Citations") and its citing messages are
stored, keyed by rollout path and the message's line in the rollout, with the size and mtime
the rollout had then (`citation_sources`). Later reads take the rows; a rollout whose size or
mtime changed is parsed again and its rows replaced, so the same event never counts twice.
The tables are memdeck's own (memdeck/memdeck.sqlite): nothing is written in the Codex home.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..clock import parse_iso
from ..codex.citations import OPEN, CitationEntry, strip_citations
from ..codex.linestream import open_regular_file
from ..store import Store, StoreError

log = logging.getLogger(__name__)

MESSAGE_CHARS = 240  # the citing message, shortened
_CHUNK = 500  # paths per `IN (...)` query

FileKey = tuple[int, int]  # (size, mtime_ns)


@dataclass(frozen=True)
class ParsedCitation:
    """One citing assistant message of a rollout, as stored."""

    line_no: int  # its line in the rollout, 1-based
    item_index: int  # its index in `transcript(rollout)`, as `Engine.session` returns it
    time: float | None
    text: str  # the message without its citation block, shortened
    entries: tuple[CitationEntry, ...]
    rollout_ids: tuple[str, ...]  # as written, invalid ids included


def file_holds(path: str, needle: bytes, chunk: int = 1 << 20) -> bool:
    """Cheap pre-check, in 1 MiB steps (a rollout can be gigabytes): do the file's bytes
    hold `needle`? A compressed rollout may (it cannot be searched); an unreadable one not."""
    if path.endswith(".zst"):
        return True
    try:
        with open_regular_file(path) as f:  # a FIFO would block for ever: never opened
            tail = b""
            while block := f.read(chunk):
                if needle in tail + block:
                    return True
                tail = block[-(len(needle) - 1):]
    except OSError:
        return False
    return False


def may_cite(path: str, chunk: int = 1 << 20) -> bool:
    """For a rollout the index has no flag for: a plain rollout without the tag has nothing
    to parse."""
    return file_holds(path, OPEN.encode(), chunk)
    return False


def parse_rollout(path: str) -> tuple[ParsedCitation, ...]:
    """Every citing assistant message of one rollout, in transcript order."""
    from ..codex.rollout import read_rollout
    from ..codex.transcript import transcript

    out: list[ParsedCitation] = []
    for i, e in enumerate(transcript(read_rollout(path))):
        if e.kind == "assistant" and e.citation is not None:
            visible = " ".join(strip_citations(e.text)[0].split())
            if len(visible) > MESSAGE_CHARS:
                visible = visible[:MESSAGE_CHARS - 1].rstrip() + "…"
            out.append(ParsedCitation(e.line_no, i, parse_iso(e.timestamp), visible,
                                      e.citation.entries, e.citation.rollout_ids))
    return tuple(out)


class CitationStore:
    """The citing messages of rollouts, from memdeck's store, parsing only what changed.

    `store` None (or a store that cannot be read or written) keeps the parses in memory only,
    for the life of this object, and falls back to the byte pre-check for every rollout."""

    def __init__(self, store: Store | None, home_root: Path | None = None) -> None:
        self._store = store
        self._prefix = str(home_root) + os.sep if home_root is not None else ""
        self._lock = threading.Lock()
        self._memo: dict[str, tuple[FileKey, tuple[ParsedCitation, ...]]] = {}

    def citations(self, paths: Iterable[str]) -> dict[str, tuple[ParsedCitation, ...]]:
        """Absolute rollout path -> its citing messages, for those of `paths` that have any."""
        flags = self._flags()
        out: dict[str, tuple[ParsedCitation, ...]] = {}
        misses: list[tuple[str, str, FileKey]] = []  # (path, rel, key)
        skipped: list[str] = []  # rels not citing (any stored rows of theirs are stale)
        for path in dict.fromkeys(paths):
            rel = self._rel(path)
            flag = flags.get(rel)
            if flag == 0 or (flag is None and not may_cite(path)):
                skipped.append(rel)
                continue
            try:
                st = os.stat(path)
            except OSError:
                continue
            key = (st.st_size, st.st_mtime_ns)
            with self._lock:
                hit = self._memo.get(path)
            if hit is not None and hit[0] == key:
                if hit[1]:
                    out[path] = hit[1]
                continue
            misses.append((path, rel, key))
        self._resolve(misses, skipped, out)
        return out

    # -- internals ---------------------------------------------------------------------
    def _rel(self, path: str) -> str:
        p = self._prefix
        return path[len(p):] if p and path.startswith(p) else path

    def _flags(self) -> dict[str, int | None]:
        """rel -> the index's `cites` flag (None: written by an older scanner)."""
        rows = self._query("SELECT path, cites FROM sessions", ())
        return {r[0]: r[1] for r in rows}

    def _resolve(self, misses: list[tuple[str, str, FileKey]], skipped: list[str],
                 out: dict[str, tuple[ParsedCitation, ...]]) -> None:
        sources = {r[0]: (r[1], r[2]) for r in self._query(
            "SELECT path, size, mtime_ns FROM citation_sources", ())}
        if not misses and not any(rel in sources for rel in skipped):
            return
        current = [m for m in misses if sources.get(m[1]) == m[2]]
        stored = self._stored_events([rel for _, rel, _ in current])
        parsed: list[tuple[str, FileKey, tuple[ParsedCitation, ...]]] = []
        for path, rel, key in misses:
            if sources.get(rel) == key:
                found = stored.get(rel, ())
            else:
                found = parse_rollout(path)
                parsed.append((rel, key, found))
            with self._lock:
                self._memo[path] = (key, found)
            if found:
                out[path] = found
        self._save(parsed, [rel for rel in skipped if rel in sources])

    def _stored_events(self, rels: list[str]) -> dict[str, tuple[ParsedCitation, ...]]:
        found: dict[str, list[ParsedCitation]] = {}
        for i in range(0, len(rels), _CHUNK):
            chunk = rels[i:i + _CHUNK]
            rows = self._query(
                "SELECT path, line_no, item_index, time, text, entries, rollout_ids "
                f"FROM citation_events WHERE path IN ({','.join('?' * len(chunk))}) "
                "ORDER BY path, item_index", chunk)
            for path, line_no, item_index, t, text, entries, ids in rows:
                found.setdefault(path, []).append(ParsedCitation(
                    line_no, item_index, t, text,
                    tuple(CitationEntry(*e) for e in json.loads(entries)),
                    tuple(json.loads(ids))))
        return {k: tuple(v) for k, v in found.items()}

    def _save(self, parsed: list[tuple[str, FileKey, tuple[ParsedCitation, ...]]],
              stale: list[str]) -> None:
        if self._store is None or not (parsed or stale):
            return
        try:
            with self._store.transaction() as c:
                for rel in [*stale, *(p[0] for p in parsed)]:
                    c.execute("DELETE FROM citation_events WHERE path = ?", (rel,))
                    c.execute("DELETE FROM citation_sources WHERE path = ?", (rel,))
                for rel, (size, mtime_ns), found in parsed:
                    c.execute("INSERT INTO citation_sources (path, size, mtime_ns, events) "
                              "VALUES (?,?,?,?)", (rel, size, mtime_ns, len(found)))
                    c.executemany(
                        "INSERT OR REPLACE INTO citation_events (path, line_no, item_index, "
                        "time, text, entries, rollout_ids) VALUES (?,?,?,?,?,?,?)",
                        [(rel, m.line_no, m.item_index, m.time, m.text,
                          json.dumps([[e.path, e.line_start, e.line_end, e.note]
                                      for e in m.entries], ensure_ascii=False),
                          json.dumps(list(m.rollout_ids), ensure_ascii=False))
                         for m in found])
        except (sqlite3.Error, StoreError) as e:  # kept in memory: parsed again next run
            log.warning("cannot store citation events: %s", e)

    def _query(self, sql: str, args: Iterable[object]) -> list[Any]:
        if self._store is None:
            return []
        try:
            conn = self._store.conn()
            conn.row_factory = None
            try:
                return conn.execute(sql, tuple(args)).fetchall()
            finally:
                conn.row_factory = sqlite3.Row
        except (sqlite3.Error, StoreError) as e:
            log.warning("cannot read stored citation events: %s", e)
            return []
