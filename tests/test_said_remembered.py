"""`memdeck remembered ID` / `Engine.said_remembered`: one session side by side — what was
said, the raw memory extracted from it, the lines of today's memory it fed, and what happened
to each message and raw line (docs/architecture.md "The read path")."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from memdeck.engine import Engine, demo_home
from memdeck.tui.cli import main

# the demo's sessions, by what they say (their ids follow the time the demo is built at)
CHECKOUT = "The checkout tests fail"  # consolidated, shop
TOO_RECENT = "Why does `mkdocs serve` fail"  # docs-site, idle 1.5 h
PRUNED = "Give the docs' static assets"
LIN = "01a1f333-3333-7333-8333-333333333333"  # a CJK session (VS Code wrapper), v1
WIN = "01a1f444-4444-7444-8444-444444444444"  # a v2 home's session, Windows cwd
SUB = "01a1f555-5555-7555-8555-555555555555"  # a sub-agent (review) session
LIN_FILE = "rollout_summaries/2026-11-21T08-00-00-Zz9q-jiesuan.md"


def rollout(tid: str, when: str, cwd: str, turns: list[tuple[str, str]],
            source: object = "vscode") -> bytes:
    """tests/test_trace.py's rollout, as the VS Code extension writes it."""
    from tests.test_trace import rollout as cli_rollout

    return cli_rollout(tid, when, cwd, turns, source).replace(
        b'"originator": "codex_cli_rs"', b'"originator": "codex_vscode"')


def pipeline_row(db: Path, tid: str, slug: str, raw: str, summary: str,
                 updated: int = 1_795_000_000) -> None:
    from memdeck.engine.codex.schema import create_memories_db

    if not db.exists():
        create_memories_db(db)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO stage1_outputs VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (tid, updated, raw, summary, slug, updated + 3600, 1, updated + 7200,
                      1, None))
    conn.close()


def demo_id(home_root: Path, preview: str) -> str:
    [s] = [s for s in Engine.open(home_root).sessions() if s.preview.startswith(preview)]
    assert s.id is not None
    return s.id


