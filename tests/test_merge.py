"""The offline consolidation merge: Codex's MEMORY.md format, edits kept, forgetting, ad-hoc
notes folded (issue 9), nothing empty left behind."""

from __future__ import annotations

import re

import pytest

from memdeck.engine.backends.offline_notes import Folding, forget_matches
from memdeck.engine.backends.offline_phase2 import merge_memory, merge_summary, parse_memory
from memdeck.engine.codex.memory_layout import SelectedMemory
from memdeck.engine.phase2.notes import Note, parse_note

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
    assert "- Edited by hand" in out and "- tabs" in out
    # a line someone wrote in the index stays where it was (issue 9: nothing deleted unasked)
    assert "## What's in Memory\n- stale\n" in out
    for head in ("## User Profile", "## User preferences", "## General Tips",
                 "## What's in Memory", "### Older Memory Topics"):
        assert head in out
    assert "### /src/shop" in out and "- fix rounding, success: Decimal" in out


# -- issue 9: notes folded, outside lines kept, nothing empty left ---------------------------
NOTE_DIR = "extensions/ad_hoc/notes/"


def note(kind: str, text: str, name: str = "2026-12-03T09-00-00-n.md") -> Note:
    return Note(NOTE_DIR + name, kind, text)


@pytest.mark.parametrize(("what", "line", "hit"), [
    # (a) the note's words, in order, anywhere in the line: case, Markdown marks, tags aside
    ("never on Fridays", "- Deploy only through `make deploy`; never on Fridays [Task 1]", True),
    ("`make deploy`", "- Deploy only through make deploy [Task 1]", True),
    # (b) every word of the note in the line: abbreviations and longer forms count
    ("staging db password", "- The staging database password lives in 1Password [Task 2]",
     True),
    ("deploy friday", "- Deploys are frozen on Fridays", True),
    ("暂存数据库", "- 暂存数据库在 db-2 上", True),
    # near misses are never removed
    ("staging db password", "- The shop's staging database is `shop_staging` on db-2", False),
    ("staging db password", "- The staging cluster is called red-kite [Task 1]", False),
    ("deploy", "- We redeploy nightly", False),  # part of a longer word
    ("the", "- the shop uses MySQL 8.4", False),  # no word that counts
    ("never on Fridays", "## User preferences", False),  # only bullets
    ("none recorded", "- None recorded", False),  # nor Codex's placeholders
    ("never on fridays", "  learnings: never deploy on Fridays", False),
])
def test_which_line_a_forget_note_removes(what: str, line: str, hit: bool) -> None:
    assert forget_matches(what, line) is hit


def test_a_note_file_is_read_as_its_requests() -> None:
    path = NOTE_DIR + "2026-12-03T09-00-00-x.md"
    assert parse_note(path, "Remember: the staging DB moved to db-3\n") == [
        Note(path, "remember", "the staging DB moved to db-3")]
    assert [(n.kind, n.text) for n in parse_note(path, (
        "# From the meeting\nForget that the printer is in room 4\nremove: old VPN host\n"
        "- Remember: builds use\n  `make ci`\n\n"))] == [
        ("forget", "the printer is in room 4"), ("forget", "old VPN host"),
        ("remember", "builds use `make ci`")]
    assert parse_note(path, "Use tabs in the Makefile.") == [
        Note(path, "remember", "Use tabs in the Makefile.")]  # Codex's free text
    assert parse_note(path, "Forget:\n\n") == []
    assert Note(path, "forget", "staging db password").label == \
        "2026-12-03 'forget: staging db password'"


