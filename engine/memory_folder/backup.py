"""Reset exactly what Codex's reset clears (docs/codex-format.md "Reset"), after a backup that
restores byte for byte.

A backup is `memdeck/backups/<UTC timestamp>.tar.gz` holding the memory roots
(`memories/`, `memories_extensions/`, `memories_v2/`, their `.git` included) under
`roots/`, the stage-1 and memory-job rows of every pipeline DB as JSON under `db/`, and a
`manifest.json` that says why it was taken ("before reset", "before restore of backup …").
Reset then empties the roots, keeping the folders, and deletes those rows (and zeroes
`consolidation_progress`); threads, rollouts and their memory modes are untouched. A
symlinked root is refused, as Codex refuses it. Restoring first backs up the current state,
so a restore can itself be undone.

Both change every root and the rows through one switch (switch.py: staged, journaled,
switched at once, rows after, finished by the next command after a crash), without the
global lease: they rewrite the pipeline DBs' rows themselves, and reset refuses while a
live consolidation holds the lease in any of them (a dead memdeck's does not count).
"""

from __future__ import annotations

import errno
import io
import json
import os
import sqlite3
import tarfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..atomic import atomic_file, write_atomic
from ..codex.home import CodexHome
from ..codex.pipeline_snapshot import GLOBAL_KIND, STAGE1_KIND
from ..crash_points import crash_point
from ..errors import HomeError, MemdeckError, NotFound
from ..phase2.proposals import discard_all_proposal_files
from ..store import connect, describe_sqlite_error
from ..workers import dead_memdeck_worker
from .journal import JournalPaths, RowStep, pipeline_dbs, row_step
from .switch import Switch
from .writer import Change, Lease, MemoryFolderWriter

KINDS = (STAGE1_KIND, GLOBAL_KIND)


@dataclass(frozen=True)
class Backup:
    id: str
    created_at: float
    path: Path
    reason: str = ""  # why it was taken: "before reset", "before restore of backup <id>"

    @property
    def reason_text(self) -> str:
        return self.reason or "reason not recorded"  # taken by a memdeck that did not say


def _pipeline_dbs(home: CodexHome) -> list[Path]:
    return [p for p in pipeline_dbs(home) if p.exists()]


def _check_roots(home: CodexHome) -> list[Path]:
    for root in home.memory_roots_for_reset:
        if root.is_symlink():
            raise HomeError(f"{root} is a symlink; Codex and memdeck refuse to reset through it")
    return home.memory_roots_for_reset


def _refuse_live_consolidation(path: Path, now: int) -> None:
    """Refuse while someone alive holds the consolidation lease (a dead memdeck's is not)."""
    try:
        conn = connect(path, readonly=True)
        try:
            row = conn.execute("SELECT worker_id, lease_until FROM jobs WHERE kind = ? AND "
                               "status = 'running' AND lease_until > ?",
                               (GLOBAL_KIND, now)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error as e:
        text = describe_sqlite_error(path, e)
        damaged = "not a valid SQLite database" in text
        raise MemdeckError(text + "; nothing was reset" + (
            ": move it aside (Codex makes a new one), then reset again" if damaged else "")
            ) from None
    if row and not dead_memdeck_worker(row[0]):
        raise MemdeckError(f"a consolidation is running ({row[0] or 'unknown worker'}, lease "
                           f"until {time.strftime('%H:%M', time.localtime(row[1]))}); "
                           "reset after it finishes")


def _rows(conn: sqlite3.Connection) -> dict[str, Any]:
    def dump(sql: str, args: tuple = ()) -> dict[str, Any]:
        cur = conn.execute(sql, args)
        return {"columns": [d[0] for d in cur.description],
                "rows": [list(r) for r in cur.fetchall()]}

    out = {"stage1_outputs": dump("SELECT * FROM stage1_outputs"),
           "jobs": dump("SELECT * FROM jobs WHERE kind IN (?, ?)", KINDS)}
    try:
        out["consolidation_progress"] = dump("SELECT * FROM consolidation_progress")
    except sqlite3.OperationalError:
        pass
    return out


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mtime: float) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), int(mtime), 0o644
    tar.addfile(info, io.BytesIO(data))


