"""The session index kept current incrementally, and the statuses Codex's databases add.

Everything goes through `Engine.open(home)`: real rollout files in a temporary Codex home, a real
memdeck.sqlite, and Codex's own SQLite files (`memories_1.sqlite`, `state_5.sqlite`) created
with the columns docs/codex-format.md "The threads table", "The stage1_outputs table" list.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from suite_clock import now, written_now

from memdeck.engine import Engine, MemdeckError
from memdeck.engine import store as engine_store
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.codex.schema import create_memories_db
from memdeck.engine.index.session_index import RefreshStats

CLI_ID = "01a23054-a1fc-7969-acf0-6947af085e83"
CORRUPT_ID = "01a22c09-fffc-7d28-989e-c997a9247459"
DISABLED_ID = "01a22e2f-50fc-7e24-b476-7db9a01a471c"
CITES_ID = "01a23130-5bfc-7f67-aecc-1c0d25836e04"
ZST_ID = "01a2259a-0cfc-7bfd-88be-bf7b0b290123"
CODEX_WORKER = "019a0000-aaaa-7bbb-8ccc-000000000001"

TOKEN_COUNT = (b'{"timestamp":"2026-12-01T06:41:10.000Z","type":"event_msg","payload":'
               b'{"type":"token_count","info":null,"rate_limits":null}}\n')


def by_id(sessions) -> dict:
    return {s.id: s for s in sessions}


def rel(home, path: Path) -> str:
    return str(path.relative_to(home.root))


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)
    written_now(path)


# --------------------------------------------------------------------------------------
# refresh


def test_refresh_stats_and_nothing_to_do_the_second_time(home) -> None:
    paths = [home.add(n) for n in ("cli-preferences.jsonl", "corrupt-and-truncated.jsonl",
                                   "compressed.jsonl.zst")]
    engine = Engine.open(home.root)
    first = engine.refresh()
    assert isinstance(first, RefreshStats)
    assert (first.files, first.scanned_full, first.scanned_append, first.removed) == (3, 3, 0, 0)
    assert first.bytes_read == sum(p.stat().st_size for p in paths)

    second = engine.refresh()
    assert (second.files, second.scanned_full, second.scanned_append) == (3, 0, 0)
    assert second.bytes_read == 0 and second.removed == 0

    # the index is kept on disk: a new process (a new Engine) has nothing to scan either
    again = Engine.open(home.root).refresh()
    assert (again.scanned_full, again.scanned_append, again.bytes_read) == (0, 0, 0)


def test_new_file_is_scanned_alone(home) -> None:
    home.add("cli-preferences.jsonl")
    engine = Engine.open(home.root)
    engine.refresh()
    new = home.add("cites-memories.jsonl")
    stats = engine.refresh()
    assert (stats.files, stats.scanned_full, stats.scanned_append) == (2, 1, 0)
    assert stats.bytes_read == new.stat().st_size
    assert set(by_id(engine.sessions())) == {CLI_ID, CITES_ID}


def test_append_reads_only_the_new_bytes(home) -> None:
    path = home.add("cli-preferences.jsonl", idle_hours=8)
    engine = Engine.open(home.root)
    [before] = engine.sessions()
    assert before.status == "eligible"
    lines_before = engine.index.scan_state(rel(home, path)).line_count

    append(path, TOKEN_COUNT)
    stats = engine.refresh()
    assert (stats.scanned_full, stats.scanned_append) == (0, 1)
    assert stats.bytes_read == len(TOKEN_COUNT)
    st = engine.index.scan_state(rel(home, path))
    assert st.line_count == lines_before + 1
    assert st.offset == path.stat().st_size and st.bad_lines == 0

    [after] = engine.sessions(refresh=False)
    assert after.preview == before.preview  # the first user message stays the preview
    assert after.status == "too_recent"  # it was just written to again
    assert "needs 6 h" in after.reason


def test_appended_user_message_does_not_change_preview_but_fills_an_empty_one(home,
                                                                             fixture_path):
    lines = fixture_path("cli-preferences.jsonl").read_bytes().split(b"\n")
    path = home.write("rollout-2026-12-01T10-00-00-growing.jsonl", b"\n".join(lines[:4]) + b"\n")
    engine = Engine.open(home.root)
    [s] = engine.sessions()
    assert s.status == "empty" and s.preview == ""
    append(path, b"\n".join(lines[4:]))
    stats = engine.refresh()
    assert stats.scanned_append == 1
    [s] = engine.sessions(refresh=False)
    assert s.preview.startswith("The checkout tests fail.")
    assert s.status == "too_recent"


def test_appended_session_meta_switches_memory_off(home, fixture_path) -> None:
    path = home.add("cli-preferences.jsonl", idle_hours=8)
    engine = Engine.open(home.root)
    [s] = engine.sessions()
    assert (s.status, s.memory_mode) == ("eligible", "enabled")
    n_lines = engine.index.scan_state(rel(home, path)).line_count

    meta = json.loads(path.read_bytes().split(b"\n", 1)[0])
    meta["payload"]["memory_mode"] = "disabled"
    meta["payload"].pop("git")
    append(path, json.dumps(meta, separators=(",", ":")).encode() + b"\n")
    home.touch(path, 8)  # only the memory mode changed, not the idle time

    stats = engine.refresh()
    assert stats.scanned_append == 1
    [s] = engine.sessions(refresh=False)
    assert (s.status, s.memory_mode, s.id) == ("disabled", "disabled", CLI_ID)
    assert f"line {n_lines + 1}" in s.reason


def test_completing_the_pending_line(home) -> None:
    path = home.add("corrupt-and-truncated.jsonl")
    engine = Engine.open(home.root)
    engine.refresh()
    st = engine.index.scan_state(rel(home, path))
    pending = st.pending_bytes
    assert pending > 0 and st.line_count == 9 and st.bad_lines == 1

    # the writer adds a little more, still without the newline: still pending, not bad
    append(path, b'oad":{"type":"token_count",')
    stats = engine.refresh()
    assert stats.scanned_append == 1
    st = engine.index.scan_state(rel(home, path))
    assert (st.line_count, st.bad_lines, st.pending_bytes) == (9, 1, pending + 27)

    rest = b'"info":null,"rate_limits":null}}\n'
    append(path, rest)
    stats = engine.refresh()
    assert stats.scanned_append == 1
    assert stats.bytes_read == pending + 27 + len(rest)
    st = engine.index.scan_state(rel(home, path))
    assert (st.line_count, st.bad_lines, st.pending_bytes) == (10, 1, 0)
    assert st.offset == path.stat().st_size
    [s] = engine.sessions(refresh=False)
    assert s.bad_lines == 1

    r = read_rollout(path)
    assert [p.line_no for p in r.problems] == [5]
    assert r.lines[-1].line_no == 10 and r.lines[-1].item.kind == "token_count"


def test_truncated_file_is_rescanned(home) -> None:
    path = home.add("cli-preferences.jsonl")
    engine = Engine.open(home.root)
    [s] = engine.sessions()
    assert s.preview
    head = b"".join(path.read_bytes().splitlines(keepends=True)[:4])  # no user words yet
    path.write_bytes(head)
    stats = engine.refresh()
    assert (stats.scanned_full, stats.scanned_append) == (1, 0)
    assert stats.bytes_read == len(head)
    [s] = engine.sessions(refresh=False)
    assert s.status == "empty" and s.preview == ""
    assert engine.index.scan_state(rel(home, path)).line_count == 4


def test_rewritten_same_size_is_rescanned(home) -> None:
    path = home.add("cli-preferences.jsonl", idle_hours=8)
    engine = Engine.open(home.root)
    engine.sessions()
    other = "01a23054-0000-7000-8000-000000000000"
    path.write_bytes(path.read_bytes().replace(CLI_ID.encode(), other.encode()))
    home.touch(path, 7)
    stats = engine.refresh()
    assert (stats.scanned_full, stats.scanned_append) == (1, 0)
    assert [s.id for s in engine.sessions(refresh=False)] == [other]


def test_rewritten_longer_is_rescanned(home, fixture_path) -> None:
    path = home.add("cites-memories.jsonl", name="rollout-2026-12-01T10-00-00-x.jsonl")
    engine = Engine.open(home.root)
    assert [s.id for s in engine.sessions()] == [CITES_ID]
    replacement = fixture_path("cli-preferences.jsonl").read_bytes()
    assert len(replacement) > path.stat().st_size
    path.write_bytes(replacement)
    engine.refresh()
    [s] = engine.sessions(refresh=False)
    assert s.id == CLI_ID
    assert s.bad_lines == 0


def test_deleted_file_leaves_the_listing(home) -> None:
    gone = home.add("cli-preferences.jsonl")
    home.add("cites-memories.jsonl")
    engine = Engine.open(home.root)
    assert set(by_id(engine.sessions())) == {CLI_ID, CITES_ID}
    gone.unlink()
    stats = engine.refresh()
    assert (stats.files, stats.removed, stats.scanned_full) == (1, 1, 0)
    assert [s.id for s in engine.sessions(refresh=False)] == [CITES_ID]


def test_moved_to_archived_sessions(home) -> None:
    path = home.add("cli-preferences.jsonl", idle_hours=8)
    engine = Engine.open(home.root)
    [s] = engine.sessions()
    assert s.status == "eligible"
    dest = home.root / "archived_sessions" / path.name
    dest.parent.mkdir()
    os.replace(path, dest)
    stats = engine.refresh()
    assert (stats.files, stats.removed, stats.scanned_full) == (1, 1, 1)
    [s] = engine.sessions(refresh=False)
    assert (s.id, s.status, Path(s.rollout_path)) == (CLI_ID, "archived", dest)


# --------------------------------------------------------------------------------------
# Codex's pipeline database (memories_1.sqlite)

def pipeline_db(home) -> Path:
    path = home.root / "memories_1.sqlite"
    create_memories_db(path)
    return path


def add_output(db: Path, thread_id: str, source_updated_at: int, *, usage: int | None = None,
               selected: bool = False) -> None:
    at = int(now())
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, "
            "rollout_summary, rollout_slug, generated_at, usage_count, last_usage, "
            "selected_for_phase2, selected_for_phase2_source_updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?)",
            (thread_id, source_updated_at, "- uses MySQL 8.4", "# summary", "mysql", at - 3600,
             usage, at - 60 if usage else None, int(selected),
             source_updated_at if selected else None))
    conn.close()


def add_job(db: Path, thread_id: str, status: str, **cols: object) -> None:
    row = {"kind": "memory_stage1", "job_key": thread_id, "status": status,
           "retry_remaining": 3, **cols}
    names = ",".join(row)
    with sqlite3.connect(db) as conn:
        conn.execute(f"INSERT INTO jobs ({names}) VALUES ({','.join('?' * len(row))})",
                     tuple(row.values()))
    conn.close()


def mtime_s(path: Path) -> int:
    return path.stat().st_mtime_ns // 1_000_000_000


@pytest.fixture
def pipeline_home(home):
    home.v1().config("[features]\nmemories = true\n")
    paths = {
        CLI_ID: home.add("cli-preferences.jsonl", idle_hours=8),
        CITES_ID: home.add("cites-memories.jsonl", idle_hours=8),
        CORRUPT_ID: home.add("corrupt-and-truncated.jsonl", idle_hours=8),
        ZST_ID: home.add("compressed.jsonl.zst", idle_hours=8),
        DISABLED_ID: home.add("memory-mode-disabled-later.jsonl", idle_hours=8),
    }
    return home, paths, pipeline_db(home)


def test_pipeline_states(pipeline_home) -> None:
    home, paths, db = pipeline_home
    at = int(now())
    add_output(db, CLI_ID, mtime_s(paths[CLI_ID]), usage=2, selected=True)
    add_job(db, CLI_ID, "done", finished_at=at - 3600, last_success_watermark=mtime_s(
        paths[CLI_ID]), input_watermark=mtime_s(paths[CLI_ID]))
    add_job(db, CITES_ID, "running", worker_id=CODEX_WORKER, ownership_token="tok",
            started_at=at - 60, lease_until=at + 3600, input_watermark=mtime_s(paths[CITES_ID]))
    add_job(db, CORRUPT_ID, "error", retry_at=at + 2 * 3600, retry_remaining=2,
            last_error="model output failed the schema\nat line 3",
            input_watermark=mtime_s(paths[CORRUPT_ID]))
    add_job(db, ZST_ID, "done", finished_at=at - 600,
            last_success_watermark=mtime_s(paths[ZST_ID]), input_watermark=mtime_s(paths[ZST_ID]))
    add_output(db, DISABLED_ID, mtime_s(paths[DISABLED_ID]))
    with sqlite3.connect(db) as conn:  # phase 2's job must not be taken for a session's
        conn.execute("INSERT INTO jobs (kind, job_key, status, retry_remaining, lease_until) "
                     "VALUES ('memory_consolidate_global', 'global', 'running', 3, ?)",
                     (at + 3600,))
    conn.close()

    engine = Engine.open(home.root)
    listing = engine.listing()
    s = by_id(listing.sessions)
    assert listing.warnings == ()

    assert s[CLI_ID].status == "extracted", s[CLI_ID].reason
    assert "in the consolidated memory" in s[CLI_ID].reason and "cited 2×" in s[CLI_ID].reason

    assert s[CITES_ID].status == "running", s[CITES_ID].reason
    assert "Codex session 019a0000" in s[CITES_ID].reason and "lease ends in" in s[CITES_ID].reason

    assert s[CORRUPT_ID].status == "failed", s[CORRUPT_ID].reason
    assert "model output failed the schema" in s[CORRUPT_ID].reason
    assert "at line 3" not in s[CORRUPT_ID].reason  # only the first line of the error
    assert "retry in 2.0 h" in s[CORRUPT_ID].reason and "2 left" in s[CORRUPT_ID].reason

    assert s[ZST_ID].status == "no_output", s[ZST_ID].reason
    assert "nothing durable" in s[ZST_ID].reason

    assert s[DISABLED_ID].status == "disabled"  # the user's switch wins over an old extraction


def test_pipeline_rows_for_an_older_version_of_the_session(pipeline_home) -> None:
    """A row that predates the rollout's last write no longer describes it."""
    home, paths, db = pipeline_home
    at = int(now())
    add_output(db, CLI_ID, mtime_s(paths[CLI_ID]) - 1)
    add_job(db, CORRUPT_ID, "error", retry_at=at + 3600, last_error="boom",
            input_watermark=mtime_s(paths[CORRUPT_ID]) - 1)
    add_job(db, ZST_ID, "done", finished_at=at - 600,
            last_success_watermark=mtime_s(paths[ZST_ID]) - 1)
    add_job(db, CITES_ID, "running", worker_id=CODEX_WORKER, lease_until=at - 10)  # expired

    s = by_id(Engine.open(home.root).sessions())
    assert s[CLI_ID].status == "eligible" and "extracted before, changed since" in s[CLI_ID].reason
    assert s[CORRUPT_ID].status == "eligible"
    assert "failed before, changed since" in s[CORRUPT_ID].reason
    assert s[ZST_ID].status == "eligible"
    assert s[CITES_ID].status == "eligible"


