"""The offline phase-1 backend keeps the user's durable words and tool evidence, nothing else."""

from __future__ import annotations

from memdeck.engine.backends.offline_phase1 import extract
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.phase1.input_v1 import build_input, kept_items, truncate_middle


def _extract(fixture_path, name: str):
    rollout = read_rollout(fixture_path(name))
    return extract(kept_items(rollout), rollout.meta.cwd, None)


def test_conventions_versions_and_prohibitions_are_kept(fixture_path) -> None:
    r = _extract(fixture_path, "cli-preferences.jsonl")
    assert r.raw_memory.startswith("---\ndescription: ")
    assert "task_group: widget" in r.raw_memory
    assert "MySQL 8.4" in r.raw_memory and "`make check-quick`" in r.raw_memory
    assert "Never refactor the billing module without a ticket" in r.raw_memory
    assert "### Task 1:" in r.raw_memory
    assert r.rollout_summary.startswith("# ")
    assert "## Task 1:" in r.rollout_summary
    assert r.rollout_slug and r.rollout_slug.replace("_", "").isalnum()


def test_assistant_speculation_and_fragments_are_not_memory(fixture_path) -> None:
    r = _extract(fixture_path, "cli-preferences.jsonl")
    text = r.raw_memory + r.rollout_summary
    assert "float math" not in text  # the assistant's guess
    assert "Use ruff. Keep functions small." not in text  # AGENTS.md fragment
    assert "<environment_context>" not in text


def test_tool_evidence_of_a_failure_is_kept(fixture_path) -> None:
    r = _extract(fixture_path, "cli-preferences.jsonl")
    assert "`make check-quick` failed" in r.raw_memory
    # shop/money.py was patched after the failure, but no tool run shows it passing later:
    # neither fixed nor left as it was (was `partial` before issue 9)
    assert "shop/money.py changed afterwards, not re-run" in r.raw_memory
    assert "task_outcome: uncertain" in r.raw_memory


def test_nothing_durable_gives_no_output(fixture_path, tmp_path) -> None:
    r = _extract(fixture_path, "subagent-review.jsonl")  # "Review this patch." / "Looks fine."
    assert (r.raw_memory, r.rollout_summary, r.rollout_slug) == ("", "", None)
    # the user asked not to remember: nothing kept
    r = _extract(fixture_path, "memory-mode-disabled-later.jsonl")
    assert r.raw_memory == ""


def test_phase1_input_filters_like_codex(fixture_path) -> None:
    rollout = read_rollout(fixture_path("cli-preferences.jsonl"))
    inp = build_input(rollout)
    types = [i["type"] for i in inp.items]
    assert "reasoning" not in types and types.count("message") == 5
    assert all(i.get("role") != "developer" for i in inp.items)
    assert "# AGENTS.md instructions" not in inp.text  # stripped fragment
    assert "<environment_context>" in inp.text  # kept
    # secrets are redacted on the way to the model
    assert "sk-SShNKJnE2QT8IhwbAqRmrzLRleXnm8Q9pBfpyBO9" not in inp.text
    assert "AKIAC2C47M57H3SPQMNK" not in inp.text
    assert "[REDACTED_SECRET]" in inp.text
    assert inp.text.startswith('[{"type":"message","role":"user"')


def test_head_and_tail_truncation() -> None:
    text = "é" * 1000 + "MIDDLE" + "ü" * 1000
    out, removed = truncate_middle(text, 100)  # 400 bytes budget
    assert out.startswith("é") and out.endswith("ü") and "MIDDLE" not in out
    assert f"…{removed} tokens truncated…" in out
    assert len(out.encode()) < 480
    assert truncate_middle("short", 100) == ("short", 0)
