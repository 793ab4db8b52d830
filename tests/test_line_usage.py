"""The gutter of a memory file (`Engine.line_usage`, `memdeck usage`) and the sessions that
cited a line (`Engine.citing_sessions`): citations mapped through memdeck's history, lines
since removed, drop-out dates under `max_unused_days`, raw-memory citation notes."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memdeck.engine import Engine
from memdeck.engine.clock import FixedClock
from memdeck.tui.cli import main

ADA = "01a1f000-0000-7000-8000-00000000a0a0"  # the session the memory came from
CITER1 = "01a20000-1111-7111-8111-111111111111"
CITER2 = "01a20000-2222-7222-8222-222222222222"

# MEMORY.md as it was on 1 November (history commit 1) ...
OLD = f"""# Task Group: 商店 (checkout)
scope: the shop repository
applies_to: cwd=C:\\Users\\dev\\shop; reuse_rule=any task here

## Task 1: 修复结账四舍五入, success
### rollout_summary_files
- rollout_summaries/2026-10-30T09-00-00-Ab3x-checkout.md (cwd=C:\\Users\\dev\\shop, thread_id={ADA})
### keywords
- 运行 `make check-quick` 进行测试
- the database backend is MySQL 8.4
- use Decimal for money
"""
# ... and today: three lines added at the top, "MySQL 8.4" rewritten
NEW = """# Notes kept by hand
- prefer small commits