def test_appending_after_extraction_makes_it_pending_again(pipeline_home) -> None:
    home, paths, db = pipeline_home
    add_output(db, CLI_ID, mtime_s(paths[CLI_ID]))
    engine = Engine.open(home.root)
    assert by_id(engine.sessions())[CLI_ID].status == "extracted"
    append(paths[CLI_ID], TOKEN_COUNT)
    s = by_id(engine.sessions())[CLI_ID]
    assert s.status == "too_recent"
    assert "extracted before, changed since" in s.reason


def test_failed_without_retries_left(pipeline_home) -> None:
    home, paths, db = pipeline_home
    add_job(db, CLI_ID, "error", retry_remaining=0, last_error="rate limited",
            input_watermark=mtime_s(paths[CLI_ID]))
    s = by_id(Engine.open(home.root).sessions())[CLI_ID]
    assert s.status == "failed"
    assert "rate limited" in s.reason and "no retries left" in s.reason


def test_locked_pipeline_db_falls_back(pipeline_home, monkeypatch) -> None:
    home, paths, db = pipeline_home
    add_output(db, CLI_ID, mtime_s(paths[CLI_ID]))
    # keep the wait for the lock short; the behaviour is the same with Codex's 5 s
    monkeypatch.setattr(engine_store, "BUSY_TIMEOUT_MS", 200)
    # in WAL mode (Codex's) a writer never blocks readers; a rollback-journal database
    # held exclusively does, which is the case this covers
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        eng = Engine.open(home.root)
        listing = eng.listing()
        s = by_id(listing.sessions)
        assert len(s) == len(paths)
        assert s[CLI_ID].status == "eligible"  # pipeline state unknown: the time rules decide
        assert s[DISABLED_ID].status == "disabled"
        assert len(listing.warnings) == 1
        assert "memories_1.sqlite" in listing.warnings[0] and "locked" in listing.warnings[0]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    listing = eng.listing()
    s = by_id(listing.sessions)
    assert s[CLI_ID].status == "extracted" and listing.warnings == ()