def test_a_remember_note_goes_to_the_group_it_fits_once() -> None:
    notes = Folding([note("remember", "Always run the shop tests with --reuse-db"),
                     note("remember", "The office wifi is called Lighthouse")])
    out = merge_memory(BASE, [], PRESENT, notes)
    _, groups = parse_memory(out)
    shop = next(g for g in groups if g.title.startswith("shop"))
    assert "- Always run the shop tests with --reuse-db [ad-hoc note]" in \
        shop.blocks["## User preferences"]  # a preference, in the group that shares words
    adhoc = next(g for g in groups if g.title == "ad-hoc notes")  # fits no project
    assert adhoc.head[2].startswith("applies_to: cwd=")
    assert [x for x in adhoc.blocks["## Reusable knowledge"] if x] == [
        "- The office wifi is called Lighthouse [ad-hoc note]"]
    assert [e.added for e in notes.effects()] == [
        (("MEMORY.md", "- Always run the shop tests with --reuse-db [ad-hoc note]"),),
        (("MEMORY.md", "- The office wifi is called Lighthouse [ad-hoc note]"),)]
    again = Folding(notes.notes)  # the same notes once more (no baseline to mark them read)
    assert merge_memory(out, [], PRESENT, again) == out
    assert all(not e.added and e.outcome == "already in memory" for e in again.effects())


def test_a_forget_note_removes_what_it_matches_and_nothing_else() -> None:
    text = BASE.replace("- Decimal for money", "- The staging database password lives in "
                                               "1Password\n- Decimal for money")
    notes = Folding([note("forget", "staging db password"), note("forget", "fix rounding"),
                     note("forget", "printer in room 4")])
    out = merge_memory(text, [], PRESENT, notes)
    assert "1Password" not in out
    gone = set(text.splitlines()) - set(out.splitlines())
    assert gone == {"- The staging database password lives in 1Password"}
    assert "## Task 1: fix rounding, success" in out  # headings are not the notes' business
    removed, title, nothing = notes.effects()
    assert removed.removed == (("MEMORY.md",
                                "- The staging database password lives in 1Password"),)
    assert not title.removed and "matched no line" in nothing.outcome


def test_notes_apply_in_their_order() -> None:
    fact = "the build cache lives on nas-2"
    later_forget = Folding([note("remember", fact, "2026-12-01T00-00-00-a.md"),
                            note("forget", "build cache", "2026-12-02T00-00-00-b.md")])
    out = merge_memory(BASE, [], PRESENT, later_forget)
    assert "nas-2" not in out
    assert later_forget.effects()[0].outcome == "withdrawn by a later forget note"
    with_fact = BASE.replace("- Decimal for money", "- The build cache lives on nas-1\n"
                                                    "- Decimal for money")
    later_remember = Folding([note("forget", "build cache", "2026-12-01T00-00-00-a.md"),
                              note("remember", fact, "2026-12-02T00-00-00-b.md")])
    out = merge_memory(with_fact, [], PRESENT, later_remember)
    assert "nas-1" not in out and f"- {fact} [ad-hoc note]" in out


def test_a_group_left_with_nothing_is_removed() -> None:
    infra = ("# Task Group: infra (deployments)\nscope: deploys\napplies_to: cwd=/src/infra; "
             "reuse_rule=deploys\n\n## Task 1: deploy, success\n### rollout_summary_files\n"
             "- rollout_summaries/2026-11-03T00-00-00-cccc-deploy.md (cwd=/src/infra)\n"
             "### keywords\n- make deploy\n\n## User preferences\n- Use make deploy [Task 1]\n\n"
             "## Reusable knowledge\n- None recorded\n\n## Failures and how to do differently\n"
             "- None recorded\n")
    out = merge_memory(BASE + "\n" + infra, [], PRESENT)  # the deploy summary is gone
    assert "# Task Group: infra" not in out and "make deploy" not in out
    assert out.count("# Task Group:") == 1
    kept = infra.replace("- None recorded\n\n## Failures", "- Staging is red-kite\n\n"
                                                         "## Failures")
    out = merge_memory(BASE + "\n" + kept, [], PRESENT)  # a line of its own: it stays
    assert "# Task Group: infra" in out and "- Staging is red-kite" in out
    assert "## Task" not in out.split("# Task Group: infra")[1]
    notes = Folding([note("forget", "staging is red-kite")])  # and goes with that line
    assert "# Task Group: infra" not in merge_memory(BASE + "\n" + kept, [], PRESENT, notes)


SUMMARY = """v1
A line someone put before the sections.

## User Profile
- Edited by hand

## User preferences
- Deploys never on Fridays.

## General Tips
- none yet

## Team notes
- the on-call rota is in the wiki

## What's in Memory
- see also the shop wiki
### /src/shop
#### 2026-11-02
- flaky tests: flaky
  desc: the test that fails one run in ten
- rounding: Decimal
- written by hand about the shop
#### 2026-11-01
- old rounding notes: Decimal

### Older Memory Topics
- none yet
"""


