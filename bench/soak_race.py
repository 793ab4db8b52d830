"""The soak's race trial (issue 12): an outside writer appends a unique numbered line to
memories/MEMORY.md every 2–5 ms (open, append, close, as `echo >>` does) while accept,
restore and reset run, each several times; afterwards every line it wrote must be in the
live MEMORY.md or in some commit of memdeck's history.

Each round: restore the first history commit (which clears Codex's selection, so there is
something to consolidate), consolidate, accept, reset, and restore-backup of the reset's
backup (so the next round has rows again). A change the writer's lines make stale is
refused; that is allowed, losing a line is not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from crash_run import leftovers, run_memdeck
from soak_checks import _git, check_integrity, history_commits
from soak_homes import Template, copy_home

WRITER = r"""
import json, os, random, sys, time
path, log, stop = sys.argv[1:4]
rng, mode = random.Random(int(sys.argv[4])), sys.argv[5]
written, failed, n = [], 0, 0
quiet_at = time.monotonic() + rng.uniform(0.02, 0.2)
while not os.path.exists(stop):
    if mode == "bursts" and time.monotonic() > quiet_at:  # a pause: some changes get through
        time.sleep(rng.uniform(0.0, 0.4))
        quiet_at = time.monotonic() + rng.uniform(0.02, 0.2)
    try:
        with open(path, "a", encoding="utf-8") as f:
            # "held-open": the file stays open for 20-300 ms of lines (a logger, `tee -a`)
            until = time.monotonic() + (rng.uniform(0.02, 0.3) if mode == "held-open" else 0)
            while True:
                n += 1
                f.write(f"- soak race line {n} written from outside\n")
                f.flush()
                written.append(n)
                if time.monotonic() >= until or os.path.exists(stop):
                    break
                time.sleep(rng.uniform(0.002, 0.005))
    except OSError:
        failed += 1  # the folder was not there at that instant: nothing was written
    time.sleep(rng.uniform(0.002, 0.005))
with open(log, "w") as f:
    json.dump({"written": written, "failed": failed}, f)
"""


@dataclass
class RaceResult:
    written: int = 0
    found: int = 0
    open_failed: int = 0
    missing: list[int] = field(default_factory=list)
    commands: list[tuple[str, int, str]] = field(default_factory=list)  # (command, code, why)
    problems: list[str] = field(default_factory=list)  # leftovers, fsck, the next command
    mode: str = "steady"

    @property
    def held(self) -> bool:
        return not self.missing and not self.problems and self.written > 0

    def summary(self) -> str:
        runs: dict[str, list[int]] = {}
        for cmd, code, _ in self.commands:
            runs.setdefault(cmd, []).append(code)
        ran = ", ".join(f"{cmd} {sum(c == 0 for c in codes)}/{len(codes)} done"
                        for cmd, codes in runs.items())
        how = {"bursts": "in bursts", "held-open": "holding the file open"}.get(self.mode,
                                                                             "steadily")
        lines = [f"race ({how}): {self.written} lines written from outside, {self.found} found in "
                 f"MEMORY.md or history, {len(self.missing)} lost"
                 f"{f' (opens refused: {self.open_failed})' if self.open_failed else ''}",
                 f"  while: {ran}"]
        refused = sorted({why for _, code, why in self.commands if code and why})
        lines += [f"  refused: {why}" for why in refused[:4]]
        if self.missing:
            lines.append(f"  lost lines: {self.missing[:20]}")
        lines += [f"  problem: {p}" for p in self.problems]
        return "\n".join(lines)


def _lines_in_history(home: Path) -> set[str]:
    gitdir = home / "memdeck" / "history.git"
    out: set[str] = set()
    for c in history_commits(gitdir):
        r = _git(gitdir, "show", f"{c}:MEMORY.md")
        if r.returncode == 0:
            out.update(r.stdout.splitlines())
    return out


def _line_number(line: str) -> int | None:
    prefix = "- soak race line "
    if line.startswith(prefix) and line.endswith(" written from outside"):
        return int(line[len(prefix):].split()[0])
    return None


def race_trial(work: Path, base: Path, rounds: int = 3, seed: int = 1,
               mode: str = "steady") -> RaceResult:
    """Run the race on a copy of `base` (a home after one accepted consolidation). Modes:
    "steady" (open, append, close every 2–5 ms), "bursts" (the same for 20–200 ms, then a
    rest of up to 400 ms, so some changes run between bursts and some in the middle of one),
    "held-open" (the file kept open for 20–300 ms of lines at a time, as a logger or `tee -a`
    holds it, across the changes' switches)."""
    work.mkdir(parents=True, exist_ok=True)
    home = copy_home(base, work / "home")
    first = _git(home / "memdeck" / "history.git", "rev-list", "--max-parents=0",
                 "HEAD").stdout.split()[-1]
    live, log, stop = home / "memories" / "MEMORY.md", work / "writer.json", work / "stop"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(live), str(log), str(stop),
                               str(seed), mode])
    result = RaceResult(mode=mode)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        r = run_memdeck(home, *args)
        why = r.stderr.strip().splitlines()[-1] if r.returncode and r.stderr.strip() else ""
        result.commands.append((args[0], r.returncode, why[:160]))
        return r

    try:
        time.sleep(0.05)
        for _ in range(rounds):
            run("restore", first)
            made = run_memdeck(home, "consolidate", "--json")
            proposal = json.loads(made.stdout) if made.returncode == 0 else None
            if proposal:
                run("accept", proposal["id"])
            run("reset", "--yes")
            backups = json.loads(run_memdeck(home, "backups", "--json").stdout or "[]")
            reset_backup = next((b["id"] for b in backups
                                 if b.get("reason") == "before reset"), None)
            if reset_backup:
                run("restore-backup", reset_backup)
    finally:
        stop.touch()
        writer.wait(timeout=60)
    data = json.loads(log.read_text())
    written = set(data["written"])
    result.written, result.open_failed = len(written), data["failed"]
    lines = set(live.read_text(encoding="utf-8").splitlines()) if live.is_file() else set()
    lines |= _lines_in_history(home)
    found = {n for n in map(_line_number, lines) if n is not None}
    result.found = len(written & found)
    result.missing = sorted(written - found)
    nxt = run_memdeck(home, "history")
    if nxt.returncode != 0:
        result.problems.append(f"`history` after the race: {nxt.stderr.strip()[-200:]}")
    if leftovers(home):
        result.problems.append(f"left behind: {leftovers(home)[:5]}")
    bad = check_integrity(home)
    if bad:
        result.problems.append(bad)
    return result


