"""The held-out quality corpus (tests/fixtures/quality_heldout/), written from the issue and
Codex's formats by someone who had not read the extractor's code, to measure how the offline
memory does on sessions its rules were not tuned on (README "Memory quality").

Its recall is a measurement, printed by `bench/quality.py --corpus tests/fixtures/quality_heldout`
and not asserted here. What is asserted is what must never happen on any session: a forbidden
item kept (personal data, a template's rules or a wrapper as the user's words, a successful
command called a failure), in either memory version.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from memdeck.engine.codex.rollout import read_rollout

REPO = Path(__file__).resolve().parent.parent
HELD_OUT = REPO / "tests" / "fixtures" / "quality_heldout"
_spec = importlib.util.spec_from_file_location("bench_quality_ho", REPO / "bench" / "quality.py")
assert _spec and _spec.loader
quality = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(quality)

GOLD = quality.load_gold(HELD_OUT / "gold.json")
FILES = quality.corpus_files(HELD_OUT)
# the second held-out corpus (issue 25): 17 sessions, written without reading the rules
HELD_OUT_2 = REPO / "tests" / "fixtures" / "quality_heldout2"
GOLD_2 = quality.load_gold(HELD_OUT_2 / "gold.json")
FILES_2 = quality.corpus_files(HELD_OUT_2)
CONSOLIDATION = quality._load_sibling("quality_consolidation")


@pytest.mark.parametrize("path", FILES + FILES_2, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_held_out_file_reads_cleanly(path: Path) -> None:
    rollout = read_rollout(path)
    assert rollout.file_problem is None
    assert rollout.problems == (), [p.message for p in rollout.problems]
    assert rollout.meta is not None and rollout.meta.id


def test_every_held_out_file_has_gold() -> None:
    assert len(FILES) >= 12 and len(FILES_2) >= 15
    assert {p.name for p in FILES} == set(GOLD["sessions"])
    assert {p.name for p in FILES_2} == set(GOLD_2["sessions"])


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_nothing_forbidden_is_kept_from_the_held_out_sessions(version: str) -> None:
    kept = quality.run_corpus(version, HELD_OUT)
    assert not kept.problems, kept.problems
    scores = quality.score(GOLD, kept)
    hits = [f"{sc.file}: FORBIDDEN {i['why']} (in {', '.join(p)})"
            for sc in scores for i, p in sc.forbidden]
    assert hits == []
    # and the run kept memories at all (a backend that keeps nothing has nothing forbidden)
    assert sum(1 for s in kept.sessions.values() if s.has_memory) >= len(FILES) - 1


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_second_held_out_corpus_meets_the_targets(version: str) -> None:
    """Issue 25: recall >= 0.8 and nothing forbidden on sessions the rules were not written
    from; the consolidation's preferences real, every session indexed, tips, budget."""
    kept = quality.run_corpus(version, HELD_OUT_2)
    assert not kept.problems, kept.problems
    scores = quality.score(GOLD_2, kept)
    total = quality.total(quality.by_shape(scores))
    hits = [f"{sc.file}: FORBIDDEN {i['why']} (in {', '.join(p)})"
            for sc in scores for i, p in sc.forbidden]
    assert hits == []
    assert total.recall >= quality.RECALL_TARGET, f"{total.found}/{total.total}"
    c = CONSOLIDATION.score_consolidation(GOLD_2, kept)
    assert c.passes(), (c.false_prefs, c.unindexed, c.over_budget)