def test_summary_keeps_outside_lines_and_drops_only_what_was_forgotten() -> None:
    memory = merge_memory(BASE, [], {"2026-11-02T00-00-00-bbbb-flaky"})  # rounding forgotten
    out = merge_summary(SUMMARY, memory, 1_764_000_000, previous_memory=BASE)
    for line in ("A line someone put before the sections.", "- Edited by hand",
                 "- Deploys never on Fridays.", "## Team notes",
                 "- the on-call rota is in the wiki", "- see also the shop wiki",
                 "- flaky tests: flaky", "  desc: the test that fails one run in ten",
                 "- written by hand about the shop"):
        assert line in out.splitlines(), line
    assert "- rounding: Decimal" not in out  # the forgotten task's entries
    assert "#### 2026-11-01" not in out  # and the day left empty by it
    assert out.count("- fix rounding") == 0 and out.count("- old flaky test") == 0
    assert out.index("## Team notes") < out.index("## What's in Memory")
    assert merge_summary(out, memory, 1_764_000_000, previous_memory=memory) == out

    nothing = merge_memory(BASE, [], set())  # both tasks gone: their entries go
    out = merge_summary(SUMMARY, nothing, 1_764_000_000, previous_memory=BASE)
    index = out.split("## What's in Memory\n", 1)[1]
    assert index == ("- see also the shop wiki\n### /src/shop\n#### 2026-11-02\n"
                     "- written by hand about the shop\n\n### Older Memory Topics\n"
                     "- none yet\n")  # the person's line keeps its scope and day; no other
    memory_gone = BASE.replace("- Written by hand: keep PRs small\n", "")
    out = merge_summary(SUMMARY.replace("- written by hand about the shop\n", ""),
                        merge_memory(memory_gone, [], set()), 1_764_000_000, memory_gone)
    assert "### /src/shop" not in out and "####" not in out  # nothing left under it
    assert "# Task Group" not in merge_memory(memory_gone, [], set())


def test_summary_indexes_a_new_task_under_its_day_and_folds_notes() -> None:
    m = mem("0194f5a6-89ab-7cde-8123-456789abcdef", "/src/infra", "refunds", RAW)
    memory = merge_memory(BASE, [m], PRESENT | {m.file_stem})
    notes = Folding([note("remember", "Always squash before merging"),
                     note("remember", "CI runners have 8 GB of memory"),
                     note("forget", "never on fridays")])
    out = merge_summary(SUMMARY, memory, 1_764_000_000, BASE, notes)
    index = out.split("## What's in Memory\n", 1)[1]
    assert "### /src/infra\n#### 2025-11-24\n- add refunds, success: refunds, RefundService\n" \
        in index
    assert index.index("### /src/infra") < index.index("### Older Memory Topics")
    prefs = out.split("## User preferences\n", 1)[1].split("\n\n", 1)[0]
    tips = out.split("## General Tips\n", 1)[1].split("\n\n", 1)[0]
    assert prefs == "- Always squash before merging [ad-hoc note]"  # Fridays forgotten
    assert tips == "- CI runners have 8 GB of memory [ad-hoc note]"  # the placeholder gone
    effects = notes.effects()
    assert effects[2].removed == (("memory_summary.md", "- Deploys never on Fridays."),)


def _many_tasks(n: int) -> str:
    """A MEMORY.md of one project with `n` tasks, one a day from 2026-01-01."""
    from datetime import date, timedelta

    out = ["# Task Group: shop (web shop)", "scope: the shop repository",
           "applies_to: cwd=/src/shop; reuse_rule=any task here", ""]
    for k in range(n):
        day = (date(2026, 1, 1) + timedelta(days=k)).isoformat()
        out += [f"## Task {k + 1}: fix checkout bug number {k + 1} in the cart service, success",
                "### rollout_summary_files",
                f"- rollout_summaries/{day}T00-00-00-{k:04x}-cart{k}.md "
                f"(cwd=/src/shop, thread_id=t{k}, updated_at={day}T09:00:00Z)",
                "### keywords", f"- cart{k}, svc{k}, fix{k}", ""]
    return "\n".join(out) + "\n## User preferences\n- Written by hand: keep PRs small\n"


