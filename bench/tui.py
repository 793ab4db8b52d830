#!/usr/bin/env python3
"""Benchmark the memdeck app on a large synthetic Codex home (issue 4, "Performance"; issue 10,
requirement 5, "Feel, measured").

Every figure comes from the real app in a child process on a 120x36 pseudo-terminal
(bench/app_pty.py), started as `memdeck` starts it, with Textual's Linux driver drawing on the
pty: closer to what a user sees than a headless `run_test`, which never turns a frame into
terminal output, and a fresh process each time, so imports count as they do for a user.
A figure runs from spawning the child, or writing a key to its pty, until the child has
handled the event and drawn the next frame. All in one run, the bare app included:

  * first paint: the first frame with session rows in it (the last listing's head, which
    memdeck paints before its listing of now: engine/index/listing_head.py), against a bare
    Textual app (an `App` with a `Static`, its first frame) in the same run
                                                                    (target <= 2x bare)
  * first full paint of the Sessions pane, the listing of now (`SessionsPane.Loaded(final=
    True)` handled, then a frame): with the index built beforehand (warm), and with it
    dropped (cold: built during start)                                (target <= 1.5 s)
  * scrolling: PageDown from the first to the last of the 10,000 rows, per page
  * first visit of each pane 2..6, once each, waiting for its data before the next key:
    key written -> the pane's Loaded message handled by the pane and a frame drawn
    (MemoriesPane / HistoryPane / ReviewPane / SettingsPane.Loaded; Memory: MemoryPane.Loaded
    then the FileLoaded of the file it opens; History: its Loaded then the first commit's
    DiffLoaded, when there are files / commits)                        (target <= 300 ms each)
  * switching panes: the first visits, then keys 1..6 for --rounds rounds at a human pace
    (0.15 s between keys); key written -> `TabbedContent.TabActivated` handled and drawn;
    p95 (nearest rank) over all of them, median and worst beside it     (target p95 <= 100 ms)
  * opening a 3 MB transcript: the rollout of >= 3 MB nearest to 3 MB (hundreds of tool
    calls with outputs); `/`, its id, Enter, then Enter on its row timed: key written -> the
    TranscriptView has mounted its first batch of entries and drawn it  (target <= 500 ms)
  * back to Sessions after a run: a copy of the home (rollouts hard-linked; config.toml's
    max_rollout_age_days / min_rollout_idle_hours chosen so that ~--run-sessions, 400, are
    eligible today; bench/run_home.py), memdeck on it, `c` (extract + consolidate with the
    offline backend: OPENAI_API_KEY / OPENAI_BASE_URL are dropped, so memdeck.backend = auto
    picks offline), wait for the run's end (the app then shows Review), then `1` timed: key
    written -> the Sessions pane's listing reloaded and drawn (or, if the pane was not stale,
    its TabActivated drawn)                                            (target <= 300 ms)
  * peak RSS of the app process (`ru_maxrss` at exit)                   (target <= 300 MB)
  * whether `openai` and `git` (GitPython) are in `sys.modules` at first paint

    .venv/bin/python bench/tui.py [--sessions 10000] [--runs 5] [--rounds 5]
                                  [--run-sessions 400] [--profile [cold|interact]]

--profile (warm, or cold) adds a cProfile of one start to first paint; --profile interact
one of the interactive run and of the run scenario, worker threads included.

A benchmark, not a test: it prints PASS/MISS per target and exits 1 when one is missed.
The synthetic home is bench/index.py's generator's (shared with it, reused when present).
"""

from __future__ import annotations

import argparse
import math
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import index  # noqa: E402  bench/index.py: the synthetic home, the report table
from app_pty import PAINT_TIMEOUT_S, ROOT, child_env, paint_once  # noqa: E402
from app_scenarios import interact, run_then_sessions  # noqa: E402
from run_home import build_run_home  # noqa: E402

