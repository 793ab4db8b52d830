#!/usr/bin/env python3
"""Soak the memory folder's one way of changing (issue 12): kill -9 every operation at random
moments and at every named step, under CPU load, then check that nothing was lost.

Operations: accept, restore, reset, restore-backup, edit, note, forget (bench/soak_homes.py).
Each trial copies the operation's prepared home into its own temp folder and runs the real
command there, killed either

- at a named step (engine/crash_points.py: `MEMDECK_CRASH_AT=<step>@<n>`, for every step and
  every time a clean run reaches it), or
- at random: started with Popen (in its own process group) and sent SIGKILL, with its
  children, after a delay drawn uniformly across the operation's measured clean run time.

Then the next command of some kind runs (sessions, history, memories, proposals, backups,
citations, show <id>, in turn), naming the home as it is, through a symlink or with `..` (in
turn); every 4th trial has the memory folder as a bind mount of its own (where root can
mount). bench/soak_checks.py checks (a) it succeeded, (b) the folder was old or new after
the kill and after it, (c) the rows go with the folder, (d) history holds every state seen,
(e) nothing is left over, (f) git fsck and SQLite's integrity_check pass. A race trial
(bench/soak_race.py) appends to MEMORY.md every 2–5 ms (steadily, in bursts, and holding the
file open for 20–300 ms at a time across the switches) while accept, restore and reset run,
and one line is written at every named step of each of them (paused there); every line must
be found afterwards.

    .venv/bin/python bench/soak.py [--trials 500] [--seed 1] [--jobs 2] [--no-load]
        [--ops accept,reset] [--race-rounds 3] [--keep DIR]

Exits 1 if any trial failed a check (each failure is printed with how to reproduce it).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
for _p in (BENCH, BENCH.parent / "tests"):  # the soak's helpers, and tests/crash_run.py
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import soak_checks as checks  # noqa: E402
from crash_run import memdeck_argv  # noqa: E402
from soak_homes import OPS, Template, base_home, build_template, copy_home  # noqa: E402

NEXT_COMMANDS = ("sessions", "history", "memories", "proposals", "backups", "citations",
                 "show")


@dataclass(frozen=True)
class Plan:
    """One trial: which operation, killed how, and which command runs next."""

    index: int
    op: str
    crash_at: str | None = None  # a named step, `<step>@<n>`
    delay: float | None = None  # seconds after start, for a random kill
    next_command: str = "sessions"
    mounted: bool = False  # the memory folder a bind mount of its own (issue 29)

    @property
    def how(self) -> str:
        how = self.crash_at or f"random {self.delay:.3f}s"
        return how + (", mounted" if self.mounted else "") + f", home {SPELLINGS[self.index % 3]}"


# how the next command names the home: a recovery must not depend on it (issue 29)
SPELLINGS = ("as it is", "through a symlink", "with ..")


def spelled(home: Path, index: int) -> Path:
    kind = index % 3
    if kind == 1:
        link = home.parent / "via-link"
        if not link.is_symlink():
            link.symlink_to(home)
        return link
    return home / ".." / home.name if kind == 2 else home


def can_mount() -> bool:
    """Root on Linux with a working `mount --bind` (tried once on a scratch folder)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    with tempfile.TemporaryDirectory() as d:
        a, b = Path(d) / "a", Path(d) / "b"
        a.mkdir()
        b.mkdir()
        if subprocess.run(["mount", "--bind", str(a), str(b)], capture_output=True).returncode:
            return False
        subprocess.run(["umount", str(b)], capture_output=True)
        return True


def mount_memory_folder(home: Path, volume: Path) -> None:
    """Move `memories/` to `volume` and bind-mount it back (a container volume)."""
    (home / "memories").rename(volume)
    (home / "memories").mkdir()
    subprocess.run(["mount", "--bind", str(volume), str(home / "memories")], check=True,
                   capture_output=True)


@dataclass
class Result:
    plan: Plan
    killed: bool  # the command died of SIGKILL (else it ran to its end first)
    failures: dict[str, str] = field(default_factory=dict)  # check -> what was found
    home: Path | None = None  # kept when a check failed
    seconds: float = 0.0
    half_switched: bool = False  # a mounted folder seen part old, part new after the kill


def make_plans(templates: dict[str, Template], trials: int, seed: int,
               steps: bool = True, mounts: bool = False) -> list[Plan]:
    """Every named step of every operation (if `steps`), then random kills, round-robin over
    the operations, up to `trials` in all (never fewer than the step trials)."""
    rng = random.Random(seed)
    plans: list[Plan] = []
    if steps:
        for op, t in templates.items():
            plans += [Plan(0, op, crash_at=s) for s in t.step_kills()]
    ops = list(templates)
    i = 0
    while len(plans) < trials:
        op = ops[i % len(ops)]
        plans.append(Plan(0, op, delay=rng.uniform(0, templates[op].duration)))
        i += 1
    return [Plan(n, p.op, p.crash_at, p.delay, NEXT_COMMANDS[n % len(NEXT_COMMANDS)],
                 mounts and n % 4 == 3) for n, p in enumerate(plans)]


