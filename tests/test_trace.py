"""`memdeck trace FILE:LINE` / `Engine.trace`: a memory line back to its evidence: the task
block, the rollout summary files it lists, their stage-1 rows, the session and the turn the
fact came from, and who last changed the line (docs/architecture.md "The read path")."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memdeck.engine import Engine, demo_home
from memdeck.tui.cli import main

ADA = "01a1f000-0000-7000-8000-00000000a0a0"  # the session a v1 memory came from
LIN = "01a1f111-1111-7111-8111-111111111111"  # a sub-agent (review) session, CJK
WIN = "01a1f222-2222-7222-8222-222222222222"  # a v2 home's session, Windows cwd
ADA_FILE = "rollout_summaries/2026-11-20T10-00-00-Ab3x-checkout.md"
LIN_FILE = "rollout_summaries/placeholder-jiesuan.md"  # renamed to the slug's name


def rollout(tid: str, when: str, cwd: str, turns: list[tuple[str, str]],
            source: object = "cli") -> bytes:
    """A rollout: session_meta, then (kind, text) turns: user, assistant, call, output."""
    iso = f"{when}.000Z"
    lines: list[dict] = [{"timestamp": iso, "type": "session_meta", "payload": {
        "id": tid, "session_id": tid, "timestamp": iso, "cwd": cwd, "source": source,
        "originator": "codex_cli_rs", "cli_version": "0.150.0", "model_provider": "openai"}}]
    for k, (kind, text) in enumerate(turns):
        if kind in ("user", "assistant"):
            part = "input_text" if kind == "user" else "output_text"
            item = {"type": "message", "role": kind, "content": [{"type": part, "text": text}]}
        elif kind == "call":
            item = {"type": "function_call", "name": "exec_command", "call_id": f"c{k}",
                    "arguments": json.dumps({"cmd": text})}
        else:
            item = {"type": "function_call_output", "call_id": f"c{k - 1}", "output": text}
        lines.append({"timestamp": iso, "type": "response_item", "payload": item})
    return ("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n").encode()


def pipeline_row(db: Path, tid: str, slug: str, raw: str, *, usage: int | None = None,
                 selected: bool = True, updated: int = 1_795_000_000) -> None:
    from memdeck.engine.codex.schema import create_memories_db

    if not db.exists():
        create_memories_db(db)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO stage1_outputs VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (tid, updated, raw, "summary", slug, updated + 3600, usage,
                      None if usage is None else updated + 7200, int(selected), None))
    conn.close()


ADA_BULLET = (f"- {ADA_FILE} (cwd=C:\\Users\\dev\\shop, rollout_path=C:\\Users\\dev\\.codex\\"
              f"sessions\\r.jsonl, updated_at=2026-11-20T10:00:00+00:00, thread_id={ADA})")
MEMORY_V1 = f"""# Task Group: shop (checkout)
scope: the shop repository
applies_to: cwd=C:\\Users\\dev\\shop; reuse_rule=any task here

## Task 1: fix checkout rounding, success
### rollout_summary_files
{ADA_BULLET}
### keywords
- make check-quick, Decimal

## Task 2: 修复结账测试, success
### rollout_summary_files
- {LIN_FILE} (cwd=/home/林/商店)
### keywords
- 结账, 四舍五入

