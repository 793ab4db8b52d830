"""The session index: every rollout of a Codex home, kept current incrementally.

A file is identified by its path; its (size, mtime) say whether it changed. An unchanged file
is not opened. A plain `.jsonl` that only grew is read from the offset just past its last
complete line, with the earlier findings carried over; anything else (shrunk, rewritten,
compressed) is scanned again. Cold scans of many files run in a small process pool: the
work is CPU-bound JSON validation and the machine has more than one core.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ..clock import Clock, SystemClock
from ..codex.home import CodexHome
from ..store import Store
from .rollout_names import thread_id_from_name

if TYPE_CHECKING:  # the scanner is imported where a file is scanned: a warm listing scans none
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.context import BaseContext

    from .scan import ScanState

log = logging.getLogger(__name__)

PARALLEL_MIN_BYTES = 48 << 20  # below this a pool costs more than it saves
BATCH_FILES = 32
# What the scanner makes of a file. Bumped when that changes (2: a session_meta without
# `source` reads as vscode, as Codex reads it; 3: the preview is the user's request, not the
# VS Code / Desktop wrapper around it; 4: whether the rollout holds a citation tag,
# `cites_memory`; 5: the preview, the user's first words, is stored redacted), so that rows
# written by an older scanner are scanned again once instead of being trusted because the file
# did not change.
SCAN_VERSION = "5"
REDACTED_SINCE = 5  # rows of an older scanner may hold a secret in their preview


class RolloutFile(NamedTuple):
    """One rollout found on disk (a NamedTuple: a refresh makes 10,000, and a frozen dataclass
    costs it 15 ms more)."""

    rel: str  # relative to the home
    path: str
    archived: bool
    size: int
    mtime_ns: int


# A file to scan and its previous scan (ScanState as JSON), None when it was never scanned.
ScanItem = tuple[RolloutFile, str | None]
# One row of the sessions table, in the column order of `_INSERT` (built by `_row`).
StoredRow = tuple[
    str, int, int, int, str,  # path, archived, size, mtime_ns, scan
    str | None, str | None, str | None, str | None,  # thread_id, started_at, cwd, source
    str | None, int | None, str, int,  # memory_mode, memory_mode_line, preview, bad_lines
    str | None, str | None, str | None,  # file_problem, format, model
    float, str | None, int,  # indexed_at, git_branch, cites
    str | None, str | None,  # originator, cli_version
]
# `on_batch(done, total)`: files scanned and stored so far, of those this refresh scans.
Progress = Callable[[int, int], None]
# One row of `_LISTED`, as sqlite returns it (its types are the table's).
ListedRow = tuple[Any, ...]

_INSERT = (
    "INSERT OR REPLACE INTO sessions (path, archived, size, mtime_ns, scan, "
    "thread_id, started_at, cwd, source, memory_mode, memory_mode_line, "
    "preview, bad_lines, file_problem, format, model, indexed_at, git_branch, cites, "
    "originator, cli_version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_LISTED = (
    "SELECT path, archived, size, mtime_ns, thread_id, started_at, cwd, source, "
    "memory_mode, memory_mode_line, preview, bad_lines, file_problem, format, "
    "model, git_branch, originator FROM sessions"
)


class IndexedSession(NamedTuple):
    """One row of the index: what the rollout says, before any status is decided.

    A NamedTuple rather than a frozen dataclass: a listing builds 10,000 of these, and a
    frozen dataclass costs five times as much to construct."""

    rel: str
    path: str
    archived: bool
    size: int
    updated_at: int
    thread_id: str | None
    started_at: str | None  # as the rollout wrote it
    cwd: str | None
    source: str | None
    memory_mode: str | None
    memory_mode_line: int | None
    preview: str
    bad_lines: int
    file_problem: str | None
    format: str | None
    model: str | None
    git_branch: str | None = None
    originator: str | None = None


@dataclass(frozen=True)
class RefreshStats:
    files: int
    scanned_full: int
    scanned_append: int
    removed: int
    bytes_read: int
    seconds: float


def discover(home: CodexHome) -> list[RolloutFile]:
    """All rollout files under sessions/ (dated tree) and archived_sessions/ (flat)."""
    found: list[RolloutFile] = []
    cut = len(str(home.root)) + 1
    for base, archived in home.rollout_dirs():
        stack = [str(base)]
        seen: set[tuple[int, int]] = set()  # folders by inode: a symlink loop is walked once
        while stack:
            d = stack.pop()
            try:
                st = os.stat(d)
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                with os.scandir(d) as it:
                    entries = list(it)
            except FileNotFoundError:
                continue
            except OSError as e:
                log.warning("cannot list %s: %s", d, e.strerror)
                continue
            zst_twins = None
            for entry in entries:
                name = entry.name
                try:
                    if not name.startswith("rollout-"):
                        if entry.is_dir():
                            stack.append(entry.path)
                        continue
                    if name.endswith(".jsonl.zst"):
                        if zst_twins is None:
                            zst_twins = {x.name for x in entries}
                        if name[:-4] in zst_twins:  # re-materialised to append: .jsonl wins
                            continue
                    elif not name.endswith(".jsonl"):
                        continue
                    st = entry.stat()
                except OSError:
                    continue
                found.append(RolloutFile(entry.path[cut:], entry.path, archived, st.st_size,
                                         st.st_mtime_ns))
    return found


def _scan_batch(items: list[ScanItem], now: float) -> list[StoredRow]:
    """Scan files and return finished index rows (runs in pool workers); `now` is the
    engine clock's time the scan started, recorded as each row's `indexed_at`."""
    from .scan import ScanState, scan_file

    out = []
    for f, prior_json in items:
        prior = ScanState.from_dict(json.loads(prior_json)) if prior_json else None
        out.append(_row(f, scan_file(f.path, prior), now))
    return out


def _collect(pool: ProcessPoolExecutor, futures: dict[Future[list[StoredRow]], list[ScanItem]],
             now: float) -> Iterator[list[StoredRow]]:
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    try:
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except BrokenProcessPool:  # a worker died (out of memory?): finish in-process
                yield _scan_batch(futures[fut], now)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _pool_context() -> BaseContext:
    import multiprocessing

    # fork is cheap and safe while this process has one thread (the CLI); from a threaded
    # host (the TUI) a fresh interpreter avoids inheriting held locks.
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    _start_resource_tracker()
    return multiprocessing.get_context("spawn")


def _start_resource_tracker() -> None:
    """Spawned workers need multiprocessing's resource tracker, which hands it our stderr's
    file descriptor. A TUI replaces sys.stderr with an object without one (fileno() -1), and
    the tracker then fails to start ("bad value(s) in fds_to_keep"): give it /dev/null."""
    import sys
    from multiprocessing import resource_tracker

    try:
        usable = sys.stderr is not None and sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if usable:
        return
    saved = sys.stderr
    with open(os.devnull, "w") as devnull:
        sys.stderr = devnull
        try:
            resource_tracker.ensure_running()
        finally:
            sys.stderr = saved


class SessionIndex:
    def __init__(self, home: CodexHome, store: Store, workers: int | None = None,
                 clock: Clock | None = None) -> None:
        self.home = home
        self.store = store
        self.clock = clock or SystemClock()
        self.last_refresh: RefreshStats | None = None
        self.workers = workers if workers is not None else min(4, os.cpu_count() or 1)

    # -- refresh ----------------------------------------------------------------------
    def refresh(self, rows: list[ListedRow] | None = None,
                on_batch: Progress | None = None) -> RefreshStats:
        """Bring the index up to date; `rows` (from `_rows()`) saves reading it again.
        `on_batch(done, total)`: called in this thread after each batch of scanned files is
        stored (not yet committed: what this thread reads of the index then includes it)."""
        t0 = time.perf_counter()
        files = discover(self.home)
        if rows is None and not self.store.path.exists():
            # first run: every file is new, so the scans start before the store exists and
            # its creation (migrations) runs here while the workers read
            return self._write(len(files), files, [], [], self._run_scans(files, {}), {}, t0,
                               new_version=True, on_batch=on_batch)
        if rows is None:
            rows = self._rows()
        known = {r[0]: (r[2], r[3], r[1]) for r in rows}
        outdated = bool(known) and self._scan_version() != SCAN_VERSION
        full: list[RolloutFile] = []
        append: list[RolloutFile] = []
        for f in files:
            k = known.get(f.rel)
            if k is None or outdated:
                full.append(f)
            elif k[0] == f.size and k[1] == f.mtime_ns and bool(k[2]) == f.archived:
                continue
            elif f.size > k[0] and not f.rel.endswith(".zst"):
                append.append(f)
            else:
                full.append(f)
        seen = {f.rel for f in files}
        removed = [p for p in known if p not in seen]
        priors: dict[str, str | None] = dict(self._scan_json([f.rel for f in append]))
        scans = self._run_scans([*full, *append], priors)
        return self._write(len(files), full, append, removed, scans, priors, t0,
                           new_version=outdated or (not known and bool(files)), on_batch=on_batch)

    def _write(self, n_files: int, full: list[RolloutFile], append: list[RolloutFile],
               removed: list[str], scans: Iterator[list[StoredRow]],
               priors: dict[str, str | None], t0: float, new_version: bool = False,
               on_batch: Progress | None = None) -> RefreshStats:
        """Store scan results batch by batch as they arrive, in one transaction."""
        with self.store.transaction() as c:
            if new_version:  # every row below is this scanner's
                c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('scan_version', ?)",
                          (SCAN_VERSION,))
            if removed:
                gone = [(p,) for p in removed]
                c.executemany("DELETE FROM sessions WHERE path = ?", gone)
                # and the citation events parsed from them (read_path/citation_store.py)
                c.executemany("DELETE FROM citation_events WHERE path = ?", gone)
                c.executemany("DELETE FROM citation_sources WHERE path = ?", gone)
            done, total = 0, len(full) + len(append)
            for batch in scans:
                c.executemany(_INSERT, batch)
                done += len(batch)
                if on_batch is not None:
                    on_batch(done, total)
        bytes_read = sum(f.size for f in full) + sum(
            f.size - json.loads(priors.get(f.rel) or "{}").get("offset", 0) for f in append)
        return RefreshStats(n_files, len(full), len(append), len(removed), bytes_read,
                            time.perf_counter() - t0)

    def _scan_version(self) -> str | None:
        row = self.store.conn().execute(
            "SELECT value FROM meta WHERE key = 'scan_version'").fetchone()
        return row[0] if row else None

    def _scan_json(self, rels: list[str]) -> Iterable[tuple[str, str | None]]:
        conn = self.store.conn()
        for i in range(0, len(rels), 500):
            chunk = rels[i : i + 500]
            q = ",".join("?" * len(chunk))
            yield from conn.execute(f"SELECT path, scan FROM sessions WHERE path IN ({q})", chunk)

    def _run_scans(self, files: list[RolloutFile],
                   priors: dict[str, str | None]) -> Iterator[list[StoredRow]]:
        """Start scanning now; the returned iterator yields rows batch by batch."""
        now = self.clock.now()
        items = [(f, priors.get(f.rel)) for f in sorted(files, key=lambda f: f.size,
                                                         reverse=True)]
        total = sum(f.size for f in files)
        if self.workers > 1 and total >= PARALLEL_MIN_BYTES and len(files) > BATCH_FILES:
            # big files first, dealt round-robin, so the workers finish together
            n_batches = max(self.workers * 4, len(items) // BATCH_FILES)
            batches = [items[i::n_batches] for i in range(n_batches)]
            from concurrent.futures import ProcessPoolExecutor

            try:
                pool = ProcessPoolExecutor(self.workers, mp_context=_pool_context())
                futures = {pool.submit(_scan_batch, b, now): b for b in batches}
            except (OSError, RuntimeError, ValueError) as e:  # no processes here: in-process
                log.warning("parallel scan unavailable (%s); scanning in one process", e)
            else:
                return _collect(pool, futures, now)
        return iter([_scan_batch(items, now)] if items else [])

    # -- reading ----------------------------------------------------------------------
    def _rows(self) -> list[ListedRow]:
        conn = self.store.conn()
        conn.row_factory = None  # plain tuples: 10,000 rows a listing
        try:
            return conn.execute(_LISTED).fetchall()
        finally:
            conn.row_factory = sqlite3.Row

    def codex_versions(self) -> list[str]:
        """The distinct `cli_version`s of the indexed sessions (the Codex versions that wrote
        them)."""
        if not self.store.path.exists():
            return []
        rows = self.store.conn().execute(
            "SELECT DISTINCT cli_version FROM sessions").fetchall()
        return [r[0] for r in rows if isinstance(r[0], str) and r[0]]

    def sessions(self, refresh: bool = False,
                 on_batch: Progress | None = None) -> list[IndexedSession]:
        """Every indexed session; with `refresh`, brought up to date first (one table read
        when nothing changed; `on_batch` as for `refresh`)."""
        rows = self._rows() if self.store.path.exists() else None
        if refresh:
            stats = self.refresh(rows, on_batch)
            self.last_refresh = stats
            if rows is None or stats.scanned_full or stats.scanned_append or stats.removed:
                rows = self._rows()
        elif rows is None:
            rows = []
        return self._indexed(rows)

    def citing_candidates(self, refresh: bool = False) -> list[tuple[str, str | None,
                                                                     str | None]]:
        """(absolute path, thread id, cwd) of the sessions whose rollouts may cite memory:
        the index's `cites` flag is set, or unknown (an older scanner). A gutter or a
        citation listing looks at these only, not at every row of a large home."""
        if refresh:
            self.sessions(refresh=True)
        if not self.store.path.exists():
            return []
        rows = self.store.conn().execute(
            "SELECT path, thread_id, cwd FROM sessions WHERE cites IS NULL OR cites != 0"
        ).fetchall()
        root = str(self.home.root) + os.sep
        return [(root + r[0], r[1] or thread_id_from_name(r[0]), r[2]) for r in rows]

    def _indexed(self, rows: list[ListedRow]) -> list[IndexedSession]:
        clean = not rows or self._previews_redacted()
        root = str(self.home.root) + os.sep
        return [
            IndexedSession(
                r[0], root + r[0], bool(r[1]), r[2], r[3] // 1_000_000_000,
                r[4] or thread_id_from_name(r[0]), r[5], r[6], r[7], r[8], r[9],
                (r[10] or "") if clean else _redact(r[10] or ""),
                r[11] or 0, r[12], r[13], r[14], r[15], r[16],
            )
            for r in rows
        ]

    def _previews_redacted(self) -> bool:
        """Every row was written by a scanner that stores previews redacted (a refresh
        rescans all rows of an older one, so the version is the whole table's)."""
        v = self._scan_version()
        return v is not None and v.isdigit() and int(v) >= REDACTED_SINCE

    def by_thread(self, thread_id: str) -> list[IndexedSession]:
        """The indexed rollouts of one thread (live and archived), by one query: a trace
        looks up a session without listing 10,000 (docs/architecture.md "The read path")."""
        if not self.store.path.exists():
            return []
        conn = self.store.conn()
        conn.row_factory = None
        try:
            rows = conn.execute(_LISTED + " WHERE thread_id = ? OR path LIKE ?",
                                (thread_id, f"%{thread_id}%")).fetchall()
        finally:
            conn.row_factory = sqlite3.Row
        return [s for s in self._indexed(rows) if s.thread_id == thread_id]

    def scan_state(self, rel: str) -> ScanState | None:
        from .scan import ScanState

        row = self.store.conn().execute("SELECT scan FROM sessions WHERE path = ?",
                                        (rel,)).fetchone()
        return ScanState.from_dict(json.loads(row[0])) if row and row[0] else None


def _redact(text: str) -> str:
    """A preview an older scanner stored as the user wrote it (redaction is imported only
    then: a current index holds them redacted)."""
    from ..redact import redact

    return redact(text)


def _dumps(d: dict[str, Any]) -> str:
    try:
        import orjson
    except ImportError:  # pragma: no cover
        return json.dumps(d)
    return orjson.dumps(d).decode()


def _row(f: RolloutFile, st: ScanState, now: float) -> StoredRow:
    """The sessions-table row for one scan."""
    from ..codex.line_problems import LEGACY_FORMAT

    problem = st.file_problem
    if problem is None and st.format == "legacy":
        problem = LEGACY_FORMAT
    # the previews (the user's first words: a pasted key) are redacted by the scanner before
    # they are cut (scan.py `_clip`); redacting them again here cost a cold index 0.4 s
    return (
        f.rel, int(f.archived), f.size, f.mtime_ns, _dumps(st.to_dict()),
        st.thread_id, st.started_at, st.cwd, st.source, st.memory_mode, st.memory_mode_line,
        st.preview, st.bad_lines, problem, st.format, st.model, now, st.git_branch,
        int(st.cites_memory), st.originator, st.cli_version,
    )