def _env(crash_at: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDECK_")}
    if crash_at:
        env["MEMDECK_CRASH_AT"] = crash_at
    return env


def run_killed(argv: list[str], plan: Plan, timeout: float = 120) -> int:
    """Run the operation as the plan says; its exit code (-9: killed)."""
    if plan.crash_at:
        return subprocess.run(argv, capture_output=True, text=True, env=_env(plan.crash_at),
                              timeout=timeout).returncode
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=_env(None), start_new_session=True)
    try:
        proc.wait(timeout=plan.delay)
    except subprocess.TimeoutExpired:
        pass
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # memdeck and any git it started
        except ProcessLookupError:
            pass
    return proc.wait(timeout=timeout)


def next_argv(t: Template, home: Path, command: str) -> list[str]:
    args = ["show", t.show_id] if command == "show" else [command]
    return memdeck_argv(home, *args)


def run_trial(t: Template, plan: Plan, work: Path, keep: Path | None = None) -> Result:
    """One trial in its own copy of the operation's home under `work`."""
    start = time.monotonic()
    trial_dir = Path(tempfile.mkdtemp(prefix=f"{plan.index:04d}-{plan.op}-", dir=work))
    home = copy_home(t.home, trial_dir / "home")
    if plan.mounted:
        mount_memory_folder(home, trial_dir / "volume")
    try:
        return _trial(t, plan, trial_dir, home, keep, start)
    finally:
        if plan.mounted:
            subprocess.run(["umount", "-l", str(home / "memories")], capture_output=True)
        shutil.rmtree(trial_dir, ignore_errors=True)


def _trial(t: Template, plan: Plan, trial_dir: Path, home: Path, keep: Path | None,
           start: float) -> Result:
    code = run_killed(t.argv(home), plan)
    r = Result(plan, killed=code == -signal.SIGKILL)
    seen = {"after the kill": checks.seen_now(t, home)}
    if plan.mounted:
        # switched file by file: right after the kill each file is old or new; the folder
        # as a whole is old or new once the next command has finished the change
        per_file = checks.check_each_file_old_or_new(t, home)
        if per_file:
            r.failures["old_or_new"] = f"after the kill: {per_file}"
        if not seen["after the kill"][1] and seen["after the kill"][0] != t.old:
            r.half_switched = True
        seen = {}
    nxt = subprocess.run(next_argv(t, spelled(home, plan.index), plan.next_command),
                         capture_output=True, text=True, env=_env(None), timeout=120)
    if nxt.returncode != 0:
        r.failures["next"] = f"`{plan.next_command}` exited {nxt.returncode}: " \
                             f"{nxt.stderr.strip()[-300:]}"
    seen["after the next command"] = checks.seen_now(t, home)
    for name, fail in (("old_or_new", r.failures.get("old_or_new")
                        or checks.check_old_or_new(t, home, seen)),
                       ("rows", checks.check_rows(t, home)),
                       ("history", checks.check_history(t, home, seen)),
                       ("leftovers", checks.check_leftovers(home)),
                       ("integrity", checks.check_integrity(home))):
        if fail:
            r.failures[name] = fail
    if not r.killed and not plan.crash_at and code != 0:
        r.failures.setdefault("next", f"the operation itself exited {code} unkilled")
    if r.failures:
        r.home = home
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            r.home = Path(shutil.copytree(trial_dir, keep / trial_dir.name, symlinks=True))
    r.seconds = time.monotonic() - start
    return r


@contextmanager
def cpu_load(on: bool) -> Iterator[int]:
    """One busy loop per core for the duration (ended by pid: only the ones started here)."""
    procs = []
    if on:
        for _ in range(os.cpu_count() or 1):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
    try:
        yield len(procs)
    finally:
        for p in procs:
            p.kill()
            p.wait()


def build_templates(ops: list[str], work: Path) -> dict[str, Template]:
    """One after the other: the engines that prepare a home hold SQLite connections until
    collected, and closing one deletes its WAL file, which must not happen while another
    thread copies that home (build_template collects before it copies)."""
    base = base_home(work / "base" / "home")
    gc.collect()
    return {op: build_template(op, work / f"template-{op}", base) for op in ops}


