#!/usr/bin/env python3
"""Benchmark the Memory pane's gutter and a trace (issue 11: <= 200 ms and <= 300 ms).

Builds a v1 home whose 5,000-line MEMORY.md went through 3 versions in memdeck's history
(lines inserted, rewritten and deleted between them) and 2,000 citation events spread over
those versions in 40 rollouts, then times `Engine.line_usage("MEMORY.md")` (the gutter:
every citation mapped through the history's diffs) and `Engine.trace` of a cited line.
Median of 5 runs each, after one warm-up run (the first reads the rollouts; later runs read
only what changed).

    .venv/bin/python bench/trace.py [--lines 5000] [--events 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO)]

from memdeck.engine import Engine  # noqa: E402

DAY = 86400
T0 = 1_793_000_000  # 2026-10-27, the first version
ADA = "01a1f000-0000-7000-8000-00000000a0a0"


def memory_md(lines: int, version: int) -> str:
    """A MEMORY.md of task blocks; each version inserts, rewrites and drops some lines."""
    out: list[str] = []
    block = 0
    while len(out) < lines:
        out += [f"# Task Group: 项目 {block} (checkout)", "scope: the shop repository",
                "applies_to: cwd=C:\\Users\\dev\\shop; reuse_rule=any task", "",
                f"## Task 1: fix 结账 {block}, success", "### rollout_summary_files",
                f"- rollout_summaries/2026-10-30T09-00-00-Ab3x-t{block}.md (thread_id={ADA})",
                "### keywords"]
        for k in range(12):
            if version >= 2 and k == 3:
                continue  # deleted in version 2
            text = f"- fact {block}.{k}: run `make check-{k}` 运行测试"
            if version >= 3 and k == 5:
                text += " (reworded)"
            out.append(text)
        if version >= 2 and block % 7 == 0:
            out.append(f"- added in version {version} for block {block}")
        out.append("")
        block += 1
    return "\n".join(out[:lines]) + "\n"


def rollout(tid: str, events: list[tuple[float, int, int]]) -> str:
    def ts(t: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))

    first = ts(events[0][0])
    rows = [{"timestamp": first, "type": "session_meta", "payload": {
        "id": tid, "session_id": tid, "timestamp": first, "cwd": "/home/dev/shop",
        "source": "cli", "originator": "codex_cli_rs", "cli_version": "0.169.0"}}]
    for t, a, b in events:
        text = (f"Use `make check`.\n\n<oai-mem-citation>\n<citation_entries>\n"
                f"MEMORY.md:{a}-{b}|note=[bench]\n</citation_entries>\n<rollout_ids>\n{ADA}\n"
                "</rollout_ids>\n</oai-mem-citation>")
        rows.append({"timestamp": ts(t), "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "how do I test?"}]}})
        rows.append({"timestamp": ts(t), "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "phase": "final_answer",
            "content": [{"type": "output_text", "text": text}]}})
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"


def build_home(home: Path, lines: int, n_events: int) -> None:
    (home / "memories").mkdir(parents=True)
    (home / "config.toml").write_text("[features]\nmemories = true\n", encoding="utf-8")
    engine = Engine.open(home)
    for version in (1, 2, 3):
        (home / "memories" / "MEMORY.md").write_text(memory_md(lines, version), encoding="utf-8")
        when = f"@{T0 + (version - 1) * 10 * DAY} +0000"
        os.environ["GIT_COMMITTER_DATE"] = os.environ["GIT_AUTHOR_DATE"] = when
        engine.record_outside_edits()
    del os.environ["GIT_COMMITTER_DATE"], os.environ["GIT_AUTHOR_DATE"]
    day = home / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    per = n_events // 40
    for r in range(40):
        tid = f"01a20000-{r:04d}-7000-8000-{r:012d}"
        evs = []
        for k in range(per):
            i = r * per + k
            t = T0 + (i * 30 * DAY) / n_events + 60  # over the three versions
            a = 1 + (i * 37) % (lines - 5)
            evs.append((t, a, a + i % 4))
        (day / f"rollout-2026-11-20T10-00-{r:02d}-{tid}.jsonl").write_text(
            rollout(tid, evs), encoding="utf-8")


def median_ms(fn: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "codex-home"
        build_home(home, args.lines, args.events)
        versions = subprocess.run(["git", f"--git-dir={home / 'memdeck' / 'history.git'}",
                                   "rev-list", "--count", "HEAD"], capture_output=True,
                                  text=True).stdout.strip()
        engine = Engine.open(home)
        t = time.perf_counter()
        usage = engine.line_usage("MEMORY.md")
        cold = (time.perf_counter() - t) * 1000
        gutter = median_ms(lambda: engine.line_usage("MEMORY.md"), args.runs)
        rows = [("gutter, first call (reads the rollouts)", cold, None),
                (f"gutter (median of {args.runs})", gutter, 200.0)]
        line = next(s.line for s in usage.lines if s.count)
        rows.append((f"trace MEMORY.md:{line} (median of {args.runs})",
                     median_ms(lambda: engine.trace("MEMORY.md", line), args.runs), 300.0))
        print(f"MEMORY.md: {len(usage.lines):,} lines, {versions} history versions; "
              f"{usage.events:,} citation events, {len(usage.removed)} removed ranges")
        print(f"{'what':46} {'ms':>8} {'target':>8}")
        for what, ms, target in rows:
            goal = f"<= {target:.0f}" if target else ""
            flag = "" if target is None or ms <= target else "  OVER"
            print(f"{what:46} {ms:8.1f} {goal:>8}{flag}")
        print(json.dumps({"RESULT": {"gutter_ms": round(gutter, 1), "cold_ms": round(cold, 1),
                                     "events": usage.events}}))


if __name__ == "__main__":
    main()
