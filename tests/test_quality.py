"""The quality corpus (tests/fixtures/quality/) and its benchmark (bench/quality.py).

(a) every corpus rollout reads cleanly, with the source and originator its gold names;
(b) the gold is consistent: one entry per file, every shape of issue 9's list covered, every
    item well formed and drawn from its session (a `text` item occurs in the rollout), every
    output-format shape a session claims present in its tool outputs;
(c) the offline memory meets the targets on the corpus: recall >= 0.8 per shape and no
    forbidden item kept, for memory v1 and v2.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from memdeck.engine import Engine
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.codex.tool_output import decode_tool_output

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_quality", REPO / "bench" / "quality.py")
assert _spec and _spec.loader
quality = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(quality)

GOLD = quality.load_gold()
FILES = quality.corpus_files()

# Issue 9, requirement 6, and the brief of the corpus: every shape must have a session.
ISSUE_SHAPES = {
    "ide_context", "desktop_files", "user_shell_command", "custom_prompt",
    "json_output_exit0", "json_output_nonzero", "header_output_exit0", "header_output_nonzero",
    "rg_no_match", "pasted_traceback", "pasted_build_log", "pasted_csv", "pasted_personal_data",
    "request_chinese", "request_korean", "request_japanese", "request_vietnamese", "windows_cwd",
    "failure_then_fix",
    # the corpus brief's additions
    "injected_fragments", "agents_md", "environment_context", "user_instructions", "skill",
    "turn_aborted", "exit0_error_text", "freeform_exit_code", "exec_command_end",
    "item_completed", "no_source", "subagent", "nothing_durable",
}


def _gold(path: Path) -> dict[str, Any]:
    entry: dict[str, Any] = GOLD["sessions"][path.name]
    return entry


# -- (a) the corpus reads ------------------------------------------------------------------------

@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_corpus_file_reads_cleanly(path: Path) -> None:
    rollout = read_rollout(path)
    assert rollout.file_problem is None
    assert rollout.problems == (), [p.message for p in rollout.problems]
    assert rollout.pending_bytes == 0  # every line complete
    meta = rollout.meta
    assert meta is not None and meta.id
    g = _gold(path)
    assert meta.source.startswith(g["source"]), (meta.source, g["source"])
    assert meta.originator == g["originator"]
    version = path.stem.rsplit("-", 1)[1]
    assert meta.cli_version is not None and meta.cli_version.startswith(version)


def test_corpus_lists_as_sessions_of_a_home(tmp_path: Path) -> None:
    """The index scanner sees every file as one session, with no bad line and the stored
    source Codex would write (a 0.34 rollout without `source` reads as `vscode`)."""
    home = tmp_path / "codex-home"
    placed = quality.build_home(home, "v1")
    sessions = {s.rollout_path: s for s in Engine.open(home).sessions()}
    assert len(sessions) == len(FILES)
    for name, path in placed.items():
        s = sessions[str(path)]
        assert s.bad_lines == 0, name
        assert s.source is not None and s.source.startswith(GOLD["sessions"][name]["source"])
        assert s.preview, name  # a user request the listing can show


# -- (b) the gold ----------------------------------------------------------------------------------

def test_every_file_has_gold_and_every_gold_a_file() -> None:
    assert {p.name for p in FILES} == set(GOLD["sessions"])
    assert len(FILES) >= 20


def test_the_corpus_readme_lists_every_file() -> None:
    readme = (quality.CORPUS / "README.md").read_text(encoding="utf-8")
    for path in FILES:
        assert f"| {path.name} | {_gold(path)['shape']} |" in readme, path.name


def test_every_shape_of_the_issue_is_covered() -> None:
    assert ISSUE_SHAPES <= set(GOLD["required"])
    covered: set[str] = set()
    for g in GOLD["sessions"].values():
        covered |= {g["shape"], *g["covers"]}
    assert set(GOLD["required"]) <= covered, set(GOLD["required"]) - covered
    primary = {g["shape"] for g in GOLD["sessions"].values()}
    assert primary <= set(GOLD["shapes"]), primary - set(GOLD["shapes"])
    assert primary == set(GOLD["shapes"])  # no described shape without a session


def _items(g: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [("must", i) for i in g["must"]] + [("must_not", i) for i in g["must_not"]]


@pytest.mark.parametrize("name", sorted(GOLD["sessions"]))
def test_gold_items_are_well_formed(name: str) -> None:
    g = GOLD["sessions"][name]
    assert isinstance(g["memory"], bool)
    if g["memory"]:
        assert len(g["must"]) >= 3, "a session worth remembering has facts to remember"
    else:
        assert g["must"] == []  # its one item is "no memory at all"
    assert g["must_not"], "every session has something that must not be kept"
    for kind, item in _items(g):
        assert ("text" in item) != ("re" in item), item
        assert item.get("fact" if kind == "must" else "why"), item
        if "re" in item:
            re.compile(item["re"])
        allowed = {"memory", "title", "slug"} if kind == "must" else \
            {"all", "session", "title", "slug"}
        assert item.get("in", "memory" if kind == "must" else "all") in allowed, item


def _strings(obj: Any) -> list[str]:
    """Every string in a decoded JSON line, JSON-encoded strings (arguments, the old output
    envelope) decoded too."""
    out: list[str] = []
    if isinstance(obj, str):
        out.append(obj)
        if obj.startswith("{"):
            try:
                out += _strings(json.loads(obj))
            except ValueError:
                pass
    elif isinstance(obj, dict):
        for v in obj.values():
            out += _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            out += _strings(v)
    return out


def _rollout_text(path: Path) -> str:
    return "\n".join(s for line in path.read_text(encoding="utf-8").splitlines()
                     for s in _strings(json.loads(line)))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_gold_text_items_come_from_the_session(path: Path) -> None:
    """A literal gold item is something the session says: the gold is written from the
    rollout, not from what an extractor produced."""
    text = _rollout_text(path)
    for _, item in _items(_gold(path)):
        if "text" in item:
            assert quality.matches(item, text), item


def _formats(path: Path) -> set[str]:
    """Output shapes present in a rollout's tool outputs and events."""
    found: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        p = obj["payload"]
        if obj["type"] == "event_msg":
            if p.get("type") == "exec_command_end":
                found.add("exec_command_end")
            if p.get("type") == "item_completed" and isinstance(p.get("item"), dict):
                found.add("item_completed")
            continue
        if obj["type"] != "response_item" or p.get("type") != "function_call_output":
            continue
        raw = p["output"]
        decoded = decode_tool_output(raw)
        if decoded.exit_code is None:
            continue
        ok = "exit0" if decoded.exit_code == 0 else "nonzero"
        if raw.startswith("{"):
            found.add(f"json_output_{ok}")
        elif raw.startswith("Exit code:"):
            found.add("freeform_exit_code")
        else:
            found.add(f"header_output_{ok}")
    return found


