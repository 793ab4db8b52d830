"""A copy of the synthetic home that an extract + consolidate run may change (bench/tui.py,
"back to Sessions after a run"): the same rollouts, hard-linked (a run only reads them; Codex's
and memdeck's databases, memories/ and config.toml are the copy's own), with the `[memories]`
time rules chosen so that about `want` sessions are eligible for extraction today.

Rebuilt for every bench run: the run it serves changes it (raw memories, a proposal)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from memdeck.engine.clock import SystemClock  # the engine's one clock

DAY = 86400
MAX_AGE_DAYS = 30  # max_unused_days' default: older sessions are not chosen for extraction


def _listing(home: Path, cmd: list[str], env: dict[str, str]) -> list[dict]:
    out = subprocess.run([*cmd, "sessions", "--json", "--home", str(home)], env=env,
                         capture_output=True, text=True, check=True)
    rows: list[dict] = json.loads(out.stdout)
    return rows


def _config(age_days: int, idle_hours: int) -> str:
    return ("[features]\nmemories = true\n\n[memories]\n"
            f"max_rollout_age_days = {age_days}\nmin_rollout_idle_hours = {idle_hours}\n")


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def choose_rules(rows: list[dict], want: int, now: float) -> tuple[int, int]:
    """(max_rollout_age_days, min_rollout_idle_hours) making about `want` of the rows listed
    with a 30-day window eligible: the fewest days reaching `want`, then the most idle hours
    (1..48) that keep at least `want`."""
    idle = sorted(now - _epoch(r["updated_at"]) for r in rows
                  if r["status"] in ("eligible", "too_recent") and r.get("updated_at"))
    days = next((d for d in range(1, MAX_AGE_DAYS + 1)
                 if sum(6 * 3600 <= x <= d * DAY for x in idle) >= want), MAX_AGE_DAYS)
    hours = max((h for h in range(1, 49) if sum(h * 3600 <= x <= days * DAY for x in idle)
                 >= want), default=6)
    return days, hours


def build_run_home(source: Path, want: int, cmd: list[str], env: dict[str, str],
                   log) -> tuple[Path, int, str]:  # noqa: ANN001
    """(the copy, how many sessions it lists as eligible, the rules chosen)."""
    dest = source.with_name(source.name + f"-run{want}")
    if dest.exists():
        if not (dest / ".memdeck-bench-run").exists():
            raise SystemExit(f"bench: {dest} exists and is not a bench run home; remove it")
        shutil.rmtree(dest)
    t0 = time.perf_counter()
    for dirpath, _, files in os.walk(source / "sessions"):
        rel = Path(dirpath).relative_to(source)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            os.link(Path(dirpath) / f, dest / rel / f)
    (dest / ".memdeck-bench-run").write_text(f"hard links to {source}'s rollouts\n")
    (dest / "config.toml").write_text(_config(MAX_AGE_DAYS, 6))
    log(f"run home: {dest} (rollouts hard-linked, {time.perf_counter() - t0:.1f} s); "
        "indexing it")
    rows = _listing(dest, cmd, env)
    days, hours = choose_rules(rows, want, SystemClock().now())
    (dest / "config.toml").write_text(_config(days, hours))
    eligible = sum(r["status"] == "eligible" for r in _listing(dest, cmd, env))
    rules = f"max_rollout_age_days = {days}, min_rollout_idle_hours = {hours}"
    log(f"run home: {eligible} eligible sessions ({rules})")
    return dest, eligible, rules