def test_the_v1_summary_stays_within_what_codex_injects_cutting_the_oldest_days() -> None:
    from memdeck.engine.backends.offline_summary import INJECTED_BYTES

    summary = ("v1\n\n## User Profile\n- Edited by hand\n\n## User preferences\n- tabs\n\n"
               "## General Tips\n\n## What's in Memory\n")
    out = merge_summary(summary, _many_tasks(300), 1_790_000_000)
    assert len(out.encode()) <= INJECTED_BYTES, len(out.encode())
    assert "- Edited by hand" in out and "- tabs" in out  # the user's lines come first
    assert "fix checkout bug number 300 in" in out  # the newest tasks are indexed
    assert "fix checkout bug number 1 in" not in out  # the oldest days left out, whole
    [told] = [ln for ln in out.splitlines() if "older tasks are in MEMORY.md only" in ln]
    kept = sum(1 for ln in out.splitlines() if ln.startswith("- fix checkout bug number"))
    assert told.startswith(f"- {300 - kept} older tasks"), (told, kept)
    # merging again changes nothing (the cut is the same, the count not added twice)
    assert merge_summary(out, _many_tasks(300), 1_790_000_000) == out
    # a small memory is not cut
    small = merge_summary(summary, _many_tasks(5), 1_790_000_000)
    assert "older tasks are in MEMORY.md only" not in small and small.count("- fix checkout") == 5


def _cut_one_day_at_a_time(blocks, budget):
    """The index's cut as first written (one cut, one render: quadratic), the reference the
    halving search must agree with."""
    from memdeck.engine.backends.offline_summary import (
        OLDER,
        _entries,
        _render_index_v1,
        _size,
    )

    lines_out, dropped = _render_index_v1(blocks), 0
    while _size(lines_out) > budget:
        oldest = min(((h, b) for b in blocks if b.head not in (None, OLDER) for h, _ in b.days),
                     key=lambda hb: hb[0], default=None)
        if oldest is None:
            break
        head, block = oldest
        days = sum(len(b.days) for b in blocks if b.head not in (None, OLDER))
        for k, (h, xs) in enumerate(block.days):
            if h == head:
                entries = _entries(xs)
                rest = entries[1:] if days == 1 else []
                dropped += len(entries) - len(rest)
                block.days[k] = (h, [x for e in rest for x in e])
                if not rest:
                    del block.days[k]
                break
        lines_out = _render_index_v1(blocks, dropped)
    return lines_out


@pytest.mark.parametrize("seed", range(40))
def test_the_index_cut_is_the_fewest_oldest_days_as_one_at_a_time_found(seed: int) -> None:
    """Thousands of scopes made the one-cut-per-render loop take minutes (a 5 MB MEMORY.md:
    47 s); the halving search must leave out exactly what it did, ties and the last day's
    entries included."""
    import copy
    import random

    from memdeck.engine.backends.offline_summary import OLDER, _Block, _within_budget

    rnd = random.Random(seed)
    blocks = [_Block(None, ["Intro written by hand"])]
    for s in range(rnd.randint(1, 12)):
        days = sorted({f"#### 2026-{rnd.randint(1, 3):02d}-{rnd.randint(1, 28):02d}"
                       for _ in range(rnd.randint(1, 4))}, reverse=True)
        blocks.append(_Block(f"### scope {s}", [], [
            (d, [x for k in range(rnd.randint(1, 5))
                 for x in (f"- task {s}.{d[-5:]}.{k}: " + "word " * rnd.randint(1, 12),
                           *(["  more under it"] if rnd.random() < 0.2 else []))])
            for d in days]))
    blocks.append(_Block(OLDER, ["- an older line"]))
    budget = rnd.randint(40, 2000)
    assert _within_budget(copy.deepcopy(blocks), budget) == \
        _cut_one_day_at_a_time(copy.deepcopy(blocks), budget)
