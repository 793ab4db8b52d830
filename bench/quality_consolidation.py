"""The consolidation score of bench/quality.py (issue 25): the memory files read as the next
agent reads them, after extract → consolidate → accept on a corpus.

  * preferences: every bullet under `## User preferences` (memory_summary.md, and in v1 each
    MEMORY.md block's) is real when it matches one of the gold `preferences` items of any
    session of the corpus (the standing rules the users stated); real / all >= 0.9;
  * indexed: every session that left a rollout summary is named in memory_summary.md (v2) or
    MEMORY.md (v1);
  * tips: `## General Tips` has lines; how many of the gold `consolidation.tips` items are
    found there (or in MEMORY.md's Reusable knowledge, v1) is reported;
  * repeated: how many gold `consolidation.repeated` facts are one line citing every session
    that said them is reported;
  * budget: what Codex injects of memory_summary.md is not cut (memdeck's own preview, the
    2,500-token cap), the v2 summary is under 10,000 bytes, and every v2 rollout summary
    within Codex's 9,000 bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

PREFS_TARGET = 0.9
V2_SUMMARY_CAP = 9_000
V2_FILE_LIMIT = 10_000
NONE = re.compile(r"^-\s*none (yet|recorded)\s*$", re.I)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def matches(item: dict[str, Any], text: str) -> bool:
    if "re" in item:
        return re.search(item["re"], text, re.M) is not None
    return _norm(item["text"]) in _norm(text)


def section(text: str, heading: str) -> list[str]:
    """The `- ` bullets under every `heading` line of `text`, to the next heading."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("#"):
            inside = line.strip() == heading
        elif inside and line.startswith("- ") and not NONE.match(line.strip()):
            out.append(line)
    return out


@dataclass
class Consolidation:
    version: str
    prefs: list[str] = field(default_factory=list)
    false_prefs: list[str] = field(default_factory=list)
    gold_prefs: int = 0
    gold_prefs_kept: int = 0
    remembered: int = 0
    unindexed: list[str] = field(default_factory=list)
    tips: list[str] = field(default_factory=list)
    tips_missed: list[str] = field(default_factory=list)
    profile: list[str] = field(default_factory=list)
    repeated_missed: list[str] = field(default_factory=list)
    over_budget: list[str] = field(default_factory=list)

    @property
    def prefs_real(self) -> float:
        return 1.0 - len(self.false_prefs) / len(self.prefs) if self.prefs else 1.0

    tips_gold: int = 0
    repeated_gold: int = 0

    def passes(self) -> bool:
        """The issue's targets; the gold tips found and the repeats folded are figures."""
        return (self.prefs_real >= PREFS_TARGET and not self.unindexed and bool(self.tips)
                and not self.over_budget)


def score_consolidation(gold: dict[str, Any], kept: Any) -> Consolidation:
    """`kept`: bench/quality.py's `Kept` (sessions, files, injected_truncated)."""
    files: dict[str, str] = kept.files
    summary = files.get("memory_summary.md", "")
    memory_md = files.get("MEMORY.md", "")
    c = Consolidation(kept.version)
    c.prefs = section(summary, "## User preferences") + section(memory_md, "## User preferences")
    gold_prefs = [p for g in gold["sessions"].values() for p in g.get("preferences", [])]
    c.false_prefs = [b for b in c.prefs if not any(matches(p, b) for p in gold_prefs)]
    c.gold_prefs = len(gold_prefs)
    c.gold_prefs_kept = sum(any(matches(p, b) for b in c.prefs) for p in gold_prefs)
    index_text = summary if kept.version == "v2" else memory_md
    for s in kept.sessions.values():
        if s.summary_file:
            c.remembered += 1
            if s.summary_file not in index_text:
                c.unindexed.append(s.file)
    c.tips = section(summary, "## General Tips")
    knowledge = c.tips + section(memory_md, "## Reusable knowledge")
    cons = gold.get("consolidation", {})
    c.tips_gold = len(cons.get("tips", []))
    c.repeated_gold = len(cons.get("repeated", []))
    c.tips_missed = [t["fact"] for t in cons.get("tips", [])
                     if not any(matches(t, x) for x in knowledge)]
    c.profile = section(summary, "## User Profile")
    for rep in cons.get("repeated", []):
        refs = [kept.sessions[n].summary_file for n in rep["sessions"]
                if n in kept.sessions and kept.sessions[n].summary_file]
        lines = [x for x in c.prefs + knowledge if matches(rep, x)]
        if not any(all(r in x for r in refs) for x in lines) or len(refs) < 2:
            c.repeated_missed.append(rep["fact"])
    if kept.injected_truncated:
        c.over_budget.append(f"memory_summary.md: Codex would cut {kept.injected_truncated} "
                             "tokens from its middle")
    if kept.version == "v2":
        if len(summary.encode("utf-8")) >= V2_FILE_LIMIT:
            c.over_budget.append(f"memory_summary.md: {len(summary.encode()):,} bytes")
        for rel, text in files.items():
            if rel.startswith("rollout_summaries/") and len(text.encode()) > V2_SUMMARY_CAP:
                c.over_budget.append(f"{rel}: {len(text.encode()):,} bytes")
    return c


def print_consolidation(c: Consolidation, prefix: str, verbose: bool) -> None:
    print(f"  consolidation ({c.version}): preferences {len(c.prefs) - len(c.false_prefs)}/"
          f"{len(c.prefs)} real ({c.prefs_real:.2f}; {c.gold_prefs_kept}/{c.gold_prefs} of the "
          f"gold rules kept), indexed {c.remembered - len(c.unindexed)}/{c.remembered}, "
          f"tips {len(c.tips)} ({c.tips_gold - len(c.tips_missed)}/{c.tips_gold} of the gold), "
          f"repeats folded {c.repeated_gold - len(c.repeated_missed)}/{c.repeated_gold}, "
          f"profile {len(c.profile)}, over budget {len(c.over_budget)}")
    for what, items in (("not a preference", c.false_prefs), ("not indexed", c.unindexed),
                        ("tip missed", c.tips_missed), ("not folded", c.repeated_missed),
                        ("over budget", c.over_budget)):
        for x in items if verbose or what == "over budget" else items[:3]:
            print(f"    {what}: {x[:160]}")
    verdict = "PASS" if c.passes() else "FAIL"
    print(f"  target: real preferences >= {PREFS_TARGET}, every session indexed, tips present,"
          f" every file within Codex's budget: {verdict}")
    print(f"RESULT {prefix}.consolidation.prefs_real={c.prefs_real:.4f}")
    print(f"RESULT {prefix}.consolidation.indexed={c.remembered - len(c.unindexed)}/"
          f"{c.remembered}")
    print(f"RESULT {prefix}.consolidation.tips={len(c.tips)}")
    print(f"RESULT {prefix}.consolidation.gold_tips={c.tips_gold - len(c.tips_missed)}/"
          f"{c.tips_gold}")
    print(f"RESULT {prefix}.consolidation.folded={c.repeated_gold - len(c.repeated_missed)}/"
          f"{c.repeated_gold}")
    print(f"RESULT {prefix}.consolidation.over_budget={len(c.over_budget)}")
    print(f"RESULT {prefix}.consolidation.pass={int(c.passes())}")
