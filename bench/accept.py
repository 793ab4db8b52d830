#!/usr/bin/env python3
"""Benchmark accepting a proposal that carries 256 rollout summaries (issue 3: <= 1 s).

Builds a home of N eligible sessions (copies of a real fixture rollout), extracts them with
the offline backend, consolidates into a proposal, then times `Engine.accept`: the lease,
the state check, building the new root with Codex's baseline commit, the atomic swap, the
pipeline DB updates and the history commit.

    .venv/bin/python bench/accept.py [--sessions 256]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from pipeline import build_home  # noqa: E402

from memdeck.engine import Engine  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=256)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "codex-home"
        build_home(home, args.sessions)
        eng = Engine.open(home)
        report = eng.extract(backend="offline")
        proposal = eng.consolidate()
        assert proposal is not None
        summaries = sum(1 for f in proposal.files if f["path"].startswith("rollout_summaries/"))
        t0 = time.perf_counter()
        eng.accept(proposal.id)
        wall = time.perf_counter() - t0
    print(f"accept a proposal with {summaries} rollout summaries "
          f"({report.count('extracted')} raw memories): {wall:.3f} s (target <= 1 s) "
          f"{'PASS' if wall <= 1 else 'MISS'}")
    print(json.dumps({"RESULT": {"accept_s": round(wall, 3), "summaries": summaries}}))


if __name__ == "__main__":
    main()
