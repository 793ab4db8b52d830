#!/usr/bin/env python3
"""Benchmark the model client's share of phase 1: N phase-1-shaped calls through `extract_json`.

A local OpenAI-compatible server (tests/llm_server.py, 127.0.0.1 only) answers every request
after a fixed latency (default 200 ms) with a valid stage-one JSON reply. The calls go through
one `openai` client built by `build_client`, from a ThreadPoolExecutor of 8 workers, as phase 1
runs them. Figures:

  * wall time for N calls and its ratio to the ideal N x latency / concurrency
    (the whole pipeline's target is <= 1.3x; this isolates the client's part of it);
  * the most requests the server saw at once (should equal the concurrency);
  * the client's own cost per call with no server latency, serially (CPU per call);
  * the one-off cost of importing openai and building the client.

Run it with the project's venv: `.venv/bin/python bench/pipeline_calls.py`. It is a benchmark,
not a test: the exit code is 0 even when the target is missed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from llm_server import LLMServer, json_reply  # noqa: E402

from memdeck.engine.backends.openai_client import (  # noqa: E402
    STAGE_ONE_OUTPUT_SCHEMA,
    BackendConfig,
    ModelReply,
    build_client,
    extract_json,
)

TARGET = 1.3


def phase1_like_input(kb: int, i: int) -> tuple[str, str]:
    """A system prompt of ~6 KB and a rollout-sized user message of `kb` KB, distinct per call."""
    system = "You extract durable memories from one coding session.\n" * 110
    item = {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": f"session {i}: run `make test` " * 8}]}
    rollout = json.dumps([item] * max(1, kb * 1024 // len(json.dumps(item))))
    user = f"rollout_path: /tmp/rollout-{i}.jsonl\nrollout_cwd: /src/app\n\n{rollout}"
    return system, user


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.2, help="server seconds per request")
    ap.add_argument("--input-kb", type=int, default=32, help="user message size per call")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the median is reported")
    a = ap.parse_args()

    reply = {"rollout_summary": "Fixed the flaky parse test. " * 20, "rollout_slug": "flaky-parse",
             "raw_memory": "- Always run `make test` before pushing.\n" * 40}
    server = LLMServer(handler=lambda body: json_reply(reply)).start()
    try:
        cfg = BackendConfig(base_url=server.url, api_key="bench-key", extract_model="bench-x",
                            consolidation_model="bench-c", timeout=30.0, max_retries=2)
        t0 = time.perf_counter()
        client = build_client(cfg)
        build_s = time.perf_counter() - t0
        inputs = [phase1_like_input(a.input_kb, i) for i in range(a.calls)]

        def call(i: int) -> ModelReply:
            system, user = inputs[i]
            return extract_json(client, cfg, system=system, user=user,
                                schema=STAGE_ONE_OUTPUT_SCHEMA, schema_name="stage_one_output")

        for i in range(min(5, a.calls)):  # warm the connection pool and the code paths
            call(i)
        serial = []
        for i in range(min(20, a.calls)):
            t = time.perf_counter()
            call(i)
            serial.append(time.perf_counter() - t)
        overhead_ms = statistics.median(serial) * 1000

        server.latency = a.latency
        walls, durations, in_flight = [], [], []
        for _ in range(a.repeat):
            server.reset_counters()
            t = time.perf_counter()
            with ThreadPoolExecutor(a.concurrency) as pool:
                replies = list(pool.map(call, range(a.calls)))
            walls.append(time.perf_counter() - t)
            durations += [r.duration_ms for r in replies]
            in_flight.append(server.max_in_flight)
            assert all(r.parsed["rollout_slug"] == "flaky-parse" for r in replies)
            assert len(server.chat_requests()) == a.calls and server.unscripted == 0
    finally:
        server.stop()

    ideal = a.calls * a.latency / a.concurrency
    wall = statistics.median(walls)
    ratio = wall / ideal
    rounds = -(-a.calls // a.concurrency) * a.latency  # the best a pool of workers can do
    durations.sort()
    p95 = durations[int(len(durations) * 0.95) - 1]
    print(f"{a.calls} phase-1 calls, concurrency {a.concurrency}, {a.latency * 1000:.0f} ms "
          f"server latency, {a.input_kb} KB input each, median of {a.repeat} runs")
    print(f"  wall time         {wall:.3f} s  (runs: {', '.join(f'{w:.3f}' for w in walls)})")
    print(f"  ideal             {ideal:.3f} s  ({a.calls} x {a.latency:g} s / {a.concurrency}); "
          f"whole rounds: {rounds:.3f} s ({-(-a.calls // a.concurrency)} x {a.latency:g} s)")
    print(f"  ratio             {ratio:.3f}x  target <= {TARGET}x for the whole pipeline: "
          f"{'PASS' if ratio <= TARGET else 'MISS'}")
    print(f"  max in flight     {max(in_flight)}")
    print(f"  per-call duration p50 {durations[len(durations) // 2]} ms, p95 {p95} ms")
    print(f"  client cost/call  {overhead_ms:.2f} ms serial, no server latency")
    print(f"  import + build    {build_s:.3f} s (once per process)")
    print()
    for k, v in [("calls", a.calls), ("concurrency", a.concurrency),
                 ("latency_s", a.latency), ("wall_s", f"{wall:.4f}"), ("ideal_s", f"{ideal:.4f}"),
                 ("ratio", f"{ratio:.4f}"), ("max_in_flight", max(in_flight)),
                 ("p50_ms", durations[len(durations) // 2]), ("p95_ms", p95),
                 ("client_ms_per_call", f"{overhead_ms:.3f}"), ("build_client_s", f"{build_s:.4f}"),
                 ("pass", ratio <= TARGET)]:
        print(f"RESULT {k}={v}")


if __name__ == "__main__":
    main()