TARGET_PAINT_S, TARGET_RATIO, TARGET_SWITCH_S, TARGET_RSS_MB = 1.5, 2.0, 0.100, 300
TARGET_FIRST_VISIT_S, TARGET_BACK_S, TARGET_TRANSCRIPT_S = 0.300, 0.300, 0.500
TRANSCRIPT_BYTES = 3_000_000
ENGINE_CALLS = """
import sys, time
t = time.perf_counter()
from memdeck.engine import Engine
a = time.perf_counter(); e = Engine.open(sys.argv[1]); b = time.perf_counter()
q = e.sessions(refresh=False); c = time.perf_counter(); s = e.sessions(); d = time.perf_counter()
print(f"import engine {a - t:.3f} s, Engine.open {b - a:.3f} s, sessions(refresh=False) "
      f"{c - b:.3f} s ({len(q)} rows), sessions() {d - c:.3f} s ({len(s)} rows)")
"""


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def med(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def ms(x: float) -> str:
    return f"{x * 1000:.0f} ms"


def p95(xs: list[float]) -> float:
    """The nearest-rank 95th percentile: 95 % of the values are at most this."""
    ys = sorted(xs)
    return ys[max(0, math.ceil(0.95 * len(ys)) - 1)]


def transcript_rollout(home: Path, info: index.HomeInfo) -> tuple[str, int] | None:
    """The rollout of at least 3 MB closest to 3 MB (the generator's giant sessions: hundreds
    of tool calls with their outputs), as (absolute path, bytes)."""
    big = sorted((size, f) for f, size in zip(info.files, info.sizes, strict=True)
                 if size >= TRANSCRIPT_BYTES)
    return (str(home / big[0][1]), big[0][0]) if big else None


def profile_report(home: Path, env: dict[str, str], cold: bool) -> None:
    import pstats

    with tempfile.NamedTemporaryFile(suffix=".prof", delete=False) as tf:
        out = tf.name
    if cold:
        index.drop_index(home)
    r = paint_once("memdeck", home, env, "--profile-out", out)
    took = f"{r['paint']:.3f} s" if r["paint"] else "; ".join(r["failed"])
    print(f"\ncProfile of the app's main thread, {'cold' if cold else 'warm'} start to first "
          f"full paint ({took} under the profiler; worker threads are not profiled: their "
          f"engine calls are timed alone below); data: {out}")
    for key, n in (("cumulative", 30), ("tottime", 20)):
        pstats.Stats(out).sort_stats(key).print_stats(n)
    calls = subprocess.run([sys.executable, "-c", ENGINE_CALLS, str(home)], env=env, cwd=ROOT,
                           capture_output=True, text=True)
    print("the sessions pane's loading worker, its engine calls alone in a fresh process:",
          calls.stdout.strip() or calls.stderr.strip()[-500:])


def print_profile(out: str, title: str, n: int = 35) -> None:
    import pstats

    print(f"\n{title}; data: {out} (pstats; `.main`: the main thread alone)")
    stats = pstats.Stats(out)
    stats.sort_stats("cumulative").print_stats(r"/(tui|engine)/", n)  # memdeck's own code
    stats.sort_stats("tottime").print_stats(25)


def profile_interaction(home: Path, env: dict[str, str], args: argparse.Namespace,
                        big: tuple[str, int] | None, run_home: Path | None) -> None:
    """The interactive run and the run home's scenario again, each under cProfile in the
    child, worker threads included (figures under the profiler are slower than above)."""
    out = tempfile.mkstemp(suffix=".prof")[1]
    r = interact(home, env, 1, args.settle, big[0] if big else None,
                 "--profile-out", out, "--profile-threads")
    visits = ", ".join(f"{v['pane']} {ms(v['loaded'])}" for v in r.get("visits", [])
                       if v["loaded"] is not None)
    opened = (r.get("transcript") or {}).get("took")
    if r.get("transcript") and opened is None:
        log(f"transcript under the profiler: {r['transcript']['error']}")
    print_profile(out, "cProfile of the interactive run (first visits: " + visits
                  + (f"; transcript {ms(opened)}" if opened else "") + ", under the profiler)")
    if run_home is not None:
        out = tempfile.mkstemp(suffix=".prof")[1]
        build_run_home(home, args.run_sessions, index.memdeck_cmd(), env, log)
        b = run_then_sessions(run_home, env, args.settle, "--profile-out", out,
                              "--profile-threads")
        took = ms(b["took"]) if b.get("took") is not None else "never"
        print_profile(out, f"cProfile of the run scenario (c, then 1 -> listing {took} under "
                      "the profiler; the run's own work is in it too)")


def paint_rows(rep: index.Report, bare: list[dict], warm: list[dict], nowatch: list[dict],
               cold: list[dict]) -> None:
    def ok(runs: list[dict]) -> list[dict]:
        return [r for r in runs if r["paint"] is not None]

    def steps(runs: list[dict], names: tuple[str, ...]) -> str:
        return " / ".join(f"{med([r['marks'].get(k, 0.0) for r in runs]):.2f}" for k in names)

    t_bare = med([r["paint"] for r in ok(bare)])
    t_warm = med([r["paint"] for r in ok(warm)])
    t_rows = med([r["rows_at"] for r in ok(warm) if r.get("rows_at") is not None])
    if t_bare is not None:
        rep.row(f"bare Textual app: first paint (median of {len(ok(bare))})", index.fmt_s(t_bare))
        rep.row("  Python up / first frame (s)", steps(ok(bare), ("started", "painted")))
        rep.result("paint_bare_s", t_bare)
    if t_warm is not None:
        shown = ok(warm)[-1]["painted"].get("shown")
        rep.row("memdeck warm: Python up / imports / first frame / quick listing / full (s)",
                steps(ok(warm), ("started", "imported", "first_frame", "first_rows", "painted")))
        head = sum(bool(r["painted"].get("head")) for r in ok(warm))
        rep.row(f"memdeck warm: first paint, rows on screen ({head} of {len(ok(warm))} runs "
                "from the last listing's head)", index.fmt_s(t_rows) if t_rows else "never")
        rep.row(f"memdeck warm: first full paint, the listing of now, {shown} rows (median of "
                f"{len(ok(warm))})", index.fmt_s(t_warm), f"<= {TARGET_PAINT_S} s",
                index.verdict(t_warm <= TARGET_PAINT_S))
        rep.result("paint_warm_s", t_warm)
        if t_rows:
            rep.result("paint_rows_s", t_rows)
    if t_rows is not None and t_bare:
        rep.row("memdeck warm first paint (rows on screen) / bare", f"{t_rows / t_bare:.1f}x",
                f"<= {TARGET_RATIO:.0f}x", index.verdict(t_rows / t_bare <= TARGET_RATIO))
        rep.result("paint_ratio", round(t_rows / t_bare, 2))
    if t_warm is not None and t_bare:
        rep.row("  memdeck warm full paint (up to date) / bare", f"{t_warm / t_bare:.1f}x")
        rep.result("paint_full_ratio", round(t_warm / t_bare, 2))
    if ok(nowatch):
        rep.row(f"  diagnosis: the same without the watcher (median of {len(ok(nowatch))})",
                index.fmt_s(med([r["paint"] for r in ok(nowatch)])))
        git = any(r["painted"].get("git") for r in ok(nowatch))
        rep.note(f"without the watcher, git (GitPython) is {'' if git else 'not '}in "
                 "sys.modules at first paint")
    if cold:
        t_cold = med([r["paint"] for r in ok(cold)])
        rep.row(f"memdeck cold: first full paint, index built during start ({len(ok(cold))} "
                f"of {len(cold)} painted)", index.fmt_s(t_cold) if t_cold else "never",
                "paints", index.verdict(len(ok(cold)) == len(cold)))
        if t_cold:
            rep.result("paint_cold_s", t_cold)
        rss = [r["exited"].get("rss_kb", 0) for r in ok(cold)]
        if rss and all(rss):
            kids = max(r["exited"].get("children_rss_kb", 0) for r in ok(cold))
            rep.row("peak RSS, cold start: app process / largest index worker",
                    f"{max(rss) / 1024:.0f} MB / {kids / 1024:.0f} MB", f"<= {TARGET_RSS_MB} MB",
                    index.verdict(max(rss) / 1024 <= TARGET_RSS_MB))
    for name, runs in (("bare", bare), ("warm", warm), ("no watcher", nowatch), ("cold", cold)):
        for r in runs:
            for f in r["failed"]:
                rep.note(f"{name} run did not paint: {f}")
    for mod, label in (("openai", "openai"), ("git", "git (GitPython)")):
        runs = ok(warm) + ok(cold)
        hits = sum(bool(r["painted"].get(mod)) for r in runs)
        rep.row(f"{label} in sys.modules at first paint", f"{hits} of {len(runs)} runs",
                "none", index.verdict(not hits))
        rep.result(f"{mod}_at_paint", hits)


def interaction_rows(rep: index.Report, run: dict) -> None:
    if run["failed"]:
        rep.row("interactive run", "never painted", "paints", "MISS")
        rep.note(f"interactive run: {run['failed']}")
        return
    pages = sorted(run["pages"])
    if pages:
        rep.row(f"scroll: PageDown per page, median / p95 / worst ({len(pages)} pages to row "
                f"{run['cursor'] + 1} of {run['rows']})",
                f"{ms(pages[len(pages) // 2])} / {ms(pages[int(0.95 * (len(pages) - 1))])} / "
                f"{ms(pages[-1])}")
        rep.result("page_median_ms", round(pages[len(pages) // 2] * 1000, 1))
    end = run["cursor"] >= run["rows"] - 1
    rep.row("scroll: reached the last row", "yes" if end else "no", "yes", index.verdict(end))
    visits = run.get("visits", [])
    done = [t for _, t, stayed in run["switches"] if t is not None and stayed]
    done += [v["tab"] for v in visits if v["tab"] is not None]
    lost = [(p, t) for p, t, stayed in run["switches"] if t is None or not stayed]
    lost += [(v["pane"], None) for v in visits if v["tab"] is None]
    target = f"<= {TARGET_SWITCH_S * 1000:.0f} ms"
    if done:
        rep.row(f"switch pane: p95 ({len(done)} switches, the first visits included)",
                ms(p95(done)), target, index.verdict(p95(done) <= TARGET_SWITCH_S))
        rep.row("  switch pane: median / worst",
                f"{ms(statistics.median(done))} / {ms(max(done))}")
        rep.result("switch_p95_ms", round(p95(done) * 1000, 1))
        rep.result("switch_median_ms", round(statistics.median(done) * 1000, 1))
        rep.result("switch_worst_ms", round(max(done) * 1000, 1))
    first_target = f"<= {TARGET_FIRST_VISIT_S * 1000:.0f} ms"
    for v in visits:
        t = v["loaded"]
        what = f"{v['pane'].capitalize()}Pane.{v['what']}"
        rep.row(f"first visit of {v['pane']}: key -> {what} drawn ({v['n']} items)",
                ms(t) if t is not None else "never", first_target,
                index.verdict(t is not None and t <= TARGET_FIRST_VISIT_S))
        if t is not None:
            rep.result(f"first_visit_{v['pane']}_ms", round(t * 1000, 1))
    by_pane: dict[str, list[float]] = {}
    for p, t, stayed in run["switches"]:
        if t is not None and stayed:
            by_pane.setdefault(p, []).append(t)
    rep.note("switch median by pane (rounds after the first visits): " + ", ".join(
        f"{p} {ms(statistics.median(ts))}" for p, ts in by_pane.items()))
    slow = sorted(((t, p, i // 6 + 1) for i, (p, t, _) in enumerate(run["switches"])
                   if t is not None), reverse=True)[:3]
    if slow:
        rep.note("slowest switches: " + ", ".join(f"to {p} in round {r}: {ms(t)}"
                                                  for t, p, r in slow))
    opened = run.get("transcript")
    if opened is not None:
        took = opened["took"]
        rep.row(f"open a {run['transcript_mb']:.1f} MB transcript: Enter -> first screen drawn"
                + (f" ({opened['shown']} of {opened['entries']} entries)" if took else ""),
                ms(took) if took is not None else "never",
                f"<= {TARGET_TRANSCRIPT_S * 1000:.0f} ms",
                index.verdict(took is not None and took <= TARGET_TRANSCRIPT_S))
        if took is None:
            rep.note(f"transcript: {opened['error']}")
        else:
            rep.result("transcript_ms", round(took * 1000, 1))
    rep.row("switch pane: key without effect, or the pane bounced back", str(len(lost)), "0",
            index.verdict(not lost))
    if lost:
        rep.note("switches lost: " + ", ".join(
            f"{p} ({'no TabActivated in 3 s' if t is None else 'another pane took over'})"
            for p, t in lost))
    rss = run["exited"].get("rss_kb")
    if rss:
        rep.row("peak RSS, app process, interactive run (every pane, all rows paged)",
                f"{rss / 1024:.0f} MB", f"<= {TARGET_RSS_MB} MB",
                index.verdict(rss / 1024 <= TARGET_RSS_MB))
        rep.result("rss_mb", round(rss / 1024, 1))
    rep.row("quit: q -> process ended", ms(run["quit"]) if run["quit"] is not None
            else "killed after 30 s")


def run_rows(rep: index.Report, back: dict, eligible: int, rules: str) -> None:
    what = f"back to Sessions after a run over {eligible} eligible sessions: 1 -> listing drawn"
    if back["failed"]:
        rep.row(what, "never painted", f"<= {TARGET_BACK_S * 1000:.0f} ms", "MISS")
        rep.note(f"run home: {back['failed']}")
        return
    took = back.get("took")
    if back.get("run_s") is not None:
        rep.row("  extract + consolidate (offline backend): c -> run ended", index.fmt_s(
            back["run_s"]))
        rep.result("run_s", round(back["run_s"], 1))
    rep.row(what, ms(took) if took is not None else "never",
            f"<= {TARGET_BACK_S * 1000:.0f} ms",
            index.verdict(took is not None and took <= TARGET_BACK_S))
    if took is not None:
        rep.result("back_to_sessions_ms", round(took * 1000, 1))
    rep.note(f"the run: {back['summary']}; shown before 1: {back.get('before', '?')}; the "
             f"Sessions pane was {'stale (reloaded)' if back.get('stale') else 'fresh'}; "
             f"TabActivated drawn after {ms(back['tab']) if back.get('tab') else 'never'}; "
             f"the listing drawn: {back.get('extracted')} of {back.get('rows')} rows say "
             f"extracted; run home rules: {rules}")


def bench(args: argparse.Namespace) -> int:
    command = shlex.join([sys.executable, "bench/tui.py", *sys.argv[1:]])
    print(f"command: cd {shlex.quote(str(ROOT))} && {command}", flush=True)
    clock = time.get_clock_info("perf_counter").implementation
    if "CLOCK_MONOTONIC" not in clock:
        sys.exit(f"bench: perf_counter is {clock}, not one clock shared by processes")
    home = (Path(args.dir) if args.dir else Path(tempfile.gettempdir())
            / f"memdeck-bench-n{args.sessions}-s{args.seed}").absolute()
    info = index.build_home(home, args.sessions, args.seed, index.DEFAULT_END_DATE, log)
    env = child_env()
    sessions_cmd = [*index.memdeck_cmd(), "sessions", "--json", "--home", str(home)]
    log("building / updating the index (memdeck sessions --json)")
    t_index = index.run_timed(sessions_cmd, env=env)
    log("warm-up runs (bytecode cache, page cache), not counted")
    paint_once("bare", home, env)
    paint_once("memdeck", home, env)
    bare, warm, nowatch, cold = [], [], [], []
    for i in range(args.runs):
        log(f"first paint {i + 1}/{args.runs}: bare Textual app, then memdeck (warm index)")
        bare.append(paint_once("bare", home, env))
        warm.append(paint_once("memdeck", home, env))
    for i in range(args.diag_runs):
        log(f"diagnosis {i + 1}/{args.diag_runs}: memdeck (warm index) without the watcher")
        nowatch.append(paint_once("memdeck", home, env, "--no-watch"))
    for i in range(args.cold_runs):
        log(f"cold first paint {i + 1}/{args.cold_runs} (memdeck/ dropped: the app indexes)")
        index.drop_index(home)
        cold.append(paint_once("memdeck", home, env))
    index.run_timed(sessions_cmd, env=env)  # warm again, whatever a cold run left
    big = transcript_rollout(home, info)
    log(f"interactive run: PageDown to the end, keys 2..6 once (first visits), {args.rounds} "
        f"rounds of keys 1..6, then open {big[0] if big else 'no 3 MB rollout'}")
    run = interact(home, env, args.rounds, args.settle, big[0] if big else None)
    run["transcript_mb"] = big[1] / 1e6 if big else 0.0
    back, run_home = None, None
    if args.run_sessions:
        run_home, eligible, rules = build_run_home(home, args.run_sessions,
                                                   index.memdeck_cmd(), env, log)
        log(f"run: memdeck on {run_home}, c (extract + consolidate, offline), then 1")
        back = run_then_sessions(run_home, env, args.settle)

    rep = index.Report()
    rep.row("home: sessions / size", f"{len(info.files)} / {sum(info.sizes) / 1e6:.0f} MB")
    rep.row("index before the warm runs: memdeck sessions --json", index.fmt_s(t_index))
    paint_rows(rep, bare, warm, nowatch, cold)
    interaction_rows(rep, run)
    if back is not None:
        run_rows(rep, back, eligible, rules)
    rep.note("first paint: from spawning the child on a 120x36 pty until "
             "SessionsPane.Loaded(final=True) was handled and the next frame drawn (the bare "
             "app: until its first frame was drawn); both include starting Python")
    rep.note(f"the index was built (warm) before the warm runs; the watcher runs as in "
             f"`memdeck`; {args.settle:.1f} s after the first paint before the first key; "
             f"a run that does not paint in {PAINT_TIMEOUT_S} s counts as failed")
    rep.note(f"clock: perf_counter is {clock} in both processes; bytecode cache: "
             f"{env['PYTHONPYCACHEPREFIX']}")
    print(f"\nmemdeck app benchmark: {len(info.files)} sessions, home {home}, "
          f"python {sys.version.split()[0]}\n")
    rep.print()
    if args.profile in ("warm", "cold"):
        profile_report(home, env, cold=args.profile == "cold")
    elif args.profile == "interact":
        profile_interaction(home, env, args, big, run_home)
    return 1 if any(r[3] == "MISS" for r in rep.rows) else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,  # every figure, as the docstring has it
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=index.DEFAULT_SESSIONS, metavar="N")
    ap.add_argument("--seed", type=int, default=index.DEFAULT_SEED)
    ap.add_argument("--dir", metavar="D", help="the synthetic home (default: bench/index.py's)")
    ap.add_argument("--runs", type=int, default=5, help="timed warm first paints (default 5)")
    ap.add_argument("--diag-runs", type=int, default=2,
                    help="first paints without the watcher, to tell its share (default 2)")
    ap.add_argument("--cold-runs", type=int, default=2, help="cold first paints (default 2)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of pane keys (default 5)")
    ap.add_argument("--settle", type=float, default=1.0, metavar="S",
                    help="seconds after the first paint before the first key (default 1)")
    ap.add_argument("--run-sessions", type=int, default=400, metavar="N",
                    help="eligible sessions for the extract + consolidate run, in a copy of "
                    "the home (default 400; 0 skips the run)")
    ap.add_argument("--profile", nargs="?", const="warm", choices=("warm", "cold", "interact"),
                    help="also cProfile one start to first paint (warm/cold, and time the "
                    "engine calls), or the interactive run and the run scenario (interact)")
    return bench(ap.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
