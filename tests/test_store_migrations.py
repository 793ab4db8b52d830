"""memdeck's own DB upgrades in place: an index built by an older memdeck keeps working."""

from __future__ import annotations

import sqlite3

from memdeck.engine import Engine
from memdeck.engine import store as store
from memdeck.engine.index.scan import scan_file
from memdeck.engine.index.session_index import SCAN_VERSION, RolloutFile, _row


def test_upgrade_from_schema_2_backfills_git_branch(home, monkeypatch) -> None:
    path = home.add("cli-preferences.jsonl")
    db = home.root / "memdeck" / "memdeck.sqlite"
    with monkeypatch.context() as m:  # an index written by a memdeck that knew schema 2
        m.setattr(store, "MIGRATIONS", store.MIGRATIONS[:2])
        m.setattr(store, "LATEST", 2)
        old = store.Store(db)
        st = scan_file(path)
        f = RolloutFile(str(path.relative_to(home.root)), str(path), False,
                        path.stat().st_size, path.stat().st_mtime_ns)
        row = _row(f, st, 0.0)[:17]  # without the newer columns (git_branch, cites)
        with old.transaction() as c:
            c.execute("INSERT INTO sessions (path, archived, size, mtime_ns, scan, thread_id, "
                      "started_at, cwd, source, memory_mode, memory_mode_line, preview, "
                      "bad_lines, file_problem, format, model, indexed_at) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row)
            # the same scanner (an older one would make the index rescan everything once)
            c.execute("INSERT INTO meta (key, value) VALUES ('scan_version', ?)",
                      (SCAN_VERSION,))
        old.close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert "git_branch" not in {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    conn.close()

    eng = Engine.open(home.root)
    stats = eng.refresh()
    assert stats.scanned_full == 0  # no rescan needed: the branch comes from the saved scan
    [s] = eng.sessions()
    assert s.git_branch == "main"
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.LATEST
    conn.close()


def test_upgrade_from_schema_8_backfills_originator_and_codex_version(home,
                                                                       monkeypatch) -> None:
    """The listing reads the originator and the home's Codex versions from columns (no
    `json_extract` of every row): an index written before those columns existed fills them
    from the saved scans, without rescanning a file."""
    path = home.add("codex-0.171-exec.jsonl")
    db = home.root / "memdeck" / "memdeck.sqlite"
    with monkeypatch.context() as m:
        m.setattr(store, "MIGRATIONS", store.MIGRATIONS[:8])
        m.setattr(store, "LATEST", 8)
        old = store.Store(db)
        st = scan_file(path)
        f = RolloutFile(str(path.relative_to(home.root)), str(path), False,
                        path.stat().st_size, path.stat().st_mtime_ns)
        row = _row(f, st, 0.0)[:19]  # without originator, cli_version
        with old.transaction() as c:
            c.execute("INSERT INTO sessions (path, archived, size, mtime_ns, scan, thread_id, "
                      "started_at, cwd, source, memory_mode, memory_mode_line, preview, "
                      "bad_lines, file_problem, format, model, indexed_at, git_branch, cites) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row)
            c.execute("INSERT INTO meta (key, value) VALUES ('scan_version', ?)",
                      (SCAN_VERSION,))
        old.close()

    eng = Engine.open(home.root)
    assert eng.refresh().scanned_full == 0
    [s] = eng.sessions()
    assert s.originator == "codex_exec"
    assert eng.index.codex_versions() == ["0.171.0"]
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.LATEST
    assert conn.execute("SELECT originator, cli_version FROM sessions").fetchall() == [
        ("codex_exec", "0.171.0")]
    conn.close()