def test_damaged_pipeline_db_falls_back(home) -> None:
    home.v1().config("[features]\nmemories = true\n")
    home.add("cli-preferences.jsonl", idle_hours=8)
    (home.root / "memories_1.sqlite").write_bytes(b"this is not a database" * 100)
    eng = Engine.open(home.root)
    listing = eng.listing()
    [s] = listing.sessions
    assert s.status == "eligible"
    assert len(listing.warnings) == 1 and "memories_1.sqlite" in listing.warnings[0]


# --------------------------------------------------------------------------------------
# Codex's thread catalogue (state_5.sqlite)

THREADS_DDL = """
CREATE TABLE threads (
    id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL, source TEXT NOT NULL, model_provider TEXT NOT NULL,
    cwd TEXT NOT NULL, title TEXT NOT NULL, sandbox_policy TEXT NOT NULL,
    approval_mode TEXT NOT NULL, tokens_used INTEGER NOT NULL DEFAULT 0,
    has_user_event INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0,
    archived_at INTEGER, memory_mode TEXT NOT NULL DEFAULT 'enabled',
    preview TEXT NOT NULL DEFAULT '', history_mode TEXT NOT NULL DEFAULT 'legacy'
);
"""


def state_db(home, rows: list[tuple[str, Path, str, int]]) -> None:
    conn = sqlite3.connect(home.root / "state_5.sqlite")
    conn.executescript(THREADS_DDL)
    for tid, path, mode, archived in rows:
        t = mtime_s(path)
        conn.execute(
            "INSERT INTO threads (id, rollout_path, created_at, updated_at, source, "
            "model_provider, cwd, title, sandbox_policy, approval_mode, archived, memory_mode) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (tid, str(path), t - 600, t, "cli", "openai", "/home/dev/src/widget", "t",
             "workspace-write", "on-request", archived, mode))
    conn.commit()
    conn.close()


