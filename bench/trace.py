#!/usr/bin/env python3
"""Benchmark the Memory pane's gutter and a trace (issue 11: <= 200 ms and <= 300 ms).

Builds a v1 home whose 5,000-line MEMORY.md went through 3 versions in memdeck's history
(lines inserted, rewritten and deleted between them) and 2,000 citation events spread over
those versions in 40 rollouts, the session every task block names (a rollout of ~60 KB, its
stage-1 row, its rollout summary files), then times `Engine.line_usage("MEMORY.md")` (the
gutter: every citation mapped through the history's diffs) and `Engine.trace` of a cited line
(block, summary, stage-1 row, the session's transcript matched for the turn, git blame).
Median of 5 runs each, after one first call (it reads the rollouts; later calls read only
what changed).

Then the same memory folder on a realistically large home: the 10,000 rollouts of
bench/index.py's synthetic home (built there on first use, ~1 GB, and reused after; linked
into a scratch home, not changed), the named session one of them. It times the trace as the
app asks for it (the index read as it is) and as `memdeck trace` does (the index caught up
with the disk first), the real `memdeck trace` command, and the gutter there.

    .venv/bin/python bench/trace.py [--lines 5000] [--events 2000] [--runs 5]
                                    [--big-sessions 10000 | --no-big] [--big-dir D]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "bench")]

import index as synthetic  # noqa: E402  bench/index.py: the 10,000-session home

from memdeck.engine import Engine  # noqa: E402
from memdeck.engine.clock import FixedClock  # noqa: E402
from memdeck.engine.codex.schema import create_memories_db  # noqa: E402

DAY = 86400
T0 = 1_793_000_000  # 2026-10-27, the first version
ADA = "01a1f000-0000-7000-8000-00000000a0a0"


def memory_md(lines: int, version: int, thread: str = ADA) -> str:
    """A MEMORY.md of task blocks; each version inserts, rewrites and drops some lines."""
    out: list[str] = []
    block = 0
    while len(out) < lines:
        out += [f"# Task Group: 项目 {block} (checkout)", "scope: the shop repository",
                "applies_to: cwd=C:\\Users\\dev\\shop; reuse_rule=any task", "",
                f"## Task 1: fix 结账 {block}, success", "### rollout_summary_files",
                f"- rollout_summaries/{summary_stem(block)}.md (thread_id={thread})",
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


def summary_stem(block: int) -> str:
    return f"2026-10-30T09-00-00-Ab3x-t{block}"


def rollout(tid: str, events: list[tuple[float, int, int]], thread: str = ADA) -> str:
    def ts(t: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))

    first = ts(events[0][0])
    rows = [{"timestamp": first, "type": "session_meta", "payload": {
        "id": tid, "session_id": tid, "timestamp": first, "cwd": "/home/dev/shop",
        "source": "cli", "originator": "codex_cli_rs", "cli_version": "0.169.0"}}]
    for t, a, b in events:
        text = (f"Use `make check`.\n\n<oai-mem-citation>\n<citation_entries>\n"
                f"MEMORY.md:{a}-{b}|note=[bench]\n</citation_entries>\n<rollout_ids>\n{ADA}\n"
                "</rollout_ids>\n</oai-mem-citation>").replace(ADA, thread)
        rows.append({"timestamp": ts(t), "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "how do I test?"}]}})
        rows.append({"timestamp": ts(t), "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "phase": "final_answer",
            "content": [{"type": "output_text", "text": text}]}})
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"


def taught_rollout(tid: str, turns: int = 150) -> str:
    """The session the memory names: the user states the facts, tools run, the agent answers
    (about 60 KB, the median rollout of bench/index.py's home)."""
    def ts(k: int) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(T0 - DAY + k * 20))

    rows: list[dict[str, object]] = [{"timestamp": ts(0), "type": "session_meta", "payload": {
        "id": tid, "session_id": tid, "timestamp": ts(0), "cwd": "/home/dev/shop",
        "source": "cli", "originator": "codex_cli_rs", "cli_version": "0.169.0"}}]
    for k in range(turns):
        said = f"for block {k}: run `make check-{k % 12}` 运行测试 before you push, please"
        rows += [
            {"timestamp": ts(3 * k + 1), "type": "response_item", "payload": {
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": said}]}},
            {"timestamp": ts(3 * k + 2), "type": "response_item", "payload": {
                "type": "function_call", "name": "shell", "call_id": f"c{k}",
                "arguments": json.dumps({"command": ["make", f"check-{k % 12}"]})}},
            {"timestamp": ts(3 * k + 2), "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"c{k}",
                "output": json.dumps({"output": "ok " * 40, "metadata": {"exit_code": 0}})}},
            {"timestamp": ts(3 * k + 3), "type": "response_item", "payload": {
                "type": "message", "role": "assistant", "phase": "final_answer",
                "content": [{"type": "output_text",
                             "text": f"Done: `make check-{k % 12}` passes."}]}}]
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"


def memory_folder(home: Path, lines: int, thread: str) -> None:
    """MEMORY.md in 3 versions of memdeck's history, each block's rollout summary file, and
    the stage-1 row of the session they name."""
    memories = home / "memories"
    (memories / "rollout_summaries").mkdir(parents=True)
    clock = FixedClock(T0)
    engine = Engine.open(home, clock=clock)
    for version in (1, 2, 3):
        text = memory_md(lines, version, thread)
        (memories / "MEMORY.md").write_text(text, encoding="utf-8")
        if version == 1:
            for block in range(text.count("# Task Group:")):
                (memories / "rollout_summaries" / f"{summary_stem(block)}.md").write_text(
                    f"thread_id: {thread}\ncwd: /home/dev/shop\n\n# Checkout {block}\n"
                    f"- run `make check` 运行测试\n", encoding="utf-8")
        clock.at = T0 + (version - 1) * 10 * DAY  # the engine's clock dates each state
        engine.record_outside_edits()
    db = home / "memories_1.sqlite"
    create_memories_db(db)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO stage1_outputs VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (thread, T0 - DAY, "---\ndescription: checkout tests\n---\n"
                      + "\n".join(f"- run `make check-{k}`" for k in range(12)),
                      "# Checkout\n- run `make check`", "checkout", T0, 40, T0 + 20 * DAY, 1,
                      T0 - DAY))
    conn.close()