def _add_tree(tar: tarfile.TarFile, root: Path, arc: str, links: dict[str, str]) -> None:
    """`root` under `arc`: folders and plain files only. A file linked twice is stored
    twice (never a hard-link member) and a symlink is listed in the manifest, not stored as
    a link: a backup holds no link member, so one that does was not written by memdeck."""
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        rel = here.relative_to(root).as_posix()
        name = arc if rel == "." else f"{arc}/{rel}"
        tar.add(here, arcname=name, recursive=False)
        for entry in sorted(files) + sorted(d for d in dirs if (here / d).is_symlink()):
            p, member = here / entry, f"{name}/{entry}"
            if p.is_symlink():
                links[member] = os.readlink(p)
                continue
            if not p.is_file():
                continue  # a FIFO or a device: nothing Codex reads
            info = tar.gettarinfo(p, arcname=member)
            info.type, info.size, info.linkname = tarfile.REGTYPE, p.stat().st_size, ""
            with open(p, "rb") as f:
                tar.addfile(info, f)
        dirs[:] = sorted(d for d in dirs if not (here / d).is_symlink())


def create_backup(home: CodexHome, now: float, reason: str) -> Backup:
    roots = _check_roots(home)
    home.ensure_memdeck_dir()
    home.backups_dir.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    bid, n = stamp, 1
    while (home.backups_dir / f"{bid}.tar.gz").exists():
        n += 1
        bid = f"{stamp}-{n}"
    final = home.backups_dir / f"{bid}.tar.gz"
    manifest: dict[str, Any] = {"format": 2, "created_at": now, "home": str(home.root),
                                "reason": reason, "roots": [], "databases": [], "links": {}}
    # complete under its name or not there at all: a backup cut short is never offered
    with atomic_file(final) as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
        for root in roots:
            if root.is_dir():
                _add_tree(tar, root, f"roots/{root.name}", manifest["links"])
                manifest["roots"].append(root.name)
                crash_point("backup.writing")
        for db in _pipeline_dbs(home):
            try:
                conn = connect(db, readonly=True)
                try:
                    data = _rows(conn)
                finally:
                    conn.close()
            except sqlite3.Error as e:
                raise MemdeckError(describe_sqlite_error(db, e)) from None
            rel = str(db.relative_to(home.root)) if db.is_relative_to(home.root) else str(db)
            _add_bytes(tar, f"db/{len(manifest['databases'])}.json",
                       json.dumps(data).encode(), now)
            manifest["databases"].append(rel)
        _add_bytes(tar, "manifest.json", json.dumps(manifest, indent=2).encode(), now)
    return Backup(bid, now, final, reason)


def list_backups(home: CodexHome) -> list[Backup]:
    out = []
    for p in sorted(home.backups_dir.glob("*.tar.gz"), reverse=True):
        try:
            with tarfile.open(p, "r:gz") as tar:
                manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
            why = manifest.get("reason")
            out.append(Backup(p.name[: -len(".tar.gz")], float(manifest["created_at"]), p,
                              why if isinstance(why, str) else ""))
        except (OSError, KeyError, ValueError, TypeError, EOFError, zlib.error,
                tarfile.TarError):
            continue  # a damaged (cut short) or foreign file is not offered as a backup
    out.sort(key=_taken_order, reverse=True)  # newest first
    return out


def _taken_order(b: Backup) -> tuple[float, int]:
    """When it was taken; in the same second `<stamp>-2` came after `<stamp>`."""
    _, dash, n = b.id.partition("-")
    return b.created_at, int(n) if dash and n.isdigit() else 1


