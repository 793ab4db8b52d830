"""Reset exactly what Codex's reset clears (docs/codex-format.md "Reset"), after a backup that
restores byte for byte.

A backup is `memdeck/backups/<UTC timestamp>.tar.gz` holding the memory roots
(`memories/`, `memories_extensions/`, `memories_v2/`, their `.git` included) under
`roots/`, the stage-1 and memory-job rows of every pipeline DB as JSON under `db/`, and a
`manifest.json` that says why it was taken ("before reset", "before restore of backup …").
Reset then deletes those rows (and zeroes `consolidation_progress`), and empties the roots,
keeping the folders; threads, rollouts and their memory modes are untouched. A symlinked
root is refused, as Codex refuses it. Restoring first backs up the current state, so a
restore can itself be undone.

Both go through the memory-folder writer (writer.py: its lock, crash recovery first, history
before and after) without its lease: they rewrite the pipeline DBs' rows themselves, and
reset refuses while a consolidation holds the lease in any of them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import atomic_file
from ..codex.home import CodexHome
from ..codex.pipeline_snapshot import GLOBAL_KIND, STAGE1_KIND
from ..errors import HomeError, MemdeckError, NotFound
from ..store import connect, describe_sqlite_error
from .writer import MemoryFolderWriter

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
    names = [home.sqlite_home / "memories_1.sqlite", home.sqlite_home / "memories_v2_1.sqlite",
             home.memdeck_dir / "memories.sqlite", home.memdeck_dir / "memories_v2.sqlite"]
    return [p for p in names if p.exists()]


def _check_roots(home: CodexHome) -> list[Path]:
    for root in home.memory_roots_for_reset:
        if root.is_symlink():
            raise HomeError(f"{root} is a symlink; Codex and memdeck refuse to reset through it")
    return home.memory_roots_for_reset


def _refuse_live_consolidation(db: sqlite3.Connection, path: Path, now: int) -> None:
    row = db.execute("SELECT worker_id, lease_until FROM jobs WHERE kind = ? AND status = "
                     "'running' AND lease_until > ?", (GLOBAL_KIND, now)).fetchone()
    if row:
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
    manifest: dict[str, Any] = {"format": 1, "created_at": now, "home": str(home.root),
                                "reason": reason, "roots": [], "databases": []}
    # complete under its name or not there at all: a backup cut short is never offered
    with atomic_file(final) as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
        for root in roots:
            if root.is_dir():
                tar.add(root, arcname=f"roots/{root.name}")
                manifest["roots"].append(root.name)
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
        except (OSError, KeyError, ValueError, tarfile.TarError):
            continue  # a damaged or foreign file is not offered as a backup
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
    """Back up, then clear what Codex's reset clears, committed to history as the user's
    change. Returns the backup."""
    with writer.change() as change:
        change.before()  # the state before, if history does not hold it yet
        backup = _reset(writer.home, writer.now())
        change.after("user", f"reset: all memories cleared (backup {backup.id})")
    return backup


def restore_backup(writer: MemoryFolderWriter, backup_id: str) -> Backup:
    """Put a backup back exactly, committed to history as a `restore`; the current state is
    backed up first. Returns that backup."""
    with writer.change() as change:
        change.before()
        safety = _restore(writer.home, backup_id, writer.now())
        change.after("restore", f"restore backup {backup_id}")
    return safety


def _reset(home: CodexHome, now: float) -> Backup:
    roots = _check_roots(home)
    for db in _pipeline_dbs(home):
        conn = connect(db)
        try:
            _refuse_live_consolidation(conn, db, int(now))
        finally:
            conn.close()
    backup = create_backup(home, now, "before reset")
    for db in _pipeline_dbs(home):
        conn = connect(db)
        try:
            conn.execute("BEGIN IMMEDIATE")
            _clear_rows(conn)
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            raise MemdeckError(describe_sqlite_error(db, e) + f"; backup kept at "
                               f"{backup.path}") from None
        finally:
            conn.close()
    for root in roots:
        if root.is_dir():
            for child in list(root.iterdir()):
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
    return backup


def _restore(home: CodexHome, backup_id: str, now: float) -> Backup:
    match = [b for b in list_backups(home) if b.id == backup_id]
    if not match:
        raise NotFound(f"no backup {backup_id!r} (see `memdeck backups`)")
    src = match[0].path
    _check_roots(home)
    staging = home.memdeck_dir / f".restore-{backup_id}"
    if staging.exists():
        shutil.rmtree(staging)
    try:  # read and unpack everything before anything live is touched
        with tarfile.open(src, "r:gz") as tar:
            manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
            members = [m for m in tar.getmembers() if m.name.startswith("roots/")]
            tar.extractall(staging, members=members, filter="tar")
            dbs = {name: json.load(tar.extractfile(f"db/{i}.json"))  # type: ignore[arg-type]
                   for i, name in enumerate(manifest["databases"])}
    except (tarfile.TarError, OSError, ValueError, KeyError, TypeError, EOFError) as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise MemdeckError(f"backup {backup_id} is damaged or unsafe ({type(e).__name__}: "
                           f"{str(e).splitlines()[0] if str(e) else 'unreadable'}); "
                           "nothing was changed") from None
    safety = create_backup(home, now, f"before restore of backup {backup_id}")
    for name in ("memories", "memories_extensions", "memories_v2"):
        root, restored = home.root / name, staging / "roots" / name
        if restored.exists():
            old = root.with_name(f".{name}.before-restore")
            if root.exists():
                root.rename(old)
            restored.rename(root)
            if old.exists():
                shutil.rmtree(old)
        elif root.is_dir():
            shutil.rmtree(root)
            root.mkdir()
    shutil.rmtree(staging, ignore_errors=True)
    for rel, data in dbs.items():
        path = Path(rel) if os.path.isabs(rel) else home.root / rel
        if not path.exists():
            continue
        conn = connect(path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            _clear_rows(conn)
            for table, content in data.items():
                cols = ", ".join(content["columns"])
                marks = ", ".join("?" * len(content["columns"]))
                verb = "INSERT OR REPLACE" if table == "consolidation_progress" else "INSERT"
                conn.executemany(f"{verb} INTO {table} ({cols}) VALUES ({marks})",
                                 [tuple(r) for r in content["rows"]])
            conn.execute("COMMIT")
        finally:
            conn.close()
    return safety