def citing_rollouts(home: Path, lines: int, n_events: int, thread: str) -> None:
    """`n_events` citations over the three versions, in 40 rollouts of their own."""
    day = home / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True, exist_ok=True)
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
            rollout(tid, evs, thread), encoding="utf-8")


def build_home(home: Path, lines: int, n_events: int) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[features]\nmemories = true\n", encoding="utf-8")
    taught = home / "sessions" / "2026" / "10" / "29"
    taught.mkdir(parents=True)
    (taught / f"rollout-2026-10-29T09-00-00-{ADA}.jsonl").write_text(taught_rollout(ADA),
                                                                       encoding="utf-8")
    memory_folder(home, lines, ADA)
    citing_rollouts(home, lines, n_events, ADA)


def build_big_home(home: Path, base: Path, files: list[str], lines: int, n_events: int
                   ) -> tuple[str, int]:
    """`home`: bench/index.py's rollouts at `base` linked in (hard links: no copy, and the
    base is never written), the memory folder naming its median-sized session. Returns that
    session's thread id and size."""
    home.mkdir(parents=True)
    for sub in ("sessions", "archived_sessions"):
        if (base / sub).is_dir():
            subprocess.run(["cp", "-al", str(base / sub), str(home / sub)], check=True)
    (home / "config.toml").write_text("[features]\nmemories = true\n", encoding="utf-8")
    live = sorted(((home / f).stat().st_size, f) for f in files if f.startswith("sessions/"))
    size, rel = live[len(live) // 2]
    thread = rel.rsplit("/", 1)[-1].removesuffix(".jsonl")[-36:]
    memory_folder(home, lines, thread)
    citing_rollouts(home, lines, n_events, thread)
    return thread, size


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def timed_ms(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


Row = tuple[str, float, float | None]


def print_rows(rows: list[Row]) -> None:
    print(f"{'what':58} {'ms':>8} {'target':>8}")
    for what, ms, target in rows:
        goal = f"<= {target:.0f}" if target else ""
        flag = "" if target is None or ms <= target else "  OVER"
        print(f"{what:58} {ms:8.1f} {goal:>8}{flag}")


def history_versions(home: Path) -> str:
    return subprocess.run(["git", f"--git-dir={home / 'memdeck' / 'history.git'}", "rev-list",
                           "--count", "HEAD"], capture_output=True, text=True).stdout.strip()


def cited_fact(usage: object) -> int:
    """The first cited line that states a fact (not a heading or a file list)."""
    return next(s.line for s in usage.lines  # type: ignore[attr-defined]
                if s.count and s.text.startswith("- fact"))


def small_home(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    home = tmp / "codex-home"
    build_home(home, args.lines, args.events)
    engine = Engine.open(home)
    engine.refresh()
    cold = timed_ms(lambda: engine.line_usage("MEMORY.md"))
    usage = engine.line_usage("MEMORY.md")
    gutter = median_ms(lambda: engine.line_usage("MEMORY.md"), args.runs)
    line = cited_fact(usage)
    t = engine.trace("MEMORY.md", line)
    trace = median_ms(lambda: engine.trace("MEMORY.md", line), args.runs)
    print(f"MEMORY.md: {len(usage.lines):,} lines, {history_versions(home)} history versions; "
          f"{usage.events:,} citation events, {len(usage.removed)} removed ranges; the trace "
          f"of line {line}: {len(t.summaries)} summary, turn {t.summaries[0].turn.confidence}")
    print_rows([("gutter, first call (reads the rollouts)", cold, None),
                (f"gutter (median of {args.runs})", gutter, 200.0),
                (f"trace MEMORY.md:{line} (median of {args.runs})", trace, 300.0)])
    return {"gutter_ms": round(gutter, 1), "cold_ms": round(cold, 1),
            "trace_ms": round(trace, 1), "events": usage.events}


def big_home(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    def log(msg: str) -> None:
        print(f"[bench] {msg}", file=sys.stderr, flush=True)

    n = args.big_sessions
    base = (Path(args.big_dir) if args.big_dir else Path(tempfile.gettempdir())
            / f"memdeck-bench-n{n}-s{synthetic.DEFAULT_SEED}").absolute()
    log(f"the {n:,}-session home of bench/index.py: {base}")
    info = synthetic.build_home(base, n, synthetic.DEFAULT_SEED, synthetic.DEFAULT_END_DATE,
                                log)
    home = tmp / "big-home"
    thread, size = build_big_home(home, base, info.files, args.lines, args.events)
    engine = Engine.open(home)
    t_index = timed_ms(engine.refresh)
    sessions = len(engine.sessions())
    usage = engine.line_usage("MEMORY.md")
    line = cited_fact(usage)
    t = engine.trace("MEMORY.md", line)
    assert t.summaries[0].session is not None, "the named session is in the index"
    trace = median_ms(lambda: engine.trace("MEMORY.md", line), args.runs)
    trace_refresh = median_ms(lambda: engine.trace("MEMORY.md", line, refresh=True), args.runs)
    gutter = median_ms(lambda: engine.line_usage("MEMORY.md"), args.runs)
    gutter_app = median_ms(lambda: engine.line_usage("MEMORY.md", refresh=False), args.runs)
    catch_up = median_ms(engine.refresh, args.runs)
    cmd = [sys.executable, "-m", "memdeck.tui.cli", "--home", str(home), "trace",
           f"MEMORY.md:{line}", "--json"]
    if shutil.which("memdeck", path=str(Path(sys.executable).parent)):
        cmd = [str(Path(sys.executable).parent / "memdeck"), *cmd[3:]]
    subprocess.run(cmd, capture_output=True, check=True)  # warm-up: bytecode, page cache
    cli = statistics.median(timed_ms(lambda: subprocess.run(cmd, capture_output=True,
                                                             check=True))
                            for _ in range(3))
    print(f"\nthe same memory on a large home: {sessions:,} sessions indexed "
          f"({len(info.files):,} rollouts of bench/index.py, {sum(info.sizes) / 1e6:,.0f} MB, "
          f"+ 40 citing); the session traced to: {thread[:8]}, {size / 1e3:,.0f} KB, "
          f"turn {t.summaries[0].turn.confidence}")
    print_rows([("index of the large home, cold (context)", t_index, None),
                (f"trace, index as it is: the app (median of {args.runs})", trace, 300.0),
                (f"trace, index caught up first (median of {args.runs})", trace_refresh,
                 300.0),
                ("`memdeck trace --json`, the whole command (median of 3)", cli, None),
                (f"gutter, index as it is: the app (median of {args.runs})", gutter_app,
                 200.0),
                (f"gutter, index caught up first: the CLI (median of {args.runs})", gutter,
                 None),
                (f"of which: the index caught up, nothing changed (median of {args.runs})",
                 catch_up, None)])
    return {"big_sessions": sessions, "big_trace_ms": round(trace, 1),
            "big_trace_refresh_ms": round(trace_refresh, 1), "big_cli_ms": round(cli, 1),
            "big_gutter_ms": round(gutter, 1), "big_gutter_app_ms": round(gutter_app, 1),
            "big_catch_up_ms": round(catch_up, 1),
            "big_index_ms": round(t_index, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--big-sessions", type=int, default=synthetic.DEFAULT_SESSIONS,
                    metavar="N", help="rollouts of the large home (default 10,000)")
    ap.add_argument("--big-dir", metavar="D", help="bench/index.py's home of N sessions "
                    "(default: $TMPDIR/memdeck-bench-n<N>-s1, built when missing)")
    ap.add_argument("--no-big", action="store_true", help="only the 5,000-line home")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = small_home(args, Path(tmp))
        if not args.no_big:
            result |= big_home(args, Path(tmp))
    print(json.dumps({"RESULT": result}))


if __name__ == "__main__":
    main()