def _clear_rows(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM stage1_outputs")
    conn.execute("DELETE FROM jobs WHERE kind IN (?, ?)", KINDS)
    try:
        conn.execute("UPDATE consolidation_progress SET max_thread_count = 0")
    except sqlite3.OperationalError:
        pass


def reset(writer: MemoryFolderWriter) -> Backup:
    """Back up, then clear what Codex's reset clears, through one switch (switch.py): the
    roots emptied at once, then the rows; committed to history as the user's change.
    Returns the backup."""
    home = writer.home
    with writer.change() as change:
        roots = _check_roots(home)
        now = writer.now()
        dbs = _pipeline_dbs(home)
        for db in dbs:
            _refuse_live_consolidation(db, int(now))
        change.before()  # the state before, if history does not hold it yet
        backup = create_backup(home, now, "before reset")
        sw = Switch(change)
        for root in roots:
            if root.is_dir():
                sw.empty(root)
        sw.commit(ResetRows(dbs, backup.path), origin="user",
                  message=f"reset: all memories cleared (backup {backup.id})", what="reset")
    return backup


def restore_backup(writer: MemoryFolderWriter, backup_id: str) -> Backup:
    """Put a backup back exactly, through one switch: every root and the rows of every
    pipeline DB, committed to history as a `restore`; the current state is backed up
    first. Returns that backup."""
    home = writer.home
    with writer.change() as change:
        match = [b for b in list_backups(home) if b.id == backup_id]
        if not match:
            raise NotFound(f"no backup {backup_id!r} (see `memdeck backups`)")
        _check_roots(home)
        sw = Switch(change)
        try:  # read and unpack everything before anything live is touched
            unpacked, rows = _unpack(match[0].path, backup_id, sw.dir / "unpacked")
            write_atomic(sw.file("rows.json"), json.dumps(rows))
            safety = create_backup(home, writer.now(), f"before restore of backup {backup_id}")
            change.before()
            for name in ("memories", "memories_extensions", "memories_v2"):
                root, restored = home.root / name, unpacked / "roots" / name
                if restored.is_dir():
                    restored.rename(sw.target(root))
                elif root.is_dir():
                    sw.empty(root)
        except BaseException:
            sw.discard()
            raise
        sw.commit(RestoreBackupRows(sw.file("rows.json")), origin="restore",
                  message=f"restore backup {backup_id}", what=f"restore backup {backup_id}",
                  gate=(f"backup {backup_id} would put back",
                        "it is kept as it is; nothing was restored"))
    return safety


@row_step
@dataclass
class ResetRows(RowStep):
    """A reset's rows: every pipeline database's stage-1 and memory-job rows cleared (each in
    one transaction), and the proposals' files, once the emptied roots are live."""

    op = "reset"
    clear: list[Path]  # the pipeline databases (journal.py `pipeline_dbs`)
    backup: Path | None  # the backup taken first, named in a failure

    def to_json(self) -> dict[str, Any]:
        return {"clear": [str(p) for p in self.clear],
                "backup": None if self.backup is None else self.backup.name}

    @classmethod
    def from_json(cls, raw: dict[str, Any], paths: JournalPaths) -> ResetRows:
        backup = raw.get("backup")
        return cls([paths.database(str(p)) for p in raw.get("clear", [])],
                   None if backup is None else paths.backup(str(backup)))

    def write(self, change: Change, lease: Lease | None) -> None:
        home = change.writer.home
        for db in self.clear:
            if db.exists():
                _write_rows(db, {}, backup=None if self.backup is None else str(self.backup))
        if home.memdeck_db.exists():  # what the model wrote must not outlive the memories
            discard_all_proposal_files(home, change.writer.store, change.writer.now())


@row_step
@dataclass
class RestoreBackupRows(RowStep):
    """A restored backup's rows, put back in every pipeline database it holds (each in one
    transaction, so running it again gives the same rows)."""

    op = "restore-backup"
    rows: Path  # rows.json in the change's staging folder: {database: {table: rows}}

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows.name}

    @classmethod
    def from_json(cls, raw: dict[str, Any], paths: JournalPaths) -> RestoreBackupRows:
        return cls(paths.staged_file(str(raw["rows"])))

    def write(self, change: Change, lease: Lease | None) -> None:
        home = change.writer.home
        data = json.loads(self.rows.read_text(encoding="utf-8"))
        for rel, tables in data.items():
            path = Path(rel) if os.path.isabs(rel) else home.root / rel
            if path.exists():
                _write_rows(path, tables)