def run_trials(templates: dict[str, Template], plans: list[Plan], work: Path, jobs: int,
               keep: Path | None = None, progress: bool = False) -> list[Result]:
    results: list[Result] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for r in pool.map(lambda p: run_trial(templates[p.op], p, work, keep), plans):
            results.append(r)
            if progress and len(results) % 25 == 0:
                bad = sum(1 for x in results if x.failures)
                print(f"  … {len(results)}/{len(plans)} trials, {bad} failed", flush=True)
    return results


def table(results: list[Result], ops: list[str]) -> str:
    head = ["op", "trials", "killed", "held"] + [checks.CHECK_TITLES[c] for c in checks.CHECKS]
    rows = []
    for op in [*ops, "total"]:
        rs = [r for r in results if op in ("total", r.plan.op)]
        rows.append([op, str(len(rs)), str(sum(r.killed for r in rs)),
                     str(sum(not r.failures for r in rs))]
                    + [str(sum(c in r.failures for r in rs)) for c in checks.CHECKS])
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    line = lambda cells: "  ".join(c.rjust(w) if i else c.ljust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, rows)])


def report_failures(results: list[Result], seed: int) -> str:
    out = []
    for r in results:
        if not r.failures:
            continue
        p = r.plan
        out.append(f"trial {p.index} {p.op} ({p.how}, next `{p.next_command}`, seed {seed}, "
                   f"{'killed' if r.killed else 'ran to its end'}), home {r.home}:")
        out += [f"    {c}: {why}" for c, why in r.failures.items()]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from soak_race import paused_races, paused_summary, race_trial

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--no-load", action="store_true", help="no busy loops on the cores")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--no-steps", action="store_true", help="random kills only")
    ap.add_argument("--no-mounts", action="store_true",
                    help="no trials on a bind-mounted memory folder (they need root)")
    ap.add_argument("--race-rounds", type=int, default=3, help="0: no race trial")
    ap.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "memdeck-soak",
                    help="where the homes of failed trials are kept")
    args = ap.parse_args(argv)
    ops = [o for o in args.ops.split(",") if o]
    unknown = set(ops) - set(OPS)
    if unknown:
        ap.error(f"unknown operations {sorted(unknown)}; choose from {', '.join(OPS)}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memdeck-soak-") as tmp, \
            cpu_load(not args.no_load) as busy:
        work = Path(tmp)
        print(f"soak: {args.trials} trials, seed {args.seed}, {args.jobs} job(s), "
              f"{busy} busy loop(s) on {os.cpu_count()} core(s)", flush=True)
        templates = build_templates(ops, work)
        for op, t in templates.items():
            reached = ", ".join(f"{s}×{n}" for s, n in t.reaches.items())
            print(f"  {op}: clean run {t.duration:.2f}s, reaches {reached}")
        mounts = not args.no_mounts and can_mount()
        plans = make_plans(templates, args.trials, args.seed, steps=not args.no_steps,
                           mounts=mounts)
        print(f"  every 4th trial on a bind-mounted memory folder: {'yes' if mounts else 'no'}"
              "; the next command names the home as it is, through a symlink or with ..")
        trials_dir = work / "trials"
        trials_dir.mkdir()
        results = run_trials(templates, plans, trials_dir, args.jobs, args.keep,
                             progress=True)
        races = [race_trial(work / f"race-{kind}", work / "base" / "home",
                            rounds=args.race_rounds, seed=args.seed, mode=kind)
                 for kind in ("steady", "bursts", "held-open")] if args.race_rounds else []
        paused = paused_races(templates, work / "paused") if args.race_rounds else []
        for p in paused:
            if not p.held:
                p.home = Path(shutil.copytree(p.home.parent, args.keep / p.home.parent.name,
                                              symlinks=True, dirs_exist_ok=True)) / "home"
    took = time.monotonic() - started
    print()
    print(table(results, ops))
    steps = sum(1 for r in results if r.plan.crash_at)
    print(f"\n{len(results)} trials ({steps} at named steps, {len(results) - steps} random), "
          f"{sum(not r.failures for r in results)} held, {took:.0f} s")
    mounted = [r for r in results if r.plan.mounted]
    if mounted:
        print(f"{len(mounted)} on a bind-mounted memory folder: "
              f"{sum(r.half_switched for r in mounted)} seen half switched right after the "
              "kill (each file old or new), every one old or new after the next command")
    failed = report_failures(results, args.seed)
    if failed:
        print("\nfailures:\n" + failed)
    for race in races:
        print("\n" + race.summary())
    if paused:
        print("\n" + paused_summary(paused))
    held = all(r.held for r in races) and all(p.held for p in paused)
    return 1 if failed or not held else 0


if __name__ == "__main__":
    sys.exit(main())
