"""Citation events found by the index and stored idempotently (issue 11, "Rules").

The index scan flags the rollouts that hold a citation tag; only those are parsed, once per
size and mtime, and their events are kept in memdeck's store. Opens are observed through the
kernel (inotify), not by patching memdeck."""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import struct
from pathlib import Path

import pytest

from memdeck.engine import Engine
from memdeck.tui.cli import main

ADA = "01a23054-a1fc-7969-acf0-6947af085e83"
MEMORY_MD = ("# Task Group: 结账 checkout\n\n"
             "## Task 1: 十进制 rounding\n- use Decimal for money\n- make check-quick\n"
             "- MySQL 8.4 backend\n- 测试数据库 in docker\n- see rollout_summaries/\n")


def citing_line(ts: str, text: str, entries: list[str]) -> bytes:
    body = ("<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
            + f"\n</citation_entries>\n<rollout_ids>\n{ADA}\n</rollout_ids>\n"
            "</oai-mem-citation>")
    return (json.dumps({"timestamp": ts, "type": "response_item", "payload": {
        "type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": f"{text}\n\n{body}"}],
        "phase": "final_answer"}}, ensure_ascii=False) + "\n").encode()


def plain_line(ts: str, text: str) -> bytes:
    return (json.dumps({"timestamp": ts, "type": "response_item", "payload": {
        "type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": text}]}}, ensure_ascii=False)
        + "\n").encode()


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def run_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def db_rows(home_root: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(home_root / "memdeck" / "memdeck.sqlite")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def flags(home_root: Path) -> dict[str, int | None]:
    return {Path(p).name: c for p, c in db_rows(home_root, "SELECT path, cites FROM sessions")}


class OpenWatch:
    """The files opened in some folders, as the kernel reports them (inotify IN_OPEN)."""

    IN_OPEN = 0x20
    IN_NONBLOCK = 0o4000

    def __init__(self, *folders: Path) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self._libc.inotify_init1(self.IN_NONBLOCK)
        assert self.fd >= 0
        for d in folders:
            assert self._libc.inotify_add_watch(self.fd, str(d).encode(), self.IN_OPEN) >= 0

    def opened(self) -> set[str]:
        names: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return names
            i = 0
            while i < len(data):
                _wd, _mask, _cookie, size = struct.unpack_from("iIII", data, i)
                name = data[i + 16:i + 16 + size].rstrip(b"\0").decode()
                if name:
                    names.add(name)
                i += 16 + size

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
def citing_home(home):
    """A v2 home: two rollouts that cite memory (one a sub-agent's), two that do not (one
    from Windows), and a MEMORY.md with CJK text."""
    root = home.root / "memories_v2"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    home.add("cites-memories.jsonl")
    sub = home.add("subagent-review.jsonl")
    append(sub, citing_line("2026-12-01T10:50:00.000Z", "子代理: 用 Decimal。",
                            ["MEMORY.md:4-4|note=[十进制]"]))
    home.add("windows-cwd.jsonl")
    home.add("cli-preferences.jsonl")
    return home


def test_the_index_flags_citing_rollouts_on_first_and_incremental_scans(citing_home) -> None:
    home = citing_home
    eng = Engine.open(home.root)
    eng.refresh()
    cites = "rollout-2026-12-01T10-00-00-cites-memories.jsonl"
    sub = "rollout-2026-12-01T10-00-00-subagent-review.jsonl"
    win = "rollout-2026-12-01T10-00-00-windows-cwd.jsonl"
    prefs = "rollout-2026-12-01T10-00-00-cli-preferences.jsonl"
    assert flags(home.root) == {cites: 1, sub: 1, win: 0, prefs: 0}

    # an appended citing message (a Windows path in the entry) flags the rollout...
    win_path = home.root / "sessions" / "2026" / "12" / "01" / win
    append(win_path, citing_line("2026-12-01T11:00:00.000Z", "按 C:\\Users\\logan 的设置",
                                 [f"{home.root}\\memories_v2\\MEMORY.md:5-5|note=[命令]"]))
    stats = eng.refresh()
    assert (stats.scanned_append, stats.scanned_full) == (1, 0)
    assert flags(home.root)[win] == 1
    # ...and a later append without one keeps the flag (carried across scans)
    append(win_path, plain_line("2026-12-01T11:05:00.000Z", "done, no memory used"))
    stats = eng.refresh()
    assert stats.scanned_append == 1 and flags(home.root)[win] == 1
    assert flags(home.root)[prefs] == 0


def test_a_second_engine_opens_no_rollout_that_did_not_change(capsys, citing_home) -> None:
    home = citing_home
    day = home.root / "sessions" / "2026" / "12" / "01"
    first = run_json(capsys, "citations", "--json", "--home", str(home.root))
    assert len(first["events"]) == 2

    watch = OpenWatch(day)
    try:
        again = run_json(capsys, "citations", "--json", "--home", str(home.root))
        usage = run_json(capsys, "usage", "MEMORY.md", "--json", "--home", str(home.root))
        assert watch.opened() == set()  # no rollout opened: flags and events from the store
        assert again == first
        assert [s["count"] for s in usage["lines"][3:5]] == [2, 1]

        # one rollout grows: only it is read (scanned from its offset, then parsed)
        win = day / "rollout-2026-12-01T10-00-00-windows-cwd.jsonl"
        append(win, citing_line("2026-12-01T11:00:00.000Z", "windows 上也一样",
                                ["MEMORY.md:5-5|note=[make]"]))
        grown = run_json(capsys, "citations", "--json", "--home", str(home.root))
        assert watch.opened() == {win.name}
        assert len(grown["events"]) == 3
    finally:
        watch.close()


def test_the_observation_sees_the_scan_open_every_rollout(citing_home) -> None:
    """The check above can fail: a cold index and a first parse are seen opening files."""
    day = citing_home.root / "sessions" / "2026" / "12" / "01"
    watch = OpenWatch(day)
    try:
        Engine.open(citing_home.root).citations()
        assert watch.opened() == {p.name for p in day.iterdir()}
    finally:
        watch.close()


@pytest.mark.parametrize("v1", [False, True], ids=["memories_v2", "memories"])
def test_appending_a_citation_adds_exactly_one_event(capsys, home, v1: bool) -> None:
    root = home.root / ("memories" if v1 else "memories_v2")
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    path = home.add("cites-memories.jsonl")
    home.add("cli-preferences.jsonl")
    argv = ("--home", str(home.root))
    before = run_json(capsys, "usage", "MEMORY.md", "--json", *argv)
    assert [s["count"] for s in before["lines"]][2:8] == [1, 1, 1, 1, 1, 0]

    append(path, citing_line("2026-12-01T10:45:00.000Z", "again: 测试数据库 in docker",
                             ["MEMORY.md:7-8|note=[docker]"]))
    after = run_json(capsys, "usage", "MEMORY.md", "--json", *argv)
    assert after["events"] == before["events"] + 1
    assert [s["count"] for s in after["lines"]][2:8] == [1, 1, 1, 1, 2, 1]
    report = run_json(capsys, "citations", "--json", *argv)
    assert len(report["events"]) == 2
    assert report["usage"]["threads"][ADA] == 2
    assert len(db_rows(home.root, "SELECT * FROM citation_events")) == 2


def test_rewriting_a_rollout_replaces_its_events(capsys, citing_home) -> None:
    home = citing_home
    argv = ("--home", str(home.root))
    path = home.root / "sessions" / "2026" / "12" / "01" / \
        "rollout-2026-12-01T10-00-00-cites-memories.jsonl"
    first = run_json(capsys, "citations", "--json", *argv)
    ranges = {(e["path"], e["line_start"]) for ev in first["events"] for e in ev["entries"]}
    assert ("MEMORY.md", 3) in ranges

    # rewritten (not appended): the same messages but the citing one now cites line 8
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if b"<oai-mem-citation>" in x)
    lines[at] = citing_line("2026-12-01T10:39:57.188Z", "改写后的回答",
                            ["MEMORY.md:8-8|note=[rewritten]"])
    path.write_bytes(b"".join(lines))
    second = run_json(capsys, "citations", "--json", *argv)
    ranges = {(e["path"], e["line_start"]) for ev in second["events"] for e in ev["entries"]}
    assert ("MEMORY.md", 3) not in ranges and ("MEMORY.md", 8) in ranges
    assert len(second["events"]) == len(first["events"])

    # rewritten without any citation: its events are gone, from the output and the store
    path.write_bytes(b"".join(lines[:at] + lines[at + 1:]))
    third = run_json(capsys, "citations", "--json", *argv)
    assert len(third["events"]) == len(first["events"]) - 1
    assert db_rows(home.root, "SELECT count(*) FROM citation_events "
                              f"WHERE path LIKE '%{path.name}'") == [(0,)]


