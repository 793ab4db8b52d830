"""The offline consolidation merge: Codex's MEMORY.md format, edits kept, forgetting."""

from __future__ import annotations

import re

from memdeck.engine.backends.offline_phase2 import merge_memory, merge_summary, parse_memory
from memdeck.engine.codex.memory_layout import SelectedMemory

BASE = """\
# Task Group: shop (web shop)
scope: the shop repository
applies_to: cwd=/src/shop; reuse_rule=any task here

## Task 1: fix rounding, success
### rollout_summary_files
- rollout_summaries/2026-11-01T00-00-00-aaaa-rounding.md (cwd=/src/shop, thread_id=a)
### keywords
- Decimal

## Task 2: old flaky test, partial
### rollout_summary_files
- rollout_summaries/2026-11-02T00-00-00-bbbb-flaky.md (cwd=/src/shop, thread_id=b)
### keywords
- flaky

## User preferences
- Run `make check-quick` [Task 1]
- Retry flaky tests once [Task 2]
- Written by hand: keep PRs small

## Reusable knowledge
- Decimal for money [Task 1]; see also [Task 2]

## Failures and how to do differently
- None recorded
"""


def mem(tid: str, cwd: str, slug: str, raw: str) -> SelectedMemory:
    return SelectedMemory(tid, 1_764_000_000, raw, "summary", slug, f"/r/{tid}.jsonl", cwd,
                          "main")


RAW = """---
description: add refunds
task_outcome: success
keywords: refunds, RefundService
---

### Task 1: add refunds
- user preference: Refunds go through RefundService
- fact: the payments sandbox needs X-Test
- failure: `pytest` failed; passed on a later run
"""
PRESENT = {"2026-11-01T00-00-00-aaaa-rounding", "2026-11-02T00-00-00-bbbb-flaky"}


def test_new_memory_joins_its_project_group_and_edits_are_kept() -> None:
    m = mem("0194f5a6-89ab-7cde-8123-456789abcdef", "/src/shop", "refunds", RAW)
    out = merge_memory(BASE, [m], PRESENT | {m.file_stem})
    _, groups = parse_memory(out)
    assert len(groups) == 1 and len(groups[0].tasks) == 3
    assert groups[0].tasks[2].lines[0] == "## Task 3: add refunds, success"
    assert f"rollout_summaries/{m.file_stem}.md" in out
    assert "- Written by hand: keep PRs small" in out  # a hand edit survives
    assert "- Refunds go through RefundService [Task 3]" in out
    assert "- the payments sandbox needs X-Test [Task 3]" in out
    assert "None recorded" not in out  # the placeholder gave way to a real failure
    assert merge_memory(out, [m], PRESENT | {m.file_stem}) == out  # idempotent


def test_a_new_project_gets_its_own_group() -> None:
    m = mem("0194f5a6-89ab-7cde-8123-456789abcdee", "/src/infra", "deploy", RAW)
    out = merge_memory(BASE, [m], PRESENT | {m.file_stem})
    assert "# Task Group: infra" in out and "applies_to: cwd=/src/infra;" in out


def test_deleted_summaries_are_forgotten_and_tasks_renumbered() -> None:
    out = merge_memory(BASE, [], {"2026-11-02T00-00-00-bbbb-flaky"})  # rounding's gone
    _, [group] = parse_memory(out)
    assert [t.lines[0] for t in group.tasks] == ["## Task 1: old flaky test, partial"]
    assert "Run `make check-quick`" not in out  # cited only the forgotten task
    assert "- Retry flaky tests once [Task 1]" in out  # renumbered
    assert "- Written by hand: keep PRs small" in out
    assert re.search(r"Decimal for money ; see also \[Task 1\]", out)


def test_summary_keeps_its_sections_and_indexes_memory() -> None:
    summary = ("v1\n\n## User Profile\n- Edited by hand\n\n## User preferences\n- tabs\n\n"
               "## General Tips\n\n## What's in Memory\n- stale\n")
    out = merge_summary(summary, BASE, 1_764_000_000)
    assert out.splitlines()[0] == "v1"
    assert "- Edited by hand" in out and "- tabs" in out and "- stale" not in out
    for head in ("## User Profile", "## User preferences", "## General Tips",
                 "## What's in Memory", "### Older Memory Topics"):
        assert head in out
    assert "### /src/shop" in out and "- fix rounding, success: Decimal" in out