def test_polluted_in_thread_catalogue(home) -> None:
    home.config("[features]\nmemories = true\n")
    polluted = home.add("cli-preferences.jsonl", idle_hours=8)
    archived = home.add("cites-memories.jsonl", idle_hours=8)
    plain = home.add("corrupt-and-truncated.jsonl", idle_hours=8)
    state_db(home, [(CLI_ID, polluted, "polluted", 0), (CITES_ID, archived, "enabled", 1),
                    (CORRUPT_ID, plain, "enabled", 0)])
    eng = Engine.open(home.root)
    listing = eng.listing()
    s = by_id(listing.sessions)
    assert listing.warnings == ()
    assert (s[CLI_ID].status, s[CLI_ID].memory_mode) == ("polluted", "polluted")
    assert "disable_on_external_context" in s[CLI_ID].reason
    assert s[CITES_ID].status == "archived"  # Codex archived it; the file has not moved yet
    assert s[CORRUPT_ID].status == "eligible"


# --------------------------------------------------------------------------------------
# memdeck's own database


def test_newer_memdeck_db_is_refused_clearly(home) -> None:
    home.add("cli-preferences.jsonl")
    db = home.root / "memdeck" / "memdeck.sqlite"
    db.parent.mkdir()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(MemdeckError) as e:
        Engine.open(home.root).sessions()
    assert "newer" in str(e.value) and "99" in str(e.value)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 99  # left as it was
    assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    conn.close()