""" + OLD.replace("- the database backend is MySQL 8.4", "- the database backend is Postgres 16")


def ts(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


def rollout(tid: str, when: str, entries: list[str], answer: str, cwd: str) -> bytes:
    iso = f"{when}.000Z"
    body = (f"{answer}\n\n<oai-mem-citation>\n<citation_entries>\n" + "\n".join(entries)
            + f"\n</citation_entries>\n<rollout_ids>\n{ADA}\n</rollout_ids>\n</oai-mem-citation>")
    lines = [
        {"timestamp": iso, "type": "session_meta", "payload": {
            "id": tid, "session_id": tid, "timestamp": iso, "cwd": cwd, "source": "cli",
            "originator": "codex_cli_rs", "cli_version": "0.150.0", "model_provider": "openai"}},
        {"timestamp": iso, "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "怎么运行测试?"}]}},
        {"timestamp": iso, "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "phase": "final_answer",
            "content": [{"type": "output_text", "text": body}]}},
    ]
    return ("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n").encode()


# the day these tests read the memory on: after the last citation (25 Nov), before ADA's row
# drops out under max_unused_days = 10 (5 Dec), whatever day the suite runs
TODAY = "2026-12-01T00:00:00"


def on(root: Path, day: str = TODAY) -> Engine:
    """The engine on `root` with its clock at `day` (UTC)."""
    return Engine.open(root, clock=FixedClock(ts(day)))


def commit_state(root: Path, day: str) -> None:
    """Record the memory folder in history as it is, committed on `day`."""
    assert on(root, f"{day}T00:00:00").record_outside_edits()


def pipeline_row(root: Path, name: str, tid: str, *, updated: float, generated: float,
                 usage: int | None = None, last_usage: float | None = None,
                 selected: bool = False) -> None:
    from memdeck.engine.codex.schema import create_memories_db

    db = root / name
    if not db.exists():
        create_memories_db(db)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO stage1_outputs VALUES (?,?,?,?,?,?,?,?,?,?)",
                 (tid, int(updated), "raw", "summary", "checkout", int(generated), usage,
                  None if last_usage is None else int(last_usage), int(selected), None))
    conn.commit()
    conn.close()


@pytest.fixture
def changed_home(home):
    """A v1 home whose MEMORY.md changed after it was cited: history holds the old version
    (1 Nov) and today's (20 Nov); one session cited the old text (10 Nov), one today's."""
    home.v1()
    mem = home.root / "memories" / "MEMORY.md"
    mem.write_text(OLD, encoding="utf-8")
    commit_state(home.root, "2026-11-01")
    mem.write_text(NEW, encoding="utf-8")
    commit_state(home.root, "2026-11-20")
    # 10 Nov, against OLD: line 9 (make check-quick), line 10 (MySQL, rewritten since), and a
    # range past the end of the file
    home.write(f"rollout-2026-11-10T10-00-00-{CITER1}.jsonl", rollout(
        CITER1, "2026-11-10T10:00:00",
        ["MEMORY.md:9-10|note=[测试命令]", "MEMORY.md:900-901|note=[stale]"],
        "运行 `make check-quick`。", "C:\\Users\\dev\\shop"))
    # 25 Nov, against NEW: the same check-quick line, now line 12
    home.write(f"rollout-2026-11-25T10-00-00-{CITER2}.jsonl", rollout(
        CITER2, "2026-11-25T10:00:00", ["MEMORY.md:12-12|note=[test command]"],
        "Run `make check-quick` before pushing.", "/home/dev/src/shop"))
    return home


def test_a_citation_of_an_older_version_counts_on_the_line_that_moved(changed_home) -> None:
    u = on(changed_home.root).line_usage("MEMORY.md")
    by_line = {s.line: s for s in u.lines}
    assert by_line[12].text == "- 运行 `make check-quick` 进行测试"
    assert by_line[12].count == 2  # line 9 on 10 Nov, line 12 on 25 Nov
    assert by_line[12].last_cited == ts("2026-11-25T10:00:00")
    assert by_line[9].count == 0 and by_line[9].never_cited  # what line 9 is today
    assert by_line[13].text.endswith("Postgres 16") and by_line[13].count == 0
    assert u.events == 2 and u.history_versions == 1


def test_a_cited_line_since_removed_is_listed_with_its_old_text(changed_home) -> None:
    u = on(changed_home.root).line_usage("MEMORY.md")
    removed = {(r.line_start, r.line_end): r for r in u.removed}
    mysql = removed[(10, 10)]
    assert mysql.text == "- the database backend is MySQL 8.4"
    assert mysql.count == 1 and mysql.last_cited == ts("2026-11-10T10:00:00")
    assert mysql.commit is not None
    past_end = removed[(900, 901)]
    assert past_end.text == "" and past_end.count == 1


def test_without_history_citations_count_against_the_current_file(home) -> None:
    home.v1()
    (home.root / "memories" / "MEMORY.md").write_text(NEW, encoding="utf-8")
    home.write(f"rollout-2026-11-10T10-00-00-{CITER1}.jsonl", rollout(
        CITER1, "2026-11-10T10:00:00", ["MEMORY.md:9-10|note=[测试命令]"], "ok", "/w"))
    u = on(home.root).line_usage("MEMORY.md")
    assert [s.line for s in u.lines if s.count] == [9, 10]
    assert u.history_versions == 0 and u.removed == ()


def test_citing_sessions_name_the_message_and_its_transcript_item(changed_home) -> None:
    engine = on(changed_home.root)
    cited = engine.citing_sessions("MEMORY.md", 12)
    assert [c.thread_id for c in cited] == [CITER2, CITER1]  # newest first
    old = cited[1]
    assert old.project == "shop"  # from a Windows cwd
    assert old.message == "运行 `make check-quick`。"  # the citation block stripped
    assert old.note == "测试命令"
    detail = engine.session(CITER1)
    assert detail.entries[old.item_index].kind == "assistant"
    assert "make check-quick" in detail.entries[old.item_index].text
    assert engine.citing_sessions("MEMORY.md", 1) == []


def test_drop_out_date_follows_max_unused_days(changed_home) -> None:
    changed_home.config("[features]\nmemories = true\n[memories]\nmax_unused_days = 10\n")
    last = ts("2026-11-25T10:00:00")
    pipeline_row(changed_home.root, "memories_1.sqlite", ADA, updated=ts("2026-10-30T09:00:00"),
                 generated=ts("2026-10-31T00:00:00"), usage=1, last_usage=last)
    u = on(changed_home.root).line_usage("MEMORY.md")
    by_line = {s.line: s for s in u.lines}
    assert by_line[12].drops_out == last + 10 * 86400  # a line of the task, on ADA's row
    assert by_line[4].drops_out == last + 10 * 86400  # the block's header, on the same row
    assert "2026-12-05" in by_line[12].drop_note
    assert by_line[1].drops_out is None and by_line[1].drop_note == ""  # before any block


def test_selected_rows_are_kept_and_the_cli_prints_the_gutter(capsys, changed_home) -> None:
    pipeline_row(changed_home.root, "memories_1.sqlite", ADA, updated=ts("2026-10-30T09:00:00"),
                 generated=ts("2026-10-31T00:00:00"), selected=True)
    assert main(["usage", "MEMORY.md", "--home", str(changed_home.root)]) == 0
    out = capsys.readouterr().out
    assert "   12    2× 2026-11-25  - 运行 `make check-quick` 进行测试" in out
    assert "kept while selected for phase 2" in out
    assert "cited, since removed: lines 10-10 of " in out
    assert main(["usage", "MEMORY.md", "--json", "--home", str(changed_home.root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["lines"][11]["count"] == 2 and data["lines"][11]["last_cited"] == \
        "2026-11-25T10:00:00Z"
    assert data["lines"][0]["never_cited"] is True
    assert main(["usage", "MEMORY.md", "--line", "12", "--json",
                 "--home", str(changed_home.root)]) == 0
    assert [c["thread_id"] for c in json.loads(capsys.readouterr().out)] == [CITER2, CITER1]


def test_a_file_outside_the_memory_folder_is_refused(capsys, changed_home) -> None:
    assert main(["usage", "../config.toml", "--home", str(changed_home.root)]) == 1
    assert "memory folder" in capsys.readouterr().err


def test_v2_root_summary_file_rests_on_its_own_thread(home) -> None:
    """A v2 home (no memories/ folder): the rollout summary's lines drop out with its row."""
    root = home.root / "memories_v2" / "rollout_summaries"
    root.mkdir(parents=True)
    rel = "rollout_summaries/2026-10-30T09-00-00-Ab3x-checkout.md"
    (home.root / "memories_v2" / rel).write_text(
        f"thread_id: {ADA}\nupdated_at: 2026-10-30T09:00:00+00:00\n\n# 结账\n- Decimal\n",
        encoding="utf-8")
    home.write(f"rollout-2026-11-10T10-00-00-{CITER1}.jsonl", rollout(
        CITER1, "2026-11-10T10:00:00", [f"{rel}:4-5|note=[money]"], "Decimal.", "/w"))
    pipeline_row(home.root, "memories_v2_1.sqlite", ADA, updated=ts("2026-10-30T09:00:00"),
                 generated=ts("2026-10-31T00:00:00"))
    engine = on(home.root, "2026-12-03T00:00:00")
    u = engine.line_usage(rel)
    assert u.version == "v2"
    assert [s.count for s in u.lines] == [0, 0, 0, 1, 1]
    assert {s.drops_out for s in u.lines} == {ts("2026-10-30T09:00:00") + 30 * 86400}
    assert "drops out at the next pipeline run" in u.lines[0].drop_note  # 29 Nov is past