FORMAT_SHAPES = {"json_output_exit0", "json_output_nonzero", "header_output_exit0",
                 "header_output_nonzero", "freeform_exit_code", "exec_command_end",
                 "item_completed"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_output_formats_the_gold_claims_are_in_the_file(path: Path) -> None:
    claimed = {c for c in _gold(path)["covers"] if c in FORMAT_SHAPES}
    assert claimed <= _formats(path), claimed - _formats(path)


def test_each_output_format_has_sessions_of_the_right_versions() -> None:
    """JSON outputs come from 0.34–0.58 files, the header from 0.130+, item_completed from
    0.169 (docs/codex-format.md "Tool outputs", "Rollout lines")."""
    for path in FILES:
        version = tuple(int(x) for x in path.stem.rsplit("-", 1)[1].split("."))
        found = _formats(path)
        if {"json_output_exit0", "json_output_nonzero"} & found:
            assert version < (0, 60), path.name
        if {"header_output_exit0", "header_output_nonzero"} & found:
            assert version >= (0, 128), path.name
        if "item_completed" in found:
            assert version >= (0, 169), path.name


# -- (c) the targets -------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["v1", "v2"])
def test_offline_memory_meets_the_quality_targets(version: str) -> None:
    kept = quality.run_corpus(version)
    assert not kept.problems, kept.problems
    scores = quality.score(GOLD, kept)
    rows = quality.by_shape(scores)
    report = [f"{r.shape}: recall {r.found}/{r.total} = {r.recall:.2f}, forbidden {r.forbidden}"
              for r in [*rows, quality.total(rows)]]
    details = []
    for sc in scores:
        details += [f"{sc.file}: missed {i['fact']}" for i in sc.missed]
        details += [f"{sc.file}: FORBIDDEN {i['why']} (in {', '.join(p)})"
                    for i, p in sc.forbidden]
    low = [r.shape for r in rows if r.recall < quality.RECALL_TARGET]
    forbidden = quality.total(rows).forbidden
    assert not low and forbidden == 0, "\n".join(report + [""] + details)


CONSOLIDATION = quality._load_sibling("quality_consolidation")


@pytest.mark.parametrize("corpus", ["quality", "quality_heldout"])
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_consolidated_memory_meets_the_consolidation_targets(version: str,
                                                                 corpus: str) -> None:
    """Issue 25: real preferences / all >= 0.9, every remembered session indexed, tips
    present (the gold's among them), every file within what Codex injects."""
    folder = REPO / "tests" / "fixtures" / corpus
    kept = quality.run_corpus(version, folder)
    c = CONSOLIDATION.score_consolidation(quality.load_gold(folder / "gold.json"), kept)
    assert c.prefs_real >= CONSOLIDATION.PREFS_TARGET, c.false_prefs
    assert c.remembered >= 10 and c.unindexed == []
    assert c.passes()
    assert c.tips and c.tips_missed == [] and c.repeated_missed == []
    assert c.over_budget == []
    assert c.profile  # the corpus has sessions enough for a profile


def test_a_false_preference_fails_the_consolidation_score() -> None:
    """The score can fail: a question kept as a preference is counted against it."""
    kept = quality.run_corpus("v2")
    summary = kept.files["memory_summary.md"]
    kept.files["memory_summary.md"] = summary.replace(
        "## User preferences\n", "## User preferences\n- can you always make it faster?\n"
        "- Should we use uv?\n- The export must stream rows.\n" * 4)
    c = CONSOLIDATION.score_consolidation(GOLD, kept)
    assert len(c.false_prefs) == 12 and c.prefs_real < CONSOLIDATION.PREFS_TARGET
    assert not c.passes()