def remembered_json(capsys, home_root: Path, key: str) -> dict:
    assert main(["remembered", key, "--json", "--home", str(home_root)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return demo_home(tmp_path_factory.mktemp("demo") / "home")


# -- the demo home ---------------------------------------------------------------------------
def test_a_consolidated_session_shows_its_memory_md_block_and_verdicts(capsys, demo) -> None:
    tid = demo_id(demo, CHECKOUT)
    r = remembered_json(capsys, demo, tid[:8])
    assert r["status"] == "extracted" and r["version"] == "v1"
    memory = (demo / "memories" / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    task = next(f for f in r["fed"] if f["file"] == "MEMORY.md")
    a, z = task["lines"]
    assert memory[a - 1] == "## Task 1: fix checkout rounding test, success"
    assert f"thread_id={tid}" in task["text"]
    assert "its rollout_summary_files name the session" in task["why"]
    # the group's lines tagged [Task 1], each section a piece of its own
    tagged = [f for f in r["fed"] if f["why"].endswith("lines of the session's task")]
    assert [f["text"] for f in tagged][0] == (
        "- Run `make check-quick` for tests; the full suite takes about twenty minutes "
        "[Task 1]\n- The database backend is MySQL 8.4 [Task 1]")
    assert not any("red-kite" in f["text"] for f in r["fed"])  # the infra group is not it
    assert r["fed"][-1]["file"].endswith("-checkout_tests.md") and not r["fed"][-1]["counted"]
    # what the user said: kept, and where
    [user] = [m for m in r["said"] if m["kind"] == "user"]
    assert user["text"].startswith("The checkout tests fail. We use MySQL 8.4")
    v = user["verdict"]
    assert v["verdict"] == "kept" and v["where"] == "MEMORY.md:12-13"
    assert v["note"].startswith(f"{v['found']} of {v['of']} keywords in MEMORY.md:12-13")
    assert {"mysql", "quick", "twenty"} <= set(v["matched"])
    # the raw memory, line by line
    assert r["raw_memory"].startswith("---\ndescription: checkout tests in shop")
    said = next(x for x in r["raw_lines"] if x["text"].startswith("- user said:"))
    assert said["verdict"]["verdict"] == "kept"
    assert next(x for x in r["raw_lines"] if x["text"] == "---")["verdict"]["verdict"] == ""

    assert main(["remembered", tid, "--home", str(demo)]) == 0
    out = capsys.readouterr().out
    head, said_part, raw_part, fed_part = out.split("\n\n")
    assert head.startswith(f"{tid} · shop · ")
    assert "compared with MEMORY.md and memory_summary.md" in head
    assert f"  [kept] user · item {user['item_index']} · {v['note']}" in said_part
    assert "[kept] 11: - user said: The checkout tests fail." in raw_part
    assert fed_part.startswith(f"fed today\n  MEMORY.md:{a}-{z} — Task 1: fix checkout")
    assert "(not counted in the verdicts)" in fed_part


def test_a_v1_row_shows_its_rollout_summary_beside_the_raw_memory(capsys, demo) -> None:
    """A v1 stage-1 row keeps a raw memory and a rollout summary: both are shown, the summary
    with its verdicts but out of the counts (they would count the shared lines twice)."""
    tid = demo_id(demo, CHECKOUT)
    r = remembered_json(capsys, demo, tid)
    assert r["version"] == "v1" and r["raw_memory"].startswith("---\ndescription:")
    summary = [x["text"] for x in r["summary_lines"]]
    assert summary[0] == "# Checkout tests" and r["rollout_summary"].startswith(summary[0])
    assert summary == [x for x in r["rollout_summary"].splitlines() if x.strip()]
    signals = next(x for x in r["summary_lines"] if x["text"].startswith("- Preference"))
    assert signals["verdict"]["verdict"] == "kept"
    assert r["counts"] == {"kept": 10, "reworded": 0, "dropped": 0}  # said + raw lines only

    assert main(["remembered", tid, "--home", str(demo)]) == 0
    raw_part = capsys.readouterr().out.split("\n\n")[2]
    raw_lines, _, summary_part = raw_part.partition(
        "\n  rollout summary (memory v1 keeps it beside the raw memory)\n")
    assert raw_lines.startswith("raw memory\n") and "[kept] 11: - user said:" in raw_lines
    assert summary_part.startswith("  [kept] 1: # Checkout tests  (")
    assert "[kept] 7: - Preference signals: The checkout tests fail." in summary_part


def test_a_session_without_raw_memory_says_why(capsys, demo: Path) -> None:
    recent = demo_id(demo, TOO_RECENT)
    r = remembered_json(capsys, demo, recent)
    assert r["status"] == "too_recent" and r["raw_memory"] is None and r["raw_lines"] == []
    assert r["raw_note"].startswith("no raw memory: too_recent: idle ")
    assert r["raw_note"].endswith(", needs 6 h")
    assert r["fed"] == [] and r["fed_note"] == "nothing of this session is in today's memory"
    # said is still shown, every message dropped: nothing of it is remembered
    assert [m["kind"] for m in r["said"]] == ["user", "assistant"]
    assert r["said"][0]["text"] == "Why does `mkdocs serve` fail with address in use?"
    assert {m["verdict"]["verdict"] for m in r["said"]} == {"dropped"}
    assert r["counts"] == {"kept": 0, "reworded": 0, "dropped": 2}

    pruned = remembered_json(capsys, demo, demo_id(demo, PRUNED))
    # the demo is built relative to today: the prune's date moves with it
    assert re.match(r"no raw memory: pruned: pruned \d{4}-\d\d-\d\d: unused for ",
                    pruned["raw_note"])

    assert main(["remembered", recent, "--home", str(demo)]) == 0
    out = capsys.readouterr().out
    assert "raw memory\n  no raw memory: too_recent: idle" in out
    assert out.rstrip().endswith("fed today\n  nothing of this session is in today's memory")


def test_an_unknown_session_exits_1_with_one_line(capsys, demo: Path) -> None:
    assert main(["remembered", "ffffffff", "--home", str(demo)]) == 1
    assert capsys.readouterr().err == (
        "memdeck: no session 'ffffffff' in this home (see `memdeck sessions`)\n")


# -- a CJK session, its user message under the VS Code wrapper -------------------------------
MEMORY_CJK = f"""# Task Group: 商店 (结账)
scope: 商店仓库
applies_to: cwd=/home/林/商店; reuse_rule=any task here

## Task 1: 修复结账测试, success
### rollout_summary_files
- {LIN_FILE} (cwd=/home/林/商店, thread_id={LIN})
### keywords
- 结账, 十进制

## Task 2: other work, success
### rollout_summary_files
- rollout_summaries/2026-11-01T08-00-00-Aa1a-other.md (cwd=/srv/other)

## User preferences
- 结账金额必须使用十进制计算 [Task 1]
- Deploy the widgets with helm charts only [Task 2]

## Reusable knowledge
- 浮点数会导致四舍五入错误 [Task 1]
"""


def test_a_cjk_session_keeps_drops_and_rewords(capsys, home) -> None:
    home.v1()
    root = home.root / "memories"
    (root / "rollout_summaries").mkdir()
    (root / "MEMORY.md").write_text(MEMORY_CJK, encoding="utf-8")
    (root / LIN_FILE).write_text(f"thread_id: {LIN}\ncwd: /home/林/商店\n\n# 结账\n",
                                 encoding="utf-8")
    wrapped = ("# Context from my IDE setup:\n\n## Active file: shop/money.py\n\n"
               "## My request for Codex:\n以后结账金额都用十进制计算，不要用浮点数")
    home.write(f"rollout-2026-11-21T08-00-00-{LIN}.jsonl", rollout(
        LIN, "2026-11-21T08:00:00", "/home/林/商店", [
            ("user", wrapped),
            ("output", "结账金额计算错误"),
            ("assistant", "今天天气很好，我们去公园散步吧"),
            ("assistant", "结账测试通过了，但是日志里还有别的警告信息需要以后处理")]))
    pipeline_row(home.root / "memories_1.sqlite", LIN, "jiesuan",
                 "---\ndescription: 结账\n---\n- 结账金额必须使用十进制\n- 用户喜欢安静的咖啡馆",
                 "# 结账")

    r = remembered_json(capsys, home.root, LIN[:8])
    said = r["said"]
    # the user's own words: the IDE wrapper is gone
    assert said[0]["kind"] == "user"
    assert said[0]["text"] == "以后结账金额都用十进制计算，不要用浮点数"
    assert [m["kind"] for m in said] == ["user", "assistant", "assistant"]  # no tool output
    assert said[0]["verdict"]["verdict"] == "kept"
    assert {"结账", "十进", "进制"} <= set(said[0]["verdict"]["matched"])
    assert said[1]["verdict"]["verdict"] == "dropped"
    assert said[1]["verdict"]["note"].startswith(f"0 of {said[1]['verdict']['of']} keywords")
    assert said[2]["verdict"]["verdict"] == "reworded"
    # Task 2's line is not this session's
    fed = "\n".join(f["text"] for f in r["fed"])
    assert "结账金额必须使用十进制计算 [Task 1]" in fed and "浮点数会导致" in fed
    assert "helm" not in fed and "Task 2" not in fed
    raw = {x["text"]: x["verdict"]["verdict"] for x in r["raw_lines"]}
    assert raw["- 结账金额必须使用十进制"] == "kept" and raw["- 用户喜欢安静的咖啡馆"] == "dropped"


# -- a v2 root -------------------------------------------------------------------------------
def test_a_v2_root_feeds_the_summary_bullet_and_the_rollout_summary(capsys, home) -> None:
    from tests.test_trace import v2_root

    stem = "2026-11-22T09-00-00-Qq7w-deploy"
    v2_root(home.root, WIN, stem, "deploys go through deploy.ps1, never on Fridays",
            f"thread_id: {WIN}\nupdated_at: 2026-11-22T09:00:00+00:00\ncwd: D:\\work\\shop\n\n"
            "# Deploys\n- deploy with deploy.ps1 from D:\\work\\shop\n")
    home.write(f"rollout-2026-11-22T09-00-00-{WIN}.jsonl", rollout(
        WIN, "2026-11-22T09:00:00", "D:\\work\\shop", [
            ("user", "How do we deploy? Use deploy.ps1 and never deploy on Fridays."),
            ("user", "Also the coffee machine on floor three is broken again")]))
    pipeline_row(home.root / "memories_v2_1.sqlite", WIN, "deploy", "",
                 "# Deploys\n- deploy with deploy.ps1 from D:\\work\\shop")

    r = remembered_json(capsys, home.root, WIN)
    assert r["version"] == "v2" and r["root"].endswith("memories_v2")
    assert r["raw_memory"] == "" and r["rollout_summary"].startswith("# Deploys")
    assert r["summary_lines"] == []  # the summary is the raw memory: shown once
    # v2 keeps no raw memory: its summary is the raw memory
    assert [x["text"] for x in r["raw_lines"]] == ["# Deploys",
                                                   "- deploy with deploy.ps1 from D:\\work\\shop"]
    assert [(f["location"], f["counted"]) for f in r["fed"]] == [
        ("memory_summary.md:13", True), (f"rollout_summaries/{stem}.md:1-6", True)]
    assert r["verdict_basis"] == "memory_summary.md and the rollout summary file it points at"
    assert r["said"][0]["verdict"]["verdict"] == "kept"
    assert r["said"][1]["verdict"]["verdict"] == "dropped"
    assert r["project"] == "shop"
    assert not (home.root / "memories").exists()


def test_a_sub_agent_session_says_codex_takes_nothing_from_it(capsys, home) -> None:
    home.write(f"rollout-2026-11-23T09-00-00-{SUB}.jsonl", rollout(
        SUB, "2026-11-23T09:00:00", "C:\\Users\\dev\\shop",
        [("user", "Review the diff of shop/money.py"), ("assistant", "Looks fine.")],
        source={"subagent": "review"}))
    r = remembered_json(capsys, home.root, SUB)
    assert r["raw_memory"] is None and r["status"] == "not_interactive"
    assert r["raw_note"].startswith("no raw memory: not_interactive: sub-agent (review) "
                                    "session: Codex takes memories only from interactive")
    assert [m["text"] for m in r["said"]] == ["Review the diff of shop/money.py", "Looks fine."]