def test_symlink_loop_lists_each_session_once(home) -> None:
    path = home.add("cli-preferences.jsonl")
    (path.parent / "loop").symlink_to("..")
    sessions = Engine.open(home.root).sessions()
    assert [s.id for s in sessions] == [CLI_ID]


class _StderrWithoutFd:
    """What a TUI puts in sys.stderr: writable, but no file descriptor behind it."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return -1


def test_cold_parallel_scan_from_a_tui_thread(home, monkeypatch) -> None:
    """The app indexes a new home from a worker thread with sys.stderr replaced: the process
    pool must start there too (it once failed with 'bad value(s) in fds_to_keep')."""
    import sys
    import threading

    from memdeck.engine.index import session_index as index_mod

    for i in range(40):
        home.add("cli-preferences.jsonl", name=f"rollout-2026-12-01T10-00-{i:02d}-x{i}.jsonl")
    monkeypatch.setattr(index_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(sys, "stderr", _StderrWithoutFd())
    used_pool: list[bool] = []
    real_collect = index_mod._collect
    monkeypatch.setattr(index_mod, "_collect",
                        lambda *a: (used_pool.append(True), real_collect(*a))[1])
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(Engine.open(home.root).sessions()))
    t.start()
    t.join(120)
    assert used_pool == [True]
    assert len(out[0]) == 40