## User preferences
- Always run make check-quick before pushing [Task 1]
- The team prefers tabs over spaces in every Makefile [Task 1]
- 结账金额必须使用十进制计算 [Task 2]
"""


@pytest.fixture
def v1_home(home):
    """A v1 home: MEMORY.md with two tasks (one Windows, one CJK from a sub-agent), their
    rollout summary files, stage-1 rows and sessions."""
    home.v1()
    root = home.root / "memories"
    (root / "rollout_summaries").mkdir()
    (root / "MEMORY.md").write_text(MEMORY_V1, encoding="utf-8")
    (root / ADA_FILE).write_text(
        f"thread_id: {ADA}\nupdated_at: 2026-11-20T10:00:00+00:00\n"
        "cwd: C:\\Users\\dev\\shop\n\n# Checkout\n- run make check-quick first\n",
        encoding="utf-8")
    # no thread_id in the bullet nor in this header: the stage-1 row's slug names the file
    (root / LIN_FILE).write_text("cwd: /home/林/商店\n\n# 结账\n- 金额用十进制\n",
                                 encoding="utf-8")
    home.write(f"rollout-2026-11-20T10-00-00-{ADA}.jsonl", rollout(
        ADA, "2026-11-20T10:00:00", "C:\\Users\\dev\\shop", [
            ("user", "The checkout test fails again, please fix it."),
            ("call", "make check-quick"),
            ("output", "FAILED tests/test_checkout.py::test_rounding"),
            ("user", "Remember: ALWAYS run  make Check-Quick before pushing anything."),
            ("assistant", "Done; the rounding uses Decimal now.")]))
    home.write(f"rollout-2026-11-21T08-00-00-{LIN}.jsonl", rollout(
        LIN, "2026-11-21T08:00:00", "/home/林/商店", [
            ("user", "请检查结账模块"),
            ("output", "结账金额计算错误：浮点数四舍五入"),
            ("user", "以后结账金额都用十进制计算，不要用浮点数")],
        source={"subagent": "review"}))
    from memdeck.engine.codex.memory_layout import rollout_summary_file_stem

    db = home.root / "memories_1.sqlite"
    pipeline_row(db, ADA, "checkout", "---\ndescription: checkout rounding\n---\nline 3",
                 usage=4)
    # the file name the row's slug gives (docs/codex-format.md "Rollout summary files")
    lin_file = f"rollout_summaries/{rollout_summary_file_stem(LIN, 1_795_000_000, 'jiesuan')}.md"
    (root / LIN_FILE).rename(root / lin_file)
    (root / "MEMORY.md").write_text(MEMORY_V1.replace(LIN_FILE, lin_file), encoding="utf-8")
    pipeline_row(db, LIN, "jiesuan", "---\ndescription: 结账\n---\n十进制")
    home.lin_file = lin_file
    return home


def trace_json(capsys, home_root: Path, location: str) -> dict:
    assert main(["trace", location, "--json", "--home", str(home_root)]) == 0
    return json.loads(capsys.readouterr().out)


def line_of(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


# -- the demo home ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return demo_home(tmp_path_factory.mktemp("demo") / "home")


def test_the_chain_on_the_demo_home(capsys, demo: Path) -> None:
    memory = demo / "memories" / "MEMORY.md"
    n = line_of(memory, "Run `make check-quick` for tests")
    t = trace_json(capsys, demo, f"MEMORY.md:{n}")
    assert t["text"].startswith("- Run `make check-quick`") and t["version"] == "v1"
    b = t["block"]
    assert b["group"] == "Task Group: shop (Django web shop)"
    assert b["section"] == "User preferences" and b["note"] == "the line's tag names Task 1"
    [s] = t["summaries"]
    assert s["file"].endswith("-checkout_tests.md") and s["exists"]
    assert s["thread_id_from"] == "bullet"
    assert s["stage1"]["usage_count"] == 3 and s["stage1"]["selected_for_phase2"]
    assert s["stage1"]["raw_memory_head"].startswith("---\ndescription: checkout tests")
    assert s["session"]["project"] == "shop"
    turn = s["turn"]
    assert turn["confidence"] == "exact" and turn["kind"] == "user"
    # the UI opens the transcript at this item and highlights the span
    detail = Engine.open(demo).session(s["thread_id"])
    item = detail.entries[turn["item_index"]]
    a, z = turn["spans"][0]
    assert item.text[a:z] == turn["phrase"] == "run `make check-quick"
    assert turn["matched_words"] == ["run", "make", "check", "quick"]
    assert t["change"]["note"] == "memdeck has no history of this memory yet"

    assert main(["trace", f"MEMORY.md:{n}", "--home", str(demo)]) == 0
    out = capsys.readouterr().out
    steps = out.split("\n\n")
    assert steps[0].startswith(f"MEMORY.md:{n} (of ")
    assert "section: User preferences" in steps[1]
    assert "stage-1 row: cited 3×" in out and "[exact] exact phrase of 4 words" in out
    assert out.rstrip().endswith("last changed: memdeck has no history of this memory yet")


def test_a_task_heading_is_matched_with_its_section(capsys, demo: Path) -> None:
    n = line_of(demo / "memories" / "MEMORY.md", "## Task 1: fix checkout rounding test")
    t = trace_json(capsys, demo, f"MEMORY.md:{n}")
    assert t["block"]["kind"] == "task" and t["block"]["section_lines"][0] == n
    turn = t["summaries"][0]["turn"]
    assert turn["confidence"] in ("exact", "keywords") and turn["item_index"] is not None


def test_a_v1_summary_topic_links_to_the_files_sharing_its_keywords(capsys, demo) -> None:
    n = line_of(demo / "memories" / "memory_summary.md", "desc: deploying the API")
    t = trace_json(capsys, demo, f"memory_summary.md:{n}")
    assert t["block"]["kind"] == "topic"
    assert t["block"]["group"] == "/home/demo/src/infra"  # the topic's scope
    # only the file of the topic's own scope, and why
    [s] = t["summaries"]
    assert s["file"].endswith("-deploy_staging.md") and "kite" in s["matched_keywords"]
    assert s["thread_id_from"] == "file header"
    # "the red-kite staging cluster" was said "the staging cluster is called red-kite"
    assert s["turn"]["confidence"] == "keywords" and s["turn"]["kind"] == "user"
    assert {"cluster", "kite", "red", "staging"} <= set(s["turn"]["matched_words"])


def test_bad_locations_exit_2_with_one_line(capsys, demo: Path) -> None:
    for argv, says in ((["MEMORY.md"], "is not FILE:LINE"), (["MEMORY.md:0"], "not FILE:LINE"),
                       (["MEMORY.md:x"], "not FILE:LINE"),
                       (["MEMORY.md:9999"], "MEMORY.md has 38 lines; line 9999 is out of range"),
                       (["nope.md:3"], "no file nope.md in the memory folder"),
                       (["../config.toml:1"], "must stay within the memory folder")):
        assert main(["trace", *argv, "--home", str(demo)]) == 2, argv
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1, err


# -- missing file, pruned row, history --------------------------------------------------
def test_a_summary_file_that_no_longer_exists(capsys, v1_home) -> None:
    (v1_home.root / "memories" / ADA_FILE).unlink()
    t = trace_json(capsys, v1_home.root, "MEMORY.md:7")
    [s] = t["summaries"]
    assert s["file"] == ADA_FILE and s["exists"] is False
    assert s["bullet"]["cwd"] == "C:\\Users\\dev\\shop"  # a Windows path, whole
    assert s["bullet"]["rollout_path"] == "C:\\Users\\dev\\.codex\\sessions\\r.jsonl"
    assert s["thread_id"] == ADA and s["stage1"]["usage_count"] == 4
    assert main(["trace", "MEMORY.md:7", "--home", str(v1_home.root)]) == 0
    assert "(missing: no such file in the memory folder)" in capsys.readouterr().out


def test_a_pruned_row_says_so(capsys, v1_home) -> None:
    with sqlite3.connect(v1_home.root / "memories_1.sqlite") as conn:
        conn.execute("DELETE FROM stage1_outputs WHERE thread_id = ?", (ADA,))
    conn.close()
    t = trace_json(capsys, v1_home.root, "MEMORY.md:18")
    [s] = t["summaries"]
    assert s["stage1"] is None and s["stage1_note"] == "no row (pruned or never extracted)"
    assert s["session"]["thread_id"] == ADA  # the session is still found
    assert main(["trace", "MEMORY.md:18", "--home", str(v1_home.root)]) == 0
    assert "stage-1 row: no row (pruned or never extracted)" in capsys.readouterr().out


def test_a_line_a_person_edited_after_the_accept(capsys, tmp_path: Path) -> None:
    engine = Engine.open(demo_home(tmp_path / "demo"))
    p = engine.consolidate("offline")
    assert p is not None and engine.accept(p.id).status == "accepted"
    memory = engine.home.memory_root / "MEMORY.md"
    note = line_of(memory, "[ad-hoc note]")  # the accept added it
    edited = line_of(memory, "The database backend is MySQL 8.4")
    f = engine.memory_read("MEMORY.md")
    engine.memory_save("MEMORY.md", f.text.replace("MySQL 8.4 [", "MySQL 8.4.2 ["), f.version)

    c = trace_json(capsys, engine.root, f"MEMORY.md:{edited}")["change"]
    assert c["origin"] == "edit" and c["person_edited"] is True
    assert c["summary"] == "edit MEMORY.md" and c["commit"] and c["time"].endswith("Z")
    c = trace_json(capsys, engine.root, f"MEMORY.md:{note}")["change"]
    assert c["origin"] == "accept" and c["person_edited"] is False
    assert c["summary"].startswith("accept proposal")
    c = trace_json(capsys, engine.root, "MEMORY.md:1")["change"]
    assert c["origin"] == "start"
    assert main(["trace", f"MEMORY.md:{edited}", "--home", str(engine.root)]) == 0
    out = capsys.readouterr().out
    assert "last changed: edited in memdeck · " in out and "a person edited this line" in out

    # changed by hand outside memdeck: unrecorded until the history records it, then outside
    memory.write_text(memory.read_text(encoding="utf-8").replace(
        "never on Fridays", "never on Fridays or holidays"), encoding="utf-8")
    outside = line_of(memory, "or holidays")
    c = trace_json(capsys, engine.root, f"MEMORY.md:{outside}")["change"]
    assert c["origin"] == "unrecorded" and c["commit"] is None
    engine.record_outside_edits()
    c = trace_json(capsys, engine.root, f"MEMORY.md:{outside}")["change"]
    assert c["origin"] == "outside" and c["person_edited"] is True


# -- turn matching -------------------------------------------------------------------------
def test_exact_phrase_is_case_and_space_insensitive(capsys, v1_home) -> None:
    t = trace_json(capsys, v1_home.root, "MEMORY.md:18")
    turn = t["summaries"][0]["turn"]
    assert turn["confidence"] == "exact" and turn["item_index"] == 3  # the second user turn
    assert turn["phrase"] == "ALWAYS run  make Check-Quick before pushing"


def test_a_reworded_summary_says_no_match(capsys, v1_home) -> None:
    t = trace_json(capsys, v1_home.root, "MEMORY.md:19")  # tabs over spaces: never said
    [s] = t["summaries"]
    assert s["session"] is not None
    assert s["turn"]["confidence"] == "none" and s["turn"]["item_index"] is None
    assert s["turn"]["note"] == "no match: the summary was reworded"
    assert main(["trace", "MEMORY.md:19", "--home", str(v1_home.root)]) == 0
    assert "turn: no match: the summary was reworded" in capsys.readouterr().out


def test_a_cjk_session_matches_without_spaces(capsys, v1_home) -> None:
    t = trace_json(capsys, v1_home.root, "MEMORY.md:20")  # 结账金额必须使用十进制计算
    [s] = t["summaries"]
    assert s["file"] == v1_home.lin_file and s["exists"]
    assert s["thread_id"] == LIN and s["thread_id_from"] == "stage-1 slug"
    assert s["stage1"]["raw_memory_head"].endswith("十进制")
    turn = s["turn"]
    assert turn["confidence"] == "keywords" and turn["item_index"] == 2
    assert {"结账", "金额", "十进", "进制", "计算"} <= set(turn["matched_words"])
    detail = Engine.open(v1_home.root).session(LIN)
    assert detail.session.source_label.startswith("sub-agent")
    text = detail.entries[turn["item_index"]].text
    assert [text[a:z] for a, z in turn["spans"]] == ["结账金额", "用十进制计算"]


def test_cjk_exact_phrase_needs_eight_characters() -> None:
    from memdeck.engine.codex.transcript import TranscriptEntry
    from memdeck.engine.read_path.turn_match import best_turn

    said = [TranscriptEntry(1, None, "user", "user", "以后结账金额都用十进制计算"),
            TranscriptEntry(2, None, "user", "user", "结账金额必须使用十进制计算，谢谢")]
    m = best_turn("结账金额必须使用十进制", said)
    assert m.confidence == "exact" and m.item_index == 1 and m.phrase == "结账金额必须使用十进制"
    short = best_turn("结账金额", said)  # four characters: two words' worth
    assert short.confidence == "keywords"


# -- a v2 root -------------------------------------------------------------------------------
def v2_root(home_root: Path, tid: str, stem: str, topic: str, summary_file: str) -> Path:
    """A v2 memory root: memory_summary.md whose one topic bullet (line 13) names the rollout
    summary file `stem` and the thread, and that file."""
    root = home_root / "memories_v2"
    (root / "rollout_summaries").mkdir(parents=True)
    (root / "memory_summary.md").write_text(
        "v1\n\n## User Profile\n- Ships from Windows.\n\n## User preferences\n\n"
        "## General Tips\n\n## What's in Memory\n### shop\n#### 2026-11-22\n"
        f"- rollout_summaries/{stem}.md — {topic}; thread_id={tid}\n", encoding="utf-8")
    (root / "rollout_summaries" / f"{stem}.md").write_text(summary_file, encoding="utf-8")
    return root


def test_a_v2_summary_bullet_links_to_its_rollout_summary(capsys, home) -> None:
    stem = "2026-11-22T09-00-00-Qq7w-deploy"
    v2_root(home.root, WIN, stem, "deploys go through deploy.ps1 on Fridays never",
            f"thread_id: {WIN}\nupdated_at: 2026-11-22T09:00:00+00:00\n"
            f"rollout_path: C:\\Users\\dev\\.codex\\sessions\\x.jsonl\ncwd: D:\\work\\shop\n\n"
            "# Deploys\n- use deploy.ps1\n")
    home.write(f"rollout-2026-11-22T09-00-00-{WIN}.jsonl", rollout(
        WIN, "2026-11-22T09:00:00", "D:\\work\\shop", [
            ("user", "How do we deploy?"), ("call", "Get-Content deploy.ps1"),
            ("output", "# deploys go through deploy.ps1; never on Fridays")]))
    pipeline_row(home.root / "memories_v2_1.sqlite", WIN, "deploy", "", usage=1)
    pipeline_row(home.root / "memories_1.sqlite", WIN, "deploy", "v1 row", usage=9)  # not read

    t = trace_json(capsys, home.root, "memory_summary.md:13")
    assert t["version"] == "v2" and t["root"].endswith("memories_v2")
    [s] = t["summaries"]
    assert s["file"] == f"rollout_summaries/{stem}.md" and s["exists"]
    assert s["bullet"]["thread_id"] == WIN and s["bullet_line"] == 13
    assert s["stage1"]["usage_count"] == 1  # the v2 database's row
    assert s["session"]["project"] == "shop"
    assert s["turn"]["confidence"] == "exact" and s["turn"]["kind"] == "tool_output"
    assert not (home.root / "memories").exists()

    t = trace_json(capsys, home.root, f"rollout_summaries/{stem}.md:7")  # inside the file
    assert t["block"]["kind"] == "rollout_summary"
    assert t["summaries"][0]["bullet"]["cwd"] == "D:\\work\\shop"
    assert t["summaries"][0]["thread_id"] == WIN


def test_trace_reads_the_index_as_it_is(v1_home) -> None:
    """`Engine.trace` (refresh=False, the app and the bench) finds sessions the index holds
    and reads one rollout; a session not indexed yet falls back to nothing, not a rescan."""
    engine = Engine.open(v1_home.root)
    cold = engine.trace("MEMORY.md", 18)
    assert cold.summaries[0].session is None
    assert cold.summaries[0].session_note == "not in memdeck's index"
    engine.refresh()
    warm = engine.trace("MEMORY.md", 18)
    assert warm.summaries[0].session is not None
    assert warm.summaries[0].turn.confidence == "exact"
