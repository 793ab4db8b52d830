"""memdeck's own SQLite database: one connection per thread, WAL, numbered migrations.

The schema is created and migrated through sqlite-utils (`Database.create_table`,
`create_index`), tracked by `PRAGMA user_version`. sqlite-utils costs ~140 ms to import, so it
is imported only when a migration has to run; the listing path talks to the same connection
directly, which keeps `memdeck sessions` fast on every run after the first.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import MemdeckError

if TYPE_CHECKING:  # imported for real only when a migration runs (see above)
    from sqlite_utils import Database

BUSY_TIMEOUT_MS = 5000


class StoreError(MemdeckError):
    pass


def _m1_sessions(db: Database) -> None:
    db.table("sessions").create(
        {
            "path": str,  # relative to the Codex home
            "archived": int,
            "size": int,
            "mtime_ns": int,
            "scan": str,  # ScanState as JSON (offset, line numbering, findings)
            "thread_id": str,
            "started_at": str,
            "cwd": str,
            "source": str,
            "memory_mode": str,
            "memory_mode_line": int,
            "preview": str,
            "bad_lines": int,
            "file_problem": str,
            "format": str,
            "model": str,
            "indexed_at": float,
        },
        pk="path",
    )
    db.table("sessions").create_index(["thread_id"])
    db.table("meta").create({"key": str, "value": str}, pk="key")


def _m2_model_calls(db: Database) -> None:
    db.table("model_calls").create(
        {
            "id": int,
            "started_at": float,
            "backend": str,  # openai | offline
            "purpose": str,  # phase1 | phase2
            "prompt_name": str,
            "prompt_hash": str,
            "model": str,
            "thread_id": str,
            "input_tokens": int,
            "output_tokens": int,
            "duration_ms": int,
            "error": str,
        },
        pk="id",
    )
    db.table("model_calls").create_index(["started_at"])


def _m3_git_branch(db: Database) -> None:
    db.table("sessions").add_column("git_branch", str)
    db.execute("UPDATE sessions SET git_branch = json_extract(scan, '$.git_branch')")


def _m4_proposals(db: Database) -> None:
    db.table("proposals").create(
        {
            "id": str,
            "created_at": float,
            "status": str,  # pending | accepted | partial | rejected
            "backend": str,
            "model": str,
            "prompt_hash": str,
            "threads": str,  # JSON: thread ids of the inputs
            "files": str,  # JSON: [{"path", "change"}]
            "base_state": str,  # digest of the live root the proposal started from
            "secrets": str,  # JSON: findings in what the proposal adds
            "problems": str,  # JSON: validation problems
            "input_tokens": int,
            "output_tokens": int,
            "decided_at": float,
            "reason": str,
        },
        pk="id",
    )


def _m5_proposal_version(db: Database) -> None:
    # proposals made before memdeck knew of v2 were all made for memories/
    db.table("proposals").add_column("version", str)
    db.execute("UPDATE proposals SET version = 'v1'")


def _m6_extract_log(db: Database) -> None:
    # what Codex's tables do not keep (index/extract_log.py): the raw memories memdeck's
    # pruning removed, and the outcome of each of memdeck's own extractions
    db.table("pruned_memories").create(
        {
            "id": int,
            "version": str,  # v1 | v2: the pipeline DB the row was in
            "thread_id": str,
            "source_updated_at": int,
            "generated_at": int,
            "usage_count": int,
            "last_usage": int,
            "pruned_at": int,
            "max_unused_days": int,
        },
        pk="id",
    )
    db.table("pruned_memories").create_index(["version", "thread_id"])
    db.table("extract_outcomes").create(
        {
            "version": str,
            "thread_id": str,
            "source_updated_at": int,
            "outcome": str,  # extracted | no_output
            "finished_at": int,  # the job's finished_at, to the second
            "detail": str,  # for no_output: why nothing was kept
        },
        pk=("version", "thread_id"),
    )


def _m7_forgotten_sessions(db: Database) -> None:
    # the sessions forgotten with memdeck (index/extract_log.py): the line memdeck appended is
    # its own doing, not the user switching memories off inside the session
    db.table("forgotten_sessions").create(
        {
            "version": str,
            "thread_id": str,
            "forgotten_at": int,
            "line_no": int,  # the session_meta line memdeck appended, 1-based
            "was_consolidated": int,  # its raw memory was selected_for_phase2 then
        },
        pk=("version", "thread_id"),
    )


def _m8_citation_events(db: Database) -> None:
    # whether a rollout holds a citation tag, found by the index scan (index/scan.py); NULL
    # for a row an older scanner wrote (the scan version makes it rescanned once)
    db.table("sessions").add_column("cites", int)
    db.execute("UPDATE sessions SET cites = json_extract(scan, '$.cites_memory')")
    # the citation events parsed from those rollouts (read_path/citation_store.py), one row
    # per citing assistant message, and the file's size and mtime when it was parsed: a
    # rollout is parsed again only when they change, and its rows are then replaced
    db.table("citation_sources").create(
        {"path": str, "size": int, "mtime_ns": int, "events": int}, pk="path")
    db.table("citation_events").create(
        {
            "path": str,  # the rollout, relative to the Codex home
            "line_no": int,  # the citing message's line in the rollout, 1-based
            "item_index": int,  # its index in `transcript(rollout)`
            "time": float,  # its timestamp (NULL: none readable)
            "text": str,  # the message without its citation block, shortened
            "entries": str,  # JSON: [[path, line_start, line_end, note]]
            "rollout_ids": str,  # JSON: [id] as written, invalid ones included
        },
        pk=("path", "line_no"),
    )


def _m9_listed_columns(db: Database) -> None:
    # what every listing reads, as columns: `json_extract` of 10,000 scans cost a warm
    # `memdeck sessions` 35 ms, and the home's Codex versions another 20
    db.table("sessions").add_column("originator", str)
    db.table("sessions").add_column("cli_version", str)
    db.execute("UPDATE sessions SET originator = json_extract(scan, '$.originator'), "
               "cli_version = json_extract(scan, '$.cli_version')")
    db.table("sessions").create_index(["cli_version"])  # DISTINCT reads the index alone


MIGRATIONS: list[tuple[int, str, Callable[[Database], None]]] = [
    (1, "session index", _m1_sessions),
    (2, "model call log", _m2_model_calls),
    (3, "git branch of each session", _m3_git_branch),
    (4, "consolidation proposals", _m4_proposals),
    (5, "the memory version a proposal is for", _m5_proposal_version),
    (6, "pruned raw memories and extract outcomes", _m6_extract_log),
    (7, "sessions forgotten with memdeck", _m7_forgotten_sessions),
    (8, "citation events parsed from the rollouts", _m8_citation_events),
    (9, "originator and Codex version as columns", _m9_listed_columns),
]
LATEST = MIGRATIONS[-1][0]


def connect(path: Path, readonly: bool = False,
            same_thread: bool = True) -> sqlite3.Connection:
    """`same_thread=False` only for a connection one thread uses and another closes."""
    uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                               check_same_thread=same_thread, isolation_level=None)
        if readonly and not os.access(path.parent, os.W_OK):
            try:  # a WAL database in a folder that cannot be written: no -shm to make
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
            except sqlite3.OperationalError:
                conn.close()
                conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True,
                                       check_same_thread=same_thread, isolation_level=None)
    except sqlite3.OperationalError as e:
        raise StoreError(f"cannot open {path}: {e}") from None
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn


def disk_is_full(path: Path) -> bool:
    """Less than 1 MB free on the file system holding `path` (SQLite calls that a "disk I/O
    error" when it cannot grow its journal)."""
    try:
        st = os.statvfs(path if path.is_dir() else path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < (1 << 20)


def describe_sqlite_error(path: Path, e: sqlite3.Error) -> str:
    text = str(e)
    if ("disk" in text or "full" in text) and disk_is_full(path):
        return (f"no space left on the disk holding {path.name}; free some space and run it "
                "again (the database itself is fine)")
    if "locked" in text or "busy" in text:
        return f"{path.name} is locked by another program; try again in a moment"
    if "not a database" in text or "malformed" in text:
        return f"{path} is not a valid SQLite database ({text})"
    if "readonly" in text or "read-only" in text:
        return f"{path} is read-only ({text})"
    return f"{path.name}: {text}"


class Store:
    """memdeck.sqlite, opened lazily once per thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._migrate_lock = threading.Lock()

    @classmethod
    def scratch(cls, copy_of: Path | None = None) -> Store:
        """A store in a private temporary folder removed at exit, for a home memdeck cannot
        write: a copy of the home's database when it has one (the index starts warm)."""
        import atexit
        import shutil
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="memdeck-read-only-"))
        atexit.register(shutil.rmtree, folder, True)
        path = folder / "memdeck.sqlite"
        if copy_of is not None and copy_of.is_file():
            try:
                # immutable: a read-only folder has no room for the -shm file WAL wants
                src = sqlite3.connect(f"file:{copy_of}?immutable=1", uri=True)
                dst = sqlite3.connect(path)
                try:
                    src.backup(dst)
                finally:
                    src.close()
                    dst.close()
            except sqlite3.Error:
                path.unlink(missing_ok=True)  # start cold
        return cls(path)

    def conn(self) -> sqlite3.Connection:
        c = getattr(self._local, "conn", None)
        if c is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            c = connect(self.path)
            try:
                c.execute("PRAGMA journal_mode=WAL")
                c.execute("PRAGMA synchronous=NORMAL")
                self._migrate(c)
            except sqlite3.Error as e:
                c.close()
                raise StoreError(describe_sqlite_error(self.path, e)) from None
            self._local.conn = c
        return c

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > LATEST:
            raise StoreError(
                f"{self.path} was written by a newer memdeck (schema {version}, this one knows "
                f"{LATEST}); upgrade memdeck"
            )
        if version == LATEST:
            return
        import sqlite_utils

        with self._migrate_lock:
            db = sqlite_utils.Database(conn)
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                for number, _name, step in MIGRATIONS:
                    if number > version:
                        step(db)
                        conn.execute(f"PRAGMA user_version={number}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        c = self.conn()
        c.execute("BEGIN IMMEDIATE")
        try:
            yield c
        except BaseException:
            c.execute("ROLLBACK")
            raise
        else:
            c.execute("COMMIT")

    def close(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None
