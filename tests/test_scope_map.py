"""The scope map (issue 26, item 1): each memory block's projects, and the blocks that leak
from one project into another (engine/read_path/scope_map.py; `memdeck scope`)."""

from __future__ import annotations

import json

from memdeck.engine.read_path.scope_map import EVERY, scope_map
from memdeck.tui.cli import main

SHOP, INFRA = "/home/ana/src/shop", "/home/ana/src/infra"


def summary(name: str, cwd: str, title: str, body: str = "") -> str:
    return (f"thread_id: 0194f5a6-89ab-7cde-8123-{name[:12]:0>12}\nupdated_at: "
            f"2026-12-01T10:00:00Z\nrollout_path: /r/{name}.jsonl\ncwd: {cwd}\n\n# {title}\n"
            f"{body}")


FILES = {
    "MEMORY.md": (
        "# Task Group: shop\nscope: work in /home/ana/src/shop\n"
        f"applies_to: cwd={SHOP}; reuse_rule=tasks in this folder\n\n"
        "## Task 1: Fix checkout, success\n### rollout_summary_files\n"
        f"- rollout_summaries/a.md (cwd={SHOP}, rollout_path=/r/a.jsonl, "
        "updated_at=2026-12-01T10:00:00Z, thread_id=x)\n### keywords\n- checkout\n\n"
        "## Reusable knowledge\n- deploy with /home/ana/src/infra/bin/deploy.sh [Task 1]\n\n"
        "# Task Group: infra\nscope: work in /home/ana/src/infra\n"
        f"applies_to: cwd={INFRA}; reuse_rule=tasks in this folder\n\n"
        "## Task 1: Plan staging, success\n### rollout_summary_files\n"
        f"- rollout_summaries/b.md (cwd={INFRA}, rollout_path=/r/b.jsonl, "
        "updated_at=2026-12-01T10:00:00Z, thread_id=y)\n"),
    "memory_summary.md": (
        "v1\n\n## User Profile\n- Works in 2 projects [from 2 sessions]\n\n"
        "## User preferences\n- We use pnpm, never npm. [rollout_summaries/a.md]\n"
        "- infra: only plan, never apply. [rollout_summaries/b.md]\n"
        "- Reply in English. [rollout_summaries/a.md; rollout_summaries/b.md]\n\n"
        "## General Tips\n- none yet\n\n## What's in Memory\n"
        f"### {SHOP}\n#### 2026-12-01\n- rollout_summaries/a.md — Fix checkout\n\n"
        "### Older Memory Topics\n- none yet\n"),
    "rollout_summaries/a.md": summary("a", SHOP, "Fix checkout"),
    "rollout_summaries/b.md": summary("b", INFRA, "Plan staging",
                                      "- ran /home/ana/src/infra/bin/plan.sh\n"),
}


def by_title(blocks: list) -> dict:
    return {b.title: b for b in blocks}


def test_each_block_has_the_projects_it_applies_to_and_was_taught_in() -> None:
    blocks = by_title(scope_map(FILES, [SHOP, INFRA]))
    assert blocks["shop"].applies_to == [SHOP] and blocks["shop"].taught_in == [SHOP]
    assert blocks["infra"].applies_to == [INFRA]
    assert blocks["User preferences"].applies_to == [EVERY]
    assert set(blocks["User preferences"].taught_in) == {SHOP, INFRA}
    assert blocks[SHOP].kind == "index_scope" and blocks[SHOP].applies_to == [SHOP]
    assert blocks["Fix checkout"].applies_to == [SHOP]


def test_a_block_naming_another_projects_path_leaks() -> None:
    blocks = by_title(scope_map(FILES, [SHOP, INFRA]))
    assert blocks["shop"].leaks == [
        "names /home/ana/src/infra/bin/deploy.sh, inside infra (/home/ana/src/infra)"]
    assert blocks["infra"].leaks == [] and blocks["Plan staging"].leaks == []  # its own paths


def test_a_line_every_project_gets_but_one_taught_leaks_unless_it_says_whose() -> None:
    leaks = by_title(scope_map(FILES))["User preferences"].leaks
    assert leaks == ["line 7: taught only in shop (/home/ana/src/shop), shown to every "
                     "project"]  # the infra line names infra; the English one has two


def test_memdeck_scope_lists_the_map_and_the_leaks(home, capsys) -> None:
    home.config("[features]\nmemories = true\n")
    root = home.root / "memories"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    assert main(["scope", "--home", str(home.root), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {b["title"] for b in data} >= {"shop", "infra", "User preferences", "Fix checkout"}
    assert main(["scope", "--leaks", "--home", str(home.root)]) == 0
    out = capsys.readouterr().out
    assert "MEMORY.md:1  shop" in out and "LEAKS: names /home/ana/src/infra/bin/deploy.sh" in out
    assert "infra (" not in out.split("LEAKS")[0] and "2 leaking" in out