# -- the race at every named step: one line written exactly there --------------------------
PAUSED_LINE = "- soak: written by hand while memdeck was at {where}\n"


@dataclass
class PausedRace:
    op: str
    where: str  # `<step>@<n>`
    code: int
    in_live: bool
    in_history: bool
    stderr: str
    home: Path

    @property
    def held(self) -> bool:
        return self.in_live or self.in_history


def paused_race(t: Template, where: str, work: Path) -> PausedRace:
    """Run `t.op` on a copy of its home, pausing at `where` (`<step>@<n>`: the n-th time
    the step is reached) to append one line to MEMORY.md as `echo >>` would; then look for
    the line in the live MEMORY.md and in history."""
    step, _, nth = where.partition("@")
    home = copy_home(t.home, work / "home")
    pause_dir = work / "pause"
    pause_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDECK_")}
    env |= {"MEMDECK_PAUSE_AT": step, "MEMDECK_PAUSE_DIR": str(pause_dir)}
    line = PAUSED_LINE.format(where=where)
    live = home / "memories" / "MEMORY.md"
    proc = subprocess.Popen(t.argv(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env)
    seen, deadline = 0, time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        marker = pause_dir / step
        if marker.exists():
            seen += 1
            if seen == int(nth or 1):
                with open(live, "a", encoding="utf-8") as f:
                    f.write(line)
            marker.unlink()
        time.sleep(0.002)
    _, err = proc.communicate(timeout=120)
    text = live.read_text(encoding="utf-8") if live.is_file() else ""
    return PausedRace(t.op, where, proc.returncode, line in text,
                      line.strip() in _lines_in_history(home), err.strip()[-200:], home)


def paused_races(templates: dict[str, Template], work: Path,
                 ops: tuple[str, ...] | None = None) -> list[PausedRace]:
    """`paused_race` at every (step, n) of every operation in `ops` (default: all)."""
    out = []
    for op in ops or tuple(templates):
        for where in templates[op].step_kills():
            d = work / f"{op}-{where.replace('@', '-')}"
            d.mkdir(parents=True)
            out.append(paused_race(templates[op], where, d))
    return out


def paused_summary(races: list[PausedRace]) -> str:
    held = sum(r.held for r in races)
    lines = [f"race at every named step: {len(races)} lines written, {held} found in "
             "MEMORY.md or history"]
    for r in races:
        if not r.held:
            lines.append(f"  lost: {r.op} paused at {r.where} (exit {r.code}"
                         f"{': ' + r.stderr if r.code else ''}): the line is in neither the "
                         f"live MEMORY.md nor history; home {r.home}")
    return "\n".join(lines)