def _write_rows(path: Path, tables: dict[str, Any], backup: str | None = None) -> None:
    try:
        conn = connect(path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            _clear_rows(conn)
            for table, content in tables.items():
                cols = ", ".join(content["columns"])
                marks = ", ".join("?" * len(content["columns"]))
                verb = "INSERT OR REPLACE" if table == "consolidation_progress" else "INSERT"
                conn.executemany(f"{verb} INTO {table} ({cols}) VALUES ({marks})",
                                 [tuple(r) for r in content["rows"]])
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.Error as e:
        kept = f"; backup kept at {backup}" if backup else ""
        raise MemdeckError(describe_sqlite_error(path, e) + kept) from None


def _unpack(src: Path, backup_id: str, dest: Path) -> tuple[Path, dict[str, Any]]:
    """The backup's roots unpacked under `dest`, and its rows by database."""
    try:
        with tarfile.open(src, "r:gz") as tar:
            manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
            members = [m for m in tar.getmembers() if m.name.startswith("roots/")]
            safe_extract(tar, members, dest)
            _make_links(dest, manifest.get("links") or {})
            dbs = {name: json.load(tar.extractfile(f"db/{i}.json"))  # type: ignore[arg-type]
                   for i, name in enumerate(manifest["databases"])}
    except OSError as e:
        if e.errno in _WRITE_ERRORS:  # the backup is fine; there is no room to unpack it
            raise MemdeckError(f"cannot unpack backup {backup_id} into {dest.parent}: "
                               f"{e.strerror}; nothing was changed") from None
        raise _damaged(backup_id, e) from None
    except (tarfile.TarError, ValueError, KeyError, TypeError, EOFError, zlib.error) as e:
        raise _damaged(backup_id, e) from None
    return dest, dbs


_WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM,
                 errno.EMFILE)


def _damaged(backup_id: str, e: BaseException) -> MemdeckError:
    return MemdeckError(f"backup {backup_id} is damaged or unsafe ({type(e).__name__}: "
                        f"{str(e).splitlines()[0] if str(e) else 'unreadable'}); "
                        "nothing was changed")


def safe_extract(tar: tarfile.TarFile, members: list[tarfile.TarInfo], dest: Path) -> None:
    """Extract plain files and folders whose names stay inside `dest`, on every Python
    memdeck supports (3.11.0–3.11.3 have no extraction filters). A link of any kind is
    refused: memdeck writes none (its symlinks are in the manifest), so a backup with one was
    made by someone else, and links are how a crafted archive writes outside (a chain of
    relative links, each harmless alone)."""
    for m in members:
        parts = PurePosixPath(m.name).parts
        if m.name.startswith("/") or ".." in parts or not (m.isfile() or m.isdir()):
            raise tarfile.TarError(f"unsafe member {m.name!r}"
                                   + (" (a link)" if m.issym() or m.islnk() else ""))
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, members=members, filter="tar")
    else:  # pragma: no cover - Python 3.11.0–3.11.3; the checks above did the filter's work
        tar.extractall(dest, members=members)


def _make_links(dest: Path, links: dict[str, str]) -> None:
    """The symlinks a backup lists, made after every file is in place (nothing is written
    through them): each inside its root, pointing inside that root, never at another link."""
    if not isinstance(links, dict):
        raise ValueError("links is not a table")
    names = set(links)
    for name, target in sorted(links.items()):
        parts = PurePosixPath(name).parts
        if len(parts) < 3 or parts[0] != "roots" or ".." in parts or name.startswith("/") \
                or not isinstance(target, str) or not target or target.startswith("/"):
            raise tarfile.TarError(f"unsafe link {name!r}")
        resolved = os.path.normpath(str(PurePosixPath(name).parent / target))
        root = f"roots/{parts[1]}"
        if not (resolved == root or resolved.startswith(root + "/")) or resolved in names \
                or any(resolved.startswith(n + "/") or name.startswith(n + "/") for n in names):
            raise tarfile.TarError(f"link {name!r} points outside its folder")
        where = dest / name
        if where.exists() or where.is_symlink():
            raise tarfile.TarError(f"link {name!r} is also a file")
        where.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, where)