def test_the_same_rollout_indexed_twice_counts_each_event_once(capsys, citing_home) -> None:
    home = citing_home
    argv = ("--home", str(home.root))
    first = run_json(capsys, "citations", "--json", *argv)
    # the whole index rebuilt (a scanner of another version wrote it), the files touched
    # (same bytes, new mtime: parsed again) and a second engine in the same process
    db_rows(home.root, "SELECT 1")  # the store exists
    conn = sqlite3.connect(home.root / "memdeck" / "memdeck.sqlite")
    conn.execute("UPDATE meta SET value = 'old' WHERE key = 'scan_version'")
    conn.commit()
    conn.close()
    for p in (home.root / "sessions" / "2026" / "12" / "01").iterdir():
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert Engine.open(home.root).refresh().scanned_full == 4
    second = run_json(capsys, "citations", "--json", *argv)
    eng = Engine.open(home.root)
    assert len(eng.citations().events) == len(first["events"])
    assert second == first
    assert len(db_rows(home.root, "SELECT * FROM citation_events")) == 2
    assert db_rows(home.root, "SELECT count(*), sum(events) FROM citation_sources") == [(2, 2)]


def test_citations_write_only_memdecks_own_store(capsys, citing_home) -> None:
    home = citing_home
    before = {str(p.relative_to(home.root)) for p in home.root.rglob("*")}
    for _ in range(2):
        assert main(["citations", "--home", str(home.root)]) == 0
        assert main(["usage", "MEMORY.md", "--home", str(home.root)]) == 0
    assert "MEMORY.md" in capsys.readouterr().out
    new = {str(p.relative_to(home.root)) for p in home.root.rglob("*")} - before
    assert {p for p in new if p != "memdeck" and not p.startswith("memdeck/")} == set()
    assert db_rows(home.root, "SELECT count(*) FROM citation_events") == [(2,)]


def test_a_row_of_an_older_scanner_falls_back_to_reading_the_file(citing_home) -> None:
    """A row without the flag (NULL: written before it existed) is not taken as 'cites
    nothing': the file is checked, and its events are still found."""
    home = citing_home
    Engine.open(home.root).refresh()
    conn = sqlite3.connect(home.root / "memdeck" / "memdeck.sqlite")
    conn.execute("UPDATE sessions SET cites = NULL")
    conn.commit()
    conn.close()
    report = Engine.open(home.root).citations()  # the index is current: no rescan fills it
    assert len(report.events) == 2
