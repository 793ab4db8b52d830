#!/usr/bin/env python3
"""Benchmark phase 1 end to end: N sessions through `Engine.extract` with the openai backend.

A synthetic Codex home of N eligible sessions (copies of a real fixture rollout with their
own thread ids, idle 8 h) is extracted against the local OpenAI-compatible test server
(tests/llm_server.py, 127.0.0.1 only) answering after a fixed latency. Everything phase 1
does is in the figure: selection, Codex's claims and leases in a real memories_1.sqlite,
reading and filtering each rollout, redaction, the model calls (8 at a time), redaction of
the replies, the stage-1 writes and the call log.

Target (issue 3): wall time <= 1.3x the ideal N x latency / 8.

    .venv/bin/python bench/pipeline.py [--sessions 100] [--latency 0.2]

A benchmark, not a test: it exits 0 even when the target is missed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from llm_server import LLMServer, json_reply  # noqa: E402

from memdeck.engine import Engine  # noqa: E402
from memdeck.engine.clock import SystemClock  # noqa: E402
from memdeck.engine.codex.schema import create_memories_db  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "rollouts" / "cli-preferences.jsonl"
OLD_ID = "01a23054-a1fc-7969-acf0-6947af085e83"
# the home has no memories/ folder, so it runs memory v2 as Codex 0.169 does: two fields
REPLY = {"rollout_summary": "# Checkout tests\n\n## Task 1: fix rounding, success\n",
         "rollout_slug": "checkout_tests"}


def build_home(root: Path, n: int) -> None:
    day = root / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    text = FIXTURE.read_text()
    idle = SystemClock().now() - 8 * 3600
    for i in range(n):
        tid = str(uuid.UUID(f"01a23054-a1fc-7969-acf0-{i:012x}"))
        p = day / f"rollout-2026-12-01T06-39-42-{tid}.jsonl"
        p.write_text(text.replace(OLD_ID, tid))
        os.utime(p, (idle, idle))
    (root / "config.toml").write_text("[features]\nmemories = true\n")
    create_memories_db(root / "memories_1.sqlite")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--latency", type=float, default=0.2)
    args = ap.parse_args()
    server = LLMServer(latency=args.latency, handler=lambda body: json_reply(REPLY)).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp) / "codex-home"
            build_home(home, args.sessions)
            engine = Engine.open(home)
            engine.config_set("memdeck.base_url", server.url)
            engine.sessions()  # index first: the figure is phase 1, not the cold index
            import openai  # noqa: F401  - a one-off import, paid by any run that uses it

            t0 = time.perf_counter()
            report = engine.extract(backend="openai")
            wall = time.perf_counter() - t0
    finally:
        server.stop()
    rounds = math.ceil(args.sessions / 8)
    ideal = args.sessions * args.latency / 8
    extracted = report.count("extracted")
    print(f"phase 1 over {args.sessions} sessions, {args.latency * 1000:.0f} ms per call, "
          f"concurrency 8")
    print(f"  extracted {extracted}, failed {report.count('failed')}, "
          f"skipped {report.count('skipped')}")
    print(f"  wall {wall:.2f} s; ideal {ideal:.2f} s ({rounds} rounds: "
          f"{rounds * args.latency:.2f} s); ratio {wall / ideal:.2f}x (target <= 1.3x) "
          f"{'PASS' if wall / ideal <= 1.3 and extracted == args.sessions else 'MISS'}")
    print(f"  most requests in flight at once: {server.max_in_flight}")
    print(json.dumps({"RESULT": {"wall_s": round(wall, 3), "ideal_s": ideal,
                                 "ratio": round(wall / ideal, 3),
                                 "max_in_flight": server.max_in_flight,
                                 "extracted": extracted}}))


if __name__ == "__main__":
    main()
