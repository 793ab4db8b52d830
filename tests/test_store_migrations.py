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