def test_raw_memory_cited_before_it_existed_says_why_its_count_is_lower(changed_home) -> None:
    """ADA's row was generated on 15 Nov: the 10 Nov citation was never counted by Codex."""
    pipeline_row(changed_home.root, "memories_1.sqlite", ADA, updated=ts("2026-11-14T09:00:00"),
                 generated=ts("2026-11-15T00:00:00"), usage=1,
                 last_usage=ts("2026-11-25T10:00:00"))
    engine = on(changed_home.root)
    engine.refresh()
    [row] = engine.memories().rows
    assert row.citation_note == "1 citation before this row existed (Codex counts only later ones)"
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "memdeck.tui.cli", "--home",
                          str(changed_home.root), "memories", "--json"],
                         capture_output=True, text=True, check=True).stdout
    [listed] = json.loads(out)  # the CLI says what the app says
    assert listed["citation_note"] == row.citation_note


def test_demo_home_gutter_matches_the_citation_report(tmp_path: Path) -> None:
    from memdeck.engine import demo_home

    engine = Engine.open(demo_home(tmp_path / "demo"))
    u = engine.line_usage("MEMORY.md")
    report = {(x.line_start, x.line_end): x.count for x in engine.citations().lines
              if x.path == "MEMORY.md"}
    assert report  # the demo cites MEMORY.md
    for (a, b), n in report.items():
        assert all(u.lines[i - 1].count == n for i in range(a, b + 1))
    assert sum(1 for s in u.lines if s.never_cited) == len(u.lines) - sum(
        b - a + 1 for a, b in report)
    assert all(s.drop_note == "kept while selected for phase 2" for s in u.lines
               if s.text.startswith("- Run `make check-quick`"))


@pytest.mark.parametrize("old,new", [
    ("a b c", "x a b c"),  # inserted at the top
    ("a b c", "a b"),  # deleted at the end
    ("a b c d", "a B c d"),  # changed in the middle
    ("", "a b"),  # a file that was empty
    ("a b", ""),  # a file emptied since
    ("a  b  a  b", "b  a  b"),  # repeated (blank) lines
    ("文 字 a", "文 新 字 a"),  # CJK text
])
def test_line_map_keeps_equal_lines_in_order(old: str, new: str) -> None:
    from memdeck.engine.read_path.line_mapping import _difflib_map, line_map

    o, n = old.split(" ") if old else [], new.split(" ") if new else []
    for mapped in (line_map(o, n), _difflib_map(o, n)):
        assert len(mapped) == len(o)
        kept = [(i, m) for i, m in enumerate(mapped) if m is not None]
        assert all(o[i] == n[m - 1] for i, m in kept)
        assert [m for _, m in kept] == sorted(m for _, m in kept)
        # as many lines kept as the longest common subsequence allows
        assert len(kept) == sum(size for *_, size in __import__("difflib").SequenceMatcher(
            None, o, n, autojunk=False).get_matching_blocks())
