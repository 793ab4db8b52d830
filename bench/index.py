#!/usr/bin/env python3
"""Benchmark memdeck's session index on a large synthetic Codex home.

Builds (or reuses) a deterministic Codex home of N rollout files with realistic sizes and line
mix, then times the real `memdeck sessions --json` command as a subprocess:

  * a native reference, `grep -c '"type"'` over the same files (page cache warmed first);
  * a cold run (memdeck's own index dropped) and its ratio to grep      (target <= 8x);
  * a warm run, nothing changed, best of 3                              (target <= 0.25 s);
  * after appending one complete line to 100 files: the whole command, and the re-index
    alone measured in-process with `Engine.open(H).refresh()`          (target <= 0.2 s);
  * peak RSS of the cold run (largest single process and the process-tree sum);
  * start-up on an empty home, and which heavy modules the listing path imports
    (openai, textual and GitPython must not be).

Run it with the project's venv Python, e.g. `.venv/bin/python bench/index.py`. It is a
benchmark, not a test: the exit code is 0 even when a target is missed.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import calendar
import json
import math
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from memdeck.engine.clock import SystemClock  # the engine's one clock

GEN_VERSION = 2
MARKER = ".memdeck-bench.json"
DEFAULT_SESSIONS = 10_000
DEFAULT_SEED = 1
DEFAULT_END_DATE = "2026-12-01"
DAYS = 60
MEDIAN_BYTES = 55_000  # the planned size; turns overshoot it a little (~60 KB real median)
SIGMA = 0.95  # lognormal shape: with the giant files, ~100 KB mean, ~1 GB per 10,000 files
MIN_BYTES = 12_000  # session_meta with its base instructions and the preamble already weigh this
GIANT_EVERY = 2_000  # one file of 3-10 MB per this many sessions
GIANT_RANGE = (3_000_000, 10_000_000)
APPEND_FILES = 100

TARGET_COLD_RATIO = 8.0
TARGET_WARM_S = 0.25
TARGET_APPEND_S = 0.2
FORBIDDEN_MODULES = ("openai", "textual", "git")
HEAVY_MODULES = ("openai", "textual", "git", "rich", "sqlite_utils", "pydantic", "httpx",
                 "httpx2", "anyio", "watchfiles", "pygments", "tomlkit", "zstandard",
                 "simdjson", "multiprocessing", "concurrent.futures", "sqlite3", "json",
                 "dataclasses", "typing")

ROOT = Path(__file__).resolve().parent.parent


# ======================================================================================
# synthetic Codex home
# ======================================================================================

WORDS = (
    "the a to of and in for with on that this is it be we as not by from or at an are "
    "test tests failing fix bug parser config module function class method return value "
    "error warning build cargo pytest ruff lint type types check import export path file "
    "files folder index cache schema database query migration table column row session "
    "thread memory memories rollout output input stream buffer line lines json toml yaml "
    "widget checkout billing invoice payment currency rounding decimal float timeout retry "
    "client server request response header token tokens budget limit rate async await "
    "lock mutex race flaky deterministic seed random sample benchmark latency throughput "
    "refactor rename extract inline split merge rebase branch commit diff patch review "
    "docs readme changelog release version bump deploy staging production cluster pod "
    "container image docker compose kubernetes terraform plan apply state backend frontend "
    "component props hook render layout style theme dark light color font spacing grid "
    "please can you could make sure keep small clean simple fast slow should must never "
    "always only also then after before when where why how what which because so but"
).split()
PROJECTS = ("widget", "shop", "infra", "api", "webapp", "cli-tools", "data-pipeline", "ml-lab",
            "docs-site", "mobile", "payments", "search", "auth-service", "monorepo")
MODELS = ("gpt-5.4", "gpt-5.4", "gpt-5.4", "gpt-5.3-codex", "gpt-5.4-mini")
EFFORTS = ("medium", "medium", "high", "low", "xhigh")
CLI_VERSIONS = ("0.148.0", "0.149.1", "0.150.0", "0.151.0", "0.152.2")
SOURCES = ((0.88, '"cli"', "user", "codex_cli_rs"),
           (0.05, '"vscode"', "user", "codex_vscode"),
           (0.04, '"exec"', "user", "codex_exec"),
           (0.03, '{"subagent":"review"}', "subagent", "codex_cli_rs"))
EXTS = ("py", "rs", "ts", "tsx", "go", "md", "toml", "json", "sql", "sh")
DIRS = ("src", "tests", "lib", "app", "crates/core/src", "pkg", "scripts", "docs", "web/src")
CMDS = ("rg -n \"{w}\" {d}", "sed -n '{a},{b}p' {p}", "cat {p}", "ls -la {d}",
        "pytest -q tests/test_{w}.py", "cargo test {w}", "make check-quick", "git status --short",
        "git diff --stat", "ruff check {d}", "npm test -- {w}", "go test ./...",
        "python -m {w} --help", "grep -rn '{w}' {d} | head -50")


def _esc(text: str) -> str:
    """`text` as the inside of a JSON string (raw UTF-8, like serde_json)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


@dataclass
class Pools:
    """Pre-escaped text that lines are cut from (cheap slicing instead of per-line encoding)."""

    out_blob: str
    out_offsets: list[int]
    patch_blob: str
    patch_offsets: list[int]
    b64: str
    base_instructions: str
    developer_text: str
    agents_texts: list[str]
    sentences: list[str]  # escaped

    def cut(self, rng: random.Random, length: int, patch: bool = False) -> str:
        blob, offs = (self.patch_blob, self.patch_offsets) if patch else (
            self.out_blob, self.out_offsets)
        length = max(1, min(length, len(blob) // 2))
        hi = bisect.bisect_right(offs, len(blob) - length) - 1
        i = rng.randint(0, max(0, hi))
        start = offs[i]
        j = bisect.bisect_left(offs, start + length)
        end = offs[min(j, len(offs) - 1)]
        return blob[start:end]

    def enc(self, rng: random.Random, length: int) -> str:
        length -= length % 4
        start = rng.randrange(0, (len(self.b64) - length) // 4) * 4
        return "gAAAAAB" + self.b64[start : start + length]

    def sentence(self, rng: random.Random, n: int = 1) -> str:
        return " ".join(rng.choice(self.sentences) for _ in range(n))


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n))


def _path(rng: random.Random) -> str:
    return f"{rng.choice(DIRS)}/{rng.choice(WORDS)}_{rng.choice(WORDS)}.{rng.choice(EXTS)}"


def _log_line(rng: random.Random) -> str:
    k = rng.randrange(14)
    w = rng.choice(WORDS)
    n = rng.randint(1, 999)
    if k == 0:
        return (f"{_path(rng)}:{n}:{rng.randint(1, 80)}: E{rng.randint(100, 999)} "
                f"{_words(rng, rng.randint(3, 9))}")
    if k == 1:
        return (f"tests/test_{w}.py::test_{rng.choice(WORDS)}_{rng.choice(WORDS)} "
                f"{rng.choice(('PASSED', 'PASSED', 'PASSED', 'FAILED', 'SKIPPED'))} "
                f"[{rng.randint(0, 100):3d}%]")
    if k == 2:
        return f"    at {w.title()}.{rng.choice(WORDS)} ({_path(rng)}:{n}:{rng.randint(1, 80)})"
    if k == 3:
        return (f"-rw-r--r--  1 dev dev {rng.randint(10, 99999):6d} Nov {rng.randint(1, 30):2d} "
                f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {_path(rng)}")
    if k == 4:
        return (f"    return self._{w}(\"{rng.choice(WORDS)}\", {n})  "
                f"# {_words(rng, rng.randint(2, 8))}")
    if k == 5:
        return (f"error[E0{rng.randint(100, 799)}]: mismatched types → expected `{w.title()}`, "
                f"found `Option<{rng.choice(WORDS).title()}>`")
    if k == 6:
        return f"  ✓ {w} {_words(rng, 3)} ({n} ms)"
    if k == 7:
        return (f"   Compiling {w}-{rng.choice(WORDS)} v0.{rng.randint(1, 40)}.{rng.randint(0, 9)}"
                f" (/home/dev/src/{rng.choice(PROJECTS)})")
    if k == 8:
        return f"C:\\Users\\dev\\src\\{w}\\{rng.choice(WORDS)}.ts\t{n}\t\"{_words(rng, 2)}\""
    if k == 9:
        return f"{n:5d}\t    {'    ' * rng.randint(0, 3)}{w} = {rng.choice(WORDS)}({n}, '{w}')"
    if k == 10:
        return json.dumps({"level": rng.choice(("info", "warn", "debug")), "msg": _words(rng, 5),
                           "ts": 1764500000 + n, "span": {"name": w}})
    if k == 11:
        return f"{_words(rng, rng.randint(6, 16)).capitalize()}."
    if k == 12:
        return f"diff --git a/{_path(rng)} b/{_path(rng)}"
    return ""


def _patch_line(rng: random.Random) -> str:
    k = rng.randrange(6)
    code = (f"{'    ' * rng.randint(0, 3)}{rng.choice(WORDS)}_{rng.choice(WORDS)} = "
            f"{rng.choice(WORDS)}(\"{rng.choice(WORDS)}\", {rng.randint(0, 99)})")
    if k == 0:
        return f"@@ def {rng.choice(WORDS)}_{rng.choice(WORDS)}(self):"
    if k in (1, 2):
        return "+" + code
    if k == 3:
        return "-" + code
    return " " + code


def _blob(rng: random.Random, make, target: int) -> tuple[str, list[int]]:
    parts: list[str] = []
    offsets = [0]
    total = 0
    while total < target:
        s = _esc(make(rng) + "\n")
        parts.append(s)
        total += len(s)
        offsets.append(total)
    return "".join(parts), offsets


def build_pools(seed: int) -> Pools:
    rng = random.Random(f"memdeck-bench-pools:{seed}")
    out_blob, out_offsets = _blob(rng, _log_line, 6_000_000)
    patch_blob, patch_offsets = _blob(rng, _patch_line, 1_000_000)
    b64 = base64.b64encode(rng.randbytes(1_500_000)).decode()
    base = ["You are Codex, a coding agent based on GPT-5. You and the user share the same "
            "workspace and collaborate to achieve the user's goals.\n\n"]
    for h in ("General", "Editing constraints", "Plan tool", "Special user requests",
              "Frontend tasks", "Presenting your work", "Final answer structure",
              "Tool guidelines", "Sandbox and approvals", "Validating your work"):
        base.append(f"## {h}\n\n")
        for _ in range(rng.randint(3, 6)):
            base.append(f"- {_words(rng, rng.randint(14, 30)).capitalize()}.\n")
        base.append("\n")
    developer = ("<permissions instructions>\nFilesystem sandboxing defines which files can be "
                 "read or written. `sandbox_mode` is `workspace-write`: "
                 + _words(rng, 120) + "\n</permissions instructions>")
    agents = []
    for p in PROJECTS:
        rules = "\n".join(f"- {_words(rng, rng.randint(5, 14)).capitalize()}."
                          for _ in range(rng.randint(3, 25)))
        agents.append(_esc(f"# AGENTS.md instructions for /home/dev/src/{p}\n\n<INSTRUCTIONS>\n"
                           f"{rules}\n</INSTRUCTIONS>"))
    sentences = [_esc(f"{_words(rng, rng.randint(5, 18)).capitalize()}"
                      f"{rng.choice(('.', '.', '?', ':', '!'))}") for _ in range(3000)]
    return Pools(out_blob, out_offsets, patch_blob, patch_offsets, b64, _esc("".join(base)),
                 _esc(developer), agents, sentences)


@dataclass
class Plan:
    index: int
    target: int
    start_ms: int
    corrupt: bool
    disabled_later: bool
    citation: bool
    source: tuple[float, str, str, str]


def _ts(ms: int) -> str:
    s, r = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{r:03d}Z"


def _uuid7(rng: random.Random, ms: int) -> str:
    r = rng.getrandbits(74)
    a = f"{ms & (2**48 - 1):012x}"
    return (f"{a[:8]}-{a[8:12]}-7{r & 0xFFF:03x}-{0x8 | ((r >> 12) & 0x3):x}"
            f"{(r >> 14) & 0xFFF:03x}-{(r >> 26) & (2**48 - 1):012x}")


def make_plans(n: int, seed: int, end_date: str) -> list[Plan]:
    rng = random.Random(f"memdeck-bench-plan:{seed}:{n}")
    end = calendar.timegm(time.strptime(end_date, "%Y-%m-%d"))
    first_day = end - DAYS * 86400
    sizes = [max(MIN_BYTES, int(rng.lognormvariate(math.log(MEDIAN_BYTES), SIGMA)))
             for _ in range(n)]
    for i in rng.sample(range(n), max(1, n // GIANT_EVERY)):
        sizes[i] = rng.randint(*GIANT_RANGE)
    corrupt = set(rng.sample(range(n), max(1, n // 200)))
    disabled = set(rng.sample(range(n), max(1, n * 3 // 100)))
    cites = set(rng.sample(range(n), max(1, n * 5 // 100)))
    plans = []
    hours = list(range(24))
    weights = [1, 1, 1, 1, 1, 1, 2, 4, 8, 10, 10, 10, 9, 10, 10, 10, 9, 8, 6, 5, 4, 3, 2, 1]
    for i in range(n):
        day = first_day + rng.randrange(DAYS) * 86400
        hour = rng.choices(hours, weights)[0]
        start_ms = (day + hour * 3600 + rng.randrange(3600)) * 1000 + rng.randrange(1000)
        x = rng.random()
        acc = 0.0
        src = SOURCES[0]
        for s in SOURCES:
            acc += s[0]
            if x < acc:
                src = s
                break
        plans.append(Plan(i, sizes[i], start_ms, i in corrupt, i in disabled, i in cites,
                          src))
    return plans


class Writer:
    """One rollout's lines, with a clock that moves forward."""

    def __init__(self, rng: random.Random, start_ms: int) -> None:
        self.rng = rng
        self.ms = start_ms
        self.lines: list[str] = []
        self.size = 0

    def add(self, kind: str, payload: str, step_ms: tuple[int, int] = (5, 40)) -> None:
        self.ms += self.rng.randint(*step_ms)
        line = f'{{"timestamp":"{_ts(self.ms)}","type":"{kind}","payload":{payload}}}\n'
        self.lines.append(line)
        self.size += len(line)


def _token_count(rng: random.Random, total_in: int, total_out: int) -> str:
    li, lo = rng.randint(500, 30000), rng.randint(20, 3000)
    return (f'{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total_in},'
            f'"cached_input_tokens":{total_in * 4 // 5},"cache_write_input_tokens":0,'
            f'"output_tokens":{total_out},"reasoning_output_tokens":{total_out // 3},'
            f'"total_tokens":{total_in + total_out}}},"last_token_usage":{{"input_tokens":{li},'
            f'"cached_input_tokens":{li * 4 // 5},"cache_write_input_tokens":0,'
            f'"output_tokens":{lo},"reasoning_output_tokens":{lo // 3},'
            f'"total_tokens":{li + lo}}},"model_context_window":272000}},'
            f'"rate_limits":{{"primary":{{"used_percent":{rng.randint(0, 99)}.0,'
            f'"window_minutes":300,"resets_in_seconds":{rng.randint(0, 18000)}}},'
            f'"secondary":null}}}}')


def _citation(rng: random.Random) -> str:
    ids = "\n".join(_uuid7(rng, rng.getrandbits(40)) for _ in range(rng.randint(1, 3)))
    return _esc(
        "\n\n<oai-mem-citation>\n<citation_entries>\n"
        f"MEMORY.md:{rng.randint(1, 20)}-{rng.randint(21, 40)}|note=[{_words(rng, 4)}]\n"
        f"rollout_summaries/2026-11-20T10-00-00-Ab3x-{rng.choice(WORDS)}.md:4-9|"
        f"note=[{_words(rng, 3)}]\n</citation_entries>\n<rollout_ids>\n{ids}\n"
        "</rollout_ids>\n</oai-mem-citation>")


def render_rollout(plan: Plan, pools: Pools, seed: int) -> tuple[str, str, int]:
    """(relative path, text, mtime seconds) of one rollout file."""
    rng = random.Random(seed * 1_000_003 + plan.index)
    tid = _uuid7(rng, plan.start_ms)
    project = rng.choice(PROJECTS)
    cwd = f"/home/dev/src/{project}"
    model = rng.choice(MODELS)
    effort = rng.choice(EFFORTS)
    _, source, thread_source, originator = plan.source
    w = Writer(rng, plan.start_ms)
    start = _ts(plan.start_ms)
    meta_common = (
        f'"session_id":"{tid}","id":"{tid}","timestamp":"{start}","cwd":"{cwd}",'
        f'"originator":"{originator}","cli_version":"{rng.choice(CLI_VERSIONS)}",'
        f'"source":{source},"thread_source":"{thread_source}","model_provider":"openai",'
        f'"base_instructions":{{"text":"{pools.base_instructions}"}},"history_mode":"legacy"')
    git = (f',"git":{{"commit_hash":"{rng.getrandbits(160):040x}","branch":'
           f'"{rng.choice(("main", "main", "dev", "feature/" + rng.choice(WORDS)))}",'
           f'"repository_url":"git@github.com:acme/{project}.git"}}')
    w.add("session_meta", "{" + meta_common + git + "}", (0, 0))
    w.add("response_item", f'{{"type":"message","role":"developer","content":[{{"type":'
                           f'"input_text","text":"{pools.developer_text}"}}]}}')
    if rng.random() < 0.6:
        w.add("response_item", f'{{"type":"message","role":"user","content":[{{"type":'
                               f'"input_text","text":"{rng.choice(pools.agents_texts)}"}}]}}')
    env = _esc(f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <approval_policy>on-request"
               f"</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  "
               f"<network_access>restricted</network_access>\n  <shell>bash</shell>\n"
               f"</environment_context>")
    w.add("response_item", f'{{"type":"message","role":"user","content":[{{"type":'
                           f'"input_text","text":"{env}"}}]}}')
    total_in = total_out = 0
    turn = 0
    disabled_at = plan.target * rng.uniform(0.3, 0.9) if plan.disabled_later else None
    cite_turn_done = not plan.citation
    date = start[:10]
    while w.size < plan.target or turn == 0:
        turn += 1
        turn_id = f"{rng.getrandbits(64):016x}"
        w.add("turn_context",
              f'{{"turn_id":"{turn_id}","cwd":"{cwd}","current_date":"{date}",'
              f'"timezone":"Etc/UTC","approval_policy":"on-request","sandbox_policy":'
              f'{{"type":"workspace-write","writable_roots":[],"network_access":false,'
              f'"exclude_tmpdir_env_var":false,"exclude_slash_tmp":false}},"model":"{model}",'
              f'"effort":"{effort}","summary":"auto"}}', (1000, 120_000))
        w.add("event_msg", f'{{"type":"turn_started","turn_id":"{turn_id}",'
                           f'"model_context_window":272000}}')
        prompt = pools.sentence(rng, rng.choice((1, 1, 2, 3, 5, 12)))
        w.add("response_item", f'{{"type":"message","role":"user","content":[{{"type":'
                               f'"input_text","text":"{prompt}"}}]}}')
        w.add("event_msg", f'{{"type":"user_message","message":"{prompt}","images":[],'
                           f'"local_images":[],"text_elements":[]}}', (1, 15))
        for step in range(max(1, int(rng.expovariate(1 / 5)))):
            if step and w.size >= plan.target:
                break  # keep the file near its planned size: finish the turn now
            summary = _esc(f"**{_words(rng, 3).capitalize()}**\n\n") + pools.sentence(
                rng, rng.randint(1, 4))
            w.add("response_item",
                  f'{{"type":"reasoning","summary":[{{"type":"summary_text","text":"{summary}"}}],'
                  f'"content":null,"encrypted_content":"'
                  f'{pools.enc(rng, int(rng.lognormvariate(math.log(1800), 0.7)))}"}}',
                  (800, 20_000))
            w.add("event_msg", f'{{"type":"agent_reasoning","text":"{summary}"}}', (1, 5))
            call_id = f"call_{rng.getrandbits(96):024x}"
            k = rng.random()
            remaining = max(300, plan.target - w.size)
            if k < 0.08:
                patch = pools.cut(rng, rng.randint(200, 4000), patch=True)
                path = _path(rng)
                w.add("response_item",
                      f'{{"type":"custom_tool_call","status":"completed","call_id":"{call_id}",'
                      f'"name":"apply_patch","input":"*** Begin Patch\\n*** Update File: {path}'
                      f'\\n{patch}*** End Patch\\n"}}', (500, 15_000))
                result = json.dumps({
                    "output": "Success. Updated the following files:\nM " + path + "\n",
                    "metadata": {"exit_code": 0, "duration_seconds": 0.1}})
                w.add("response_item",
                      f'{{"type":"custom_tool_call_output","call_id":"{call_id}","output":'
                      f'"{_esc(result)}"}}', (20, 400))
            elif k < 0.12:
                plan_args = json.dumps({"plan": [{"step": _words(rng, 5), "status": s} for s in
                                                 ("completed", "in_progress", "pending")]})
                w.add("response_item",
                      f'{{"type":"function_call","name":"update_plan","arguments":'
                      f'"{_esc(plan_args)}","call_id":"{call_id}"}}', (500, 8000))
                w.add("response_item", f'{{"type":"function_call_output","call_id":"{call_id}",'
                                       f'"output":"Plan updated"}}', (5, 50))
            else:
                cmd = rng.choice(CMDS).format(w=rng.choice(WORDS), d=rng.choice(DIRS),
                                              p=_path(rng), a=(a := rng.randint(1, 400)),
                                              b=a + rng.randint(20, 200))
                args = json.dumps({"cmd": cmd, "workdir": cwd, "yield_time_ms": 10000,
                                   "max_output_tokens": 10000})
                w.add("response_item",
                      f'{{"type":"function_call","name":"exec_command","arguments":'
                      f'"{_esc(args)}","call_id":"{call_id}"}}', (500, 15_000))
                length = min(remaining, 64_000,
                             int(rng.lognormvariate(math.log(1500), 1.3)))
                body = pools.cut(rng, length)
                head = (f"Chunk ID: {rng.getrandbits(24):06x}\\nWall time: "
                        f"{rng.uniform(0.01, 30):.4f} seconds\\nProcess exited with code "
                        f"{rng.choice((0, 0, 0, 0, 1, 2))}\\nOriginal token count: "
                        f"{len(body) // 4}\\nOutput:\\n")
                w.add("response_item", f'{{"type":"function_call_output","call_id":"{call_id}",'
                                       f'"output":"{head}{body}"}}', (200, 30_000))
            total_in += rng.randint(2000, 30000)
            total_out += rng.randint(50, 2000)
            w.add("event_msg", _token_count(rng, total_in, total_out), (1, 10))
            if rng.random() < 0.25:
                text = pools.sentence(rng, rng.randint(1, 3))
                w.add("response_item", f'{{"type":"message","role":"assistant","content":[{{'
                                       f'"type":"output_text","text":"{text}"}}],'
                                       f'"phase":"commentary"}}', (300, 5000))
                w.add("event_msg", f'{{"type":"agent_message","message":"{text}"}}', (1, 5))
        text = pools.sentence(rng, rng.randint(2, 10))
        cite = ""
        if not cite_turn_done and (w.size > plan.target * 0.5 or rng.random() < 0.3):
            cite = _citation(rng)
            cite_turn_done = True
        w.add("response_item", f'{{"type":"message","role":"assistant","content":[{{'
                               f'"type":"output_text","text":"{text}{cite}"}}],'
                               f'"phase":"final_answer"}}', (500, 20_000))
        w.add("event_msg", f'{{"type":"agent_message","message":"{text}"}}', (1, 5))
        w.add("event_msg", _token_count(rng, total_in, total_out), (1, 10))
        w.add("event_msg", f'{{"type":"turn_complete","turn_id":"{turn_id}",'
                           f'"last_agent_message":"{text}"}}', (1, 10))
        if disabled_at is not None and w.size >= disabled_at:
            w.add("session_meta", "{" + meta_common + ',"memory_mode":"disabled"}',
                  (1000, 60_000))
            disabled_at = None
    if disabled_at is not None:  # tiny file: still disable it, at the end
        w.add("session_meta", "{" + meta_common + ',"memory_mode":"disabled"}', (1000, 60_000))
    if plan.corrupt:
        i = max(1, len(w.lines) // 2)
        w.lines[i] = w.lines[i][: max(10, len(w.lines[i]) // 2)] + "\n"
    day = time.strftime("%Y/%m/%d", time.gmtime(plan.start_ms // 1000))
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(plan.start_ms // 1000))
    rel = f"sessions/{day}/rollout-{stamp}-{tid}.jsonl"
    return rel, "".join(w.lines), w.ms // 1000 + 1


@dataclass
class HomeInfo:
    files: list[str]
    sizes: list[int]
    lines: int
    reused: bool
    seconds: float
    extra: dict = field(default_factory=dict)


def _read_marker(home: Path) -> dict | None:
    try:
        return json.loads((home / MARKER).read_text())
    except (OSError, ValueError):
        return None


def _write_marker(home: Path, data: dict) -> None:
    tmp = home / (MARKER + ".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, home / MARKER)


def restore_appends(home: Path, marker: dict) -> int:
    """Undo a previous run's appends (truncate back, restore mtimes)."""
    dirty = marker.get("dirty") or []
    for rel, size, mtime_ns in dirty:
        p = home / rel
        if p.exists():
            os.truncate(p, size)
            os.utime(p, ns=(mtime_ns, mtime_ns))
    if dirty:
        marker["dirty"] = []
        _write_marker(home, marker)
    return len(dirty)


_GEN: tuple[Path, Pools, int, int] | None = None  # set before forking the writers


def _write_chunk(plans: list[Plan]) -> list[tuple[str, int, int]]:
    assert _GEN is not None
    home, pools, seed, latest = _GEN
    out = []
    for plan in plans:
        rel, text, mtime = render_rollout(plan, pools, seed)
        data = text.encode()
        p = home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "wb", buffering=0) as f:
            f.write(data)
        mt = min(mtime, latest)
        os.utime(p, (mt, mt))
        out.append((rel, len(data), text.count("\n")))
    return out


def build_home(home: Path, n: int, seed: int, end_date: str, log) -> HomeInfo:
    key = {"generator": GEN_VERSION, "sessions": n, "seed": seed, "end_date": end_date}
    marker = _read_marker(home) if home.exists() else None
    if marker and marker.get("complete") and all(marker.get(k) == v for k, v in key.items()):
        restored = restore_appends(home, marker)
        if restored:
            log(f"restored {restored} files appended to by a previous run")
        files = marker["files"]
        sizes = [(home / f).stat().st_size for f in files]
        return HomeInfo(files, sizes, marker.get("lines", 0), True, 0.0)
    if home.exists() and any(home.iterdir()) and marker is None:
        sys.exit(f"bench: {home} exists, is not empty and is not a bench home; refusing to "
                 "overwrite it (choose another --dir)")
    for sub in ("sessions", "archived_sessions", "memdeck"):
        shutil.rmtree(home / sub, ignore_errors=True)
    home.mkdir(parents=True, exist_ok=True)
    _write_marker(home, {**key, "complete": False})
    (home / "config.toml").write_text("[features]\nmemories = true\n")
    t0 = time.perf_counter()
    global _GEN
    _GEN = (home, build_pools(seed), seed, int(SystemClock().now()) - 60)
    plans = make_plans(n, seed, end_date)
    files: list[str] = []
    sizes: list[int] = []
    lines = 0
    total = 0
    chunks = [plans[i : i + 50] for i in range(0, len(plans), 50)]
    workers = min(os.cpu_count() or 1, 8)
    try:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        pool = ctx.Pool(workers) if workers > 1 else None
    except (ValueError, OSError):
        pool = None
    try:
        results = pool.imap(_write_chunk, chunks) if pool else map(_write_chunk, chunks)
        for part in results:
            for rel, size, nl in part:
                files.append(rel)
                sizes.append(size)
                lines += nl
                total += size
            if len(files) % 1000 < 50 or len(files) == n:
                el = time.perf_counter() - t0
                log(f"generated {len(files)}/{n} files, {total / 1e6:.0f} MB, {el:.1f} s "
                    f"({total / 1e6 / max(el, 1e-9):.0f} MB/s, {workers if pool else 1} procs)")
    finally:
        if pool:
            pool.close()
            pool.join()
    secs = time.perf_counter() - t0
    _write_marker(home, {**key, "complete": True, "files": files, "lines": lines,
                         "bytes": total, "dirty": []})
    return HomeInfo(files, sizes, lines, False, secs)


def validate_sample(home: Path, files: list[str], k: int = 40) -> tuple[int, int, int]:
    """(files checked, lines, invalid lines) for a sample of files: the generator's sanity."""
    bad = lines = 0
    for rel in files[:: max(1, len(files) // k)]:
        with open(home / rel, "rb") as f:
            for line in f:
                lines += 1
                try:
                    obj = json.loads(line)
                    assert isinstance(obj, dict) and "type" in obj and "payload" in obj
                    p = obj["payload"]
                    if p.get("type") == "function_call":
                        json.loads(p["arguments"])
                except (ValueError, AssertionError):
                    bad += 1
    return len(files[:: max(1, len(files) // k)]), lines, bad


# ======================================================================================
# measuring
# ======================================================================================


def memdeck_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "memdeck"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "memdeck.tui.cli"]


CHILD_ENV: dict[str, str] | None = None  # environment of every Python child (bytecode cache)


def run_timed(cmd: list[str] | str, shell: bool = False, ok: tuple[int, ...] = (0,),
              env: dict | None = None) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, shell=shell, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       env=env if env is not None else CHILD_ENV)
    dt = time.perf_counter() - t0
    if r.returncode not in ok:
        raise RuntimeError(f"{cmd!r} exited {r.returncode}: {r.stderr.decode()[-2000:]}")
    return dt


@dataclass
class TreeRun:
    seconds: float
    max_single_kb: int | None  # /usr/bin/time: the largest single process of the tree
    poll_max_single_kb: int | None
    poll_max_sum_kb: int | None
    max_procs: int
    user_s: float | None
    sys_s: float | None


def run_with_memory(cmd: list[str]) -> TreeRun:
    """Wall time plus peak RSS: /usr/bin/time -v for the largest process, psutil polling for
    the sum over the tree (the cold index forks a process pool)."""
    try:
        import psutil
    except ImportError:
        psutil = None
    gnu_time = shutil.which("time") or "/usr/bin/time"
    use_time = os.path.exists(gnu_time) and subprocess.run(
        [gnu_time, "-v", "true"], capture_output=True).returncode == 0
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        full = [gnu_time, "-v", "-o", tf.name, *cmd] if use_time else cmd
        peak_single = peak_sum = 0
        max_procs = 0
        stop = threading.Event()
        t0 = time.perf_counter()
        proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=CHILD_ENV)

        def poll() -> None:
            nonlocal peak_single, peak_sum, max_procs
            try:
                root = psutil.Process(proc.pid)
            except psutil.Error:
                return
            while not stop.is_set():
                try:
                    procs = root.children(recursive=True)
                    if not use_time:
                        procs.append(root)
                except psutil.Error:
                    break
                rss = []
                for p in procs:
                    try:
                        rss.append(p.memory_info().rss)
                    except psutil.Error:
                        pass
                if rss:
                    peak_single = max(peak_single, max(rss))
                    peak_sum = max(peak_sum, sum(rss))
                    max_procs = max(max_procs, len(rss))
                stop.wait(0.02)

        th = threading.Thread(target=poll, daemon=True) if psutil else None
        if th:
            th.start()
        _, err = proc.communicate()
        dt = time.perf_counter() - t0
        stop.set()
        if th:
            th.join()
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd!r} exited {proc.returncode}: {err.decode()[-2000:]}")
        text = tf.read() if use_time else ""
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    u = re.search(r"User time \(seconds\): ([\d.]+)", text)
    s = re.search(r"System time \(seconds\): ([\d.]+)", text)
    return TreeRun(dt, int(m.group(1)) if m else None,
                   peak_single // 1024 if psutil else None,
                   peak_sum // 1024 if psutil else None, max_procs,
                   float(u.group(1)) if u else None, float(s.group(1)) if s else None)


INPROC = r"""
import json, sys, time
t0 = time.perf_counter()
from memdeck.engine import Engine
t_import = time.perf_counter() - t0
home, mode, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = {"import_s": t_import, "runs": []}
for _ in range(reps):
    e = Engine.open(home)
    t = time.perf_counter()
    st = e.refresh()
    dt = time.perf_counter() - t
    out["runs"].append({"seconds": dt, "files": st.files, "scanned_full": st.scanned_full,
                        "scanned_append": st.scanned_append, "bytes_read": st.bytes_read})
if mode == "breakdown":
    t = time.perf_counter()
    sessions = e.sessions(refresh=False)
    out["sessions_s"] = time.perf_counter() - t
    t = time.perf_counter()
    text = json.dumps([s.to_json() for s in sessions], ensure_ascii=False, indent=2)
    out["json_s"] = time.perf_counter() - t
    out["json_bytes"] = len(text.encode())
    out["statuses"] = {}
    for s in sessions:
        out["statuses"][s.status] = out["statuses"].get(s.status, 0) + 1
    out["bad_lines"] = sum(s.bad_lines for s in sessions)
    out["disabled"] = sum(1 for s in sessions if s.memory_mode == "disabled")
print(json.dumps(out))
"""

IMPORTS = r"""
import json, os, sys
from memdeck.tui.cli import main
real = sys.stdout
sys.stdout = open(os.devnull, "w")
rc = main(["sessions", "--json", "--home", sys.argv[1]])
sys.stdout = real
print(json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""

PROFILE = r"""
import cProfile, io, json, pstats, shutil, sys, time
from memdeck.engine import Engine
from memdeck.engine.index.session_index import SessionIndex
home, out = sys.argv[1], sys.argv[2]

def top(pr, key, n):
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats(key).print_stats(n)
    text = s.getvalue()
    return text[text.find("   ncalls"):].rstrip()

shutil.rmtree(home + "/memdeck", ignore_errors=True)
e = Engine.open(home)
e.store.conn()
t = time.perf_counter()
st = SessionIndex(e.home, e.store).refresh()
print(f"cold Engine refresh in-process, default workers, no profiler: "
      f"{time.perf_counter() - t:.2f} s ({st.files} files, {st.bytes_read / 1e6:.0f} MB)")
shutil.rmtree(home + "/memdeck", ignore_errors=True)
e = Engine.open(home)
e.store.conn()
idx = SessionIndex(e.home, e.store, workers=1)
t = time.perf_counter()
st = idx.refresh()
print(f"cold refresh in-process, workers=1, no profiler: {time.perf_counter() - t:.2f} s")
shutil.rmtree(home + "/memdeck", ignore_errors=True)
e = Engine.open(home)
e.store.conn()
idx = SessionIndex(e.home, e.store, workers=1)
pr = cProfile.Profile()
t = time.perf_counter()
pr.enable()
st = idx.refresh()
pr.disable()
print(f"cold refresh in-process, workers=1, under cProfile: {time.perf_counter() - t:.2f} s")
pr.dump_stats(out)
print()
print("-- cold, by cumulative time --")
print(top(pr, "cumulative", 25))
print()
print("-- cold, by own time --")
print(top(pr, "tottime", 20))
e = Engine.open(home)
pr = cProfile.Profile()
t = time.perf_counter()
pr.enable()
ss = e.sessions()
text = json.dumps([s.to_json() for s in ss], ensure_ascii=False, indent=2)
pr.disable()
print()
print(f"-- warm listing (refresh + sessions + to_json + dumps), under cProfile: "
      f"{time.perf_counter() - t:.2f} s, by own time --")
print(top(pr, "tottime", 20))
"""


def venv_python() -> str:
    return sys.executable


def inproc(home: Path, mode: str, reps: int) -> dict:
    r = subprocess.run([venv_python(), "-c", INPROC, str(home), mode, str(reps)],
                       capture_output=True, text=True, cwd=ROOT, env=CHILD_ENV)
    if r.returncode != 0:
        raise RuntimeError(f"in-process helper failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def import_report(home: Path) -> dict:
    r = subprocess.run([venv_python(), "-X", "importtime", "-c", IMPORTS, str(home)],
                       capture_output=True, text=True, cwd=ROOT, env=CHILD_ENV)
    if r.returncode != 0:
        raise RuntimeError(f"import check failed: {r.stderr[-2000:]}")
    data = json.loads(r.stdout.strip().splitlines()[-1])
    entries = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            entries.append((int(m.group(2)), int(m.group(1)), len(m.group(3)) // 2,
                            m.group(4)))
    min_indent = min((e[2] for e in entries), default=0)
    top = sorted((e for e in entries if e[2] == min_indent), reverse=True)[:10]
    top_self = sorted(((e[1], e[0], e[2], e[3]) for e in entries), reverse=True)[:10]
    mods = set(data["modules"])
    heavy = [m for m in HEAVY_MODULES if m in mods]
    forbidden = [m for m in FORBIDDEN_MODULES if m in mods]
    return {"rc": data["rc"], "top": top, "top_self": top_self, "heavy": heavy,
            "forbidden": forbidden, "n_modules": len(mods),
            "total_import_ms": sum(e[0] for e in entries if e[2] == min_indent) / 1000}


def drop_index(home: Path) -> None:
    shutil.rmtree(home / "memdeck", ignore_errors=True)


def append_lines(home: Path, files: list[str], seed: int, round_no: int,
                 marker_update: bool = True) -> list[str]:
    rng = random.Random(f"memdeck-bench-append:{seed}:{round_no}")
    chosen = rng.sample(files, min(APPEND_FILES, len(files)))
    marker = _read_marker(home) or {}
    dirty = {d[0]: d for d in marker.get("dirty") or []}
    for rel in chosen:
        if rel not in dirty:
            st = (home / rel).stat()
            dirty[rel] = [rel, st.st_size, st.st_mtime_ns]
    if marker_update and marker:
        marker["dirty"] = list(dirty.values())
        _write_marker(home, marker)
    ts = _ts(int(SystemClock().now() * 1000))
    for rel in chosen:
        tc = _token_count(rng, rng.randint(10_000, 900_000), rng.randint(500, 40_000))
        line = f'{{"timestamp":"{ts}","type":"event_msg","payload":{tc}}}\n'
        with open(home / rel, "ab") as f:
            f.write(line.encode())
    return chosen


# ======================================================================================
# report
# ======================================================================================


class Report:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []
        self.results: list[tuple[str, str]] = []
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)

    def row(self, name: str, value: str, target: str = "", verdict: str = "") -> None:
        self.rows.append((name, value, target, verdict))

    def result(self, key: str, value) -> None:
        if isinstance(value, float):
            value = f"{value:.4f}"
        self.results.append((key, str(value)))

    def print(self) -> None:
        w0 = max(len(r[0]) for r in self.rows)
        w1 = max(len(r[1]) for r in self.rows)
        w2 = max(max(len(r[2]) for r in self.rows), 6)
        head = f"{'figure':<{w0}}  {'value':>{w1}}  {'target':<{w2}}  result"
        print(head)
        print("-" * len(head))
        for name, value, target, verdict in self.rows:
            print(f"{name:<{w0}}  {value:>{w1}}  {target:<{w2}}  {verdict}".rstrip())
        print()
        for text in self.notes:
            print(f"* {text}")
        print()
        for k, v in self.results:
            print(f"RESULT {k}={v}")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def fmt_s(x: float) -> str:
    return f"{x:.3f} s" if x < 10 else f"{x:.2f} s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Benchmark memdeck's session index (cold, warm, append, memory, start-up) "
                    "on a synthetic Codex home.")
    ap.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS, metavar="N",
                    help=f"number of rollout files (default {DEFAULT_SESSIONS})")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generator seed (default 1)")
    ap.add_argument("--dir", metavar="D",
                    help="the synthetic Codex home; reused when it holds one of the same N, seed "
                         "and end date (default: $TMPDIR/memdeck-bench-n<N>-s<seed>)")
    ap.add_argument("--end-date", default=DEFAULT_END_DATE, metavar="YYYY-MM-DD",
                    help=f"last day of the {DAYS}-day window (default {DEFAULT_END_DATE})")
    ap.add_argument("--generate-only", action="store_true", help="build the home and stop")
    ap.add_argument("--profile", action="store_true",
                    help="also cProfile a cold in-process refresh with one worker")
    ap.add_argument("--cold-runs", type=int, default=2, metavar="K",
                    help="timed cold runs, best reported (default 2; one more run measures "
                         "memory)")
    ap.add_argument("--clean", action="store_true", help="delete the home at the end")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="run memdeck with the inherited environment; by default children get "
                         "a bytecode cache under $TMPDIR (PYTHONPYCACHEPREFIX) even when "
                         "PYTHONDONTWRITEBYTECODE is set, as an installed memdeck would have")
    args = ap.parse_args(argv)
    global CHILD_ENV
    inherited_no_pyc = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    CHILD_ENV = dict(os.environ)
    if not args.no_bytecode_cache:
        CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir())
                                               / "memdeck-bench-pycache")
        subprocess.run([venv_python(), "-c",
                        "import memdeck.engine, memdeck.engine.index.session_index, "
                        "memdeck.tui.cli, memdeck.tui.render, "
                        "concurrent.futures, multiprocessing, sqlite_utils"],
                       cwd=ROOT, env=CHILD_ENV, check=False, capture_output=True)
    bytecode = ("no cache (inherited environment)" if args.no_bytecode_cache else
                f"cached under {CHILD_ENV['PYTHONPYCACHEPREFIX']}")

    def log(msg: str) -> None:
        print(f"[bench] {msg}", file=sys.stderr, flush=True)

    n = args.sessions
    home = Path(args.dir) if args.dir else Path(tempfile.gettempdir()) / (
        f"memdeck-bench-n{n}-s{args.seed}")
    home = home.absolute()
    log(f"Codex home: {home}")
    info = build_home(home, n, args.seed, args.end_date, log)
    total = sum(info.sizes)
    s_sizes = sorted(info.sizes)
    log(("reused" if info.reused else f"generated in {info.seconds:.1f} s") +
        f": {len(info.files)} files, {total / 1e6:.0f} MB")
    checked, vlines, vbad = validate_sample(home, info.files)
    log(f"validated {checked} sample files: {vlines} lines, {vbad} invalid "
        "(corrupt lines are deliberate, 1 file in 200)")
    if args.generate_only:
        return 0

    rep = Report()
    pct = lambda q: s_sizes[min(len(s_sizes) - 1, int(q * len(s_sizes)))]  # noqa: E731
    rep.row("home: files", f"{len(info.files)}")
    rep.row("home: total size", f"{total / 1e6:.0f} MB")
    rep.row("home: file size median / p90 / p99 / max",
            f"{statistics.median(s_sizes) / 1e3:.0f} KB / {pct(0.9) / 1e3:.0f} KB / "
            f"{pct(0.99) / 1e6:.2f} MB / {s_sizes[-1] / 1e6:.1f} MB")
    if info.lines:
        rep.row("home: lines", f"{info.lines}")
    rep.row("home: generation", "reused" if info.reused else fmt_s(info.seconds))
    plans = make_plans(n, args.seed, args.end_date)
    rep.note(f"generated on purpose: {sum(p.corrupt for p in plans)} files with a corrupt middle "
             f"line, {sum(p.disabled_later for p in plans)} with a later session_meta "
             f"memory_mode=disabled, {sum(p.citation for p in plans)} with an "
             f"<oai-mem-citation> block, {max(1, n // GIANT_EVERY)} of "
             f"{GIANT_RANGE[0] // 1_000_000}-{GIANT_RANGE[1] // 1_000_000} MB; "
             f"{DAYS} days of dated folders ending {args.end_date}")
    rep.result("files", len(info.files))
    rep.result("total_mb", round(total / 1e6, 1))

    mcmd = memdeck_cmd()
    sessions_cmd = [*mcmd, "sessions", "--json", "--home", str(home)]
    qhome = shlex.quote(str(home))
    find = (f"find {qhome}/sessions {qhome}/archived_sessions -type f -name 'rollout-*.jsonl' "
            f"-print0 2>/dev/null")

    # page cache: read everything once, so grep and memdeck both read from memory
    log("warming the page cache (cat every rollout to /dev/null)")
    t_cat = run_timed(f"{find} | xargs -0 cat > /dev/null", shell=True, ok=(0, 1))
    t_cat2 = run_timed(f"{find} | xargs -0 cat > /dev/null", shell=True, ok=(0, 1))
    rep.row("page cache warmed: cat all files (1st / 2nd)", f"{t_cat:.2f} / {t_cat2:.2f} s",
            "", "done")

    # 1. native reference
    log("grep reference")
    grep_cmd = f"{find} | xargs -0 grep -c '\"type\"' > /dev/null"
    grep_runs = [run_timed(grep_cmd, shell=True) for _ in range(3)]
    t_grep = min(grep_runs)
    rep.row("grep -c '\"type\"' over all files (best of 3)", fmt_s(t_grep), "reference")
    rep.result("grep_s", t_grep)

    # 2. cold
    cold_times = []
    for i in range(args.cold_runs):
        log(f"cold run {i + 1}/{args.cold_runs} (memdeck/ dropped)")
        drop_index(home)
        cold_times.append(run_timed(sessions_cmd))
    log("cold run for memory (memdeck/ dropped; /usr/bin/time -v and psutil polling)")
    drop_index(home)
    cold = run_with_memory(sessions_cmd)
    t_cold = min(cold_times) if cold_times else cold.seconds
    ratio = t_cold / t_grep
    rep.row(f"cold memdeck sessions --json (best of {len(cold_times) or 1})", fmt_s(t_cold))
    rep.note("cold runs: " + ", ".join(f"{t:.2f} s" for t in cold_times)
             + f"; memory-instrumented cold run: {cold.seconds:.2f} s")
    if cold.user_s is not None:
        rep.row("  cold CPU time user+sys (all processes)",
                f"{cold.user_s:.2f}+{cold.sys_s:.2f} s")
    rep.row("cold / grep", f"{ratio:.1f}x", f"<= {TARGET_COLD_RATIO:.0f}x",
            verdict(ratio <= TARGET_COLD_RATIO))
    rep.result("cold_s", t_cold)
    rep.result("cold_ratio", round(ratio, 2))
    rep.result("cold_ok", ratio <= TARGET_COLD_RATIO)
    db = home / "memdeck" / "memdeck.sqlite"
    if db.exists():
        dbsize = db.stat().st_size + sum(
            p.stat().st_size for p in db.parent.glob("memdeck.sqlite-*"))
        rep.row("  index size (memdeck.sqlite + wal)", f"{dbsize / 1e6:.1f} MB")
        rep.result("index_mb", round(dbsize / 1e6, 1))

    # 6. memory of the cold run
    if cold.max_single_kb is not None:
        rep.row("cold peak RSS, largest process (/usr/bin/time)",
                f"{cold.max_single_kb / 1024:.0f} MB")
        rep.result("cold_rss_max_mb", round(cold.max_single_kb / 1024, 1))
    if cold.poll_max_sum_kb is not None:
        rep.row("cold peak RSS, largest process (psutil poll)",
                f"{cold.poll_max_single_kb / 1024:.0f} MB")
        rep.row(f"cold peak RSS, tree sum (psutil, up to {cold.max_procs} procs)",
                f"{cold.poll_max_sum_kb / 1024:.0f} MB")
        rep.result("cold_rss_tree_mb", round(cold.poll_max_sum_kb / 1024, 1))
        if cold.max_single_kb is None:
            rep.result("cold_rss_max_mb", round(cold.poll_max_single_kb / 1024, 1))

    # 3. warm
    log("warm runs")
    warm_runs = [run_timed(sessions_cmd) for _ in range(3)]
    t_warm = min(warm_runs)
    rep.row("warm memdeck sessions --json (best of 3)", fmt_s(t_warm),
            f"<= {TARGET_WARM_S} s", verdict(t_warm <= TARGET_WARM_S))
    rep.result("warm_s", t_warm)
    rep.result("warm_ok", t_warm <= TARGET_WARM_S)
    warm_mem = run_with_memory(sessions_cmd)
    if warm_mem.max_single_kb is not None:
        rep.row("  warm peak RSS", f"{warm_mem.max_single_kb / 1024:.0f} MB")
        rep.result("warm_rss_mb", round(warm_mem.max_single_kb / 1024, 1))

    # 5a. in-process warm refresh, plus a breakdown of the rest of the command
    bd = inproc(home, "breakdown", 3)
    t_warm_refresh = min(r["seconds"] for r in bd["runs"])
    rep.row("warm Engine.open(H).refresh() in-process (best of 3)", fmt_s(t_warm_refresh))
    rep.row("  warm: import engine", fmt_s(bd["import_s"]))
    rep.row("  warm: engine.sessions(refresh=False)", fmt_s(bd["sessions_s"]))
    rep.row("  warm: to_json + json.dumps(indent=2)",
            f"{fmt_s(bd['json_s'])} ({bd['json_bytes'] / 1e6:.1f} MB)")
    rep.result("warm_refresh_s", t_warm_refresh)
    rep.result("warm_sessions_s", bd["sessions_s"])
    rep.result("warm_json_s", bd["json_s"])
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(bd["statuses"].items()))
    rep.note(f"sessions by status: {statuses}")
    rep.note(f"bad lines found: {bd['bad_lines']}; sessions with memory_mode disabled: "
             f"{bd['disabled']}")

    # 4. append one line to 100 files, whole command
    log(f"append round 1: one line to {APPEND_FILES} files, then the command")
    append_lines(home, info.files, args.seed, 1)
    t_append_cmd = run_timed(sessions_cmd)
    rep.row(f"append {APPEND_FILES} files: memdeck sessions --json", fmt_s(t_append_cmd),
            "(whole command)")
    rep.result("append_cmd_s", t_append_cmd)

    # 5b. append again, time only the re-index in-process
    log(f"append round 2: one line to {APPEND_FILES} files, in-process refresh")
    append_lines(home, info.files, args.seed, 2)
    ap_run = inproc(home, "append", 1)["runs"][0]
    t_reindex = ap_run["seconds"]
    rep.row(f"append {APPEND_FILES} files: Engine.open(H).refresh() in-process",
            fmt_s(t_reindex), f"<= {TARGET_APPEND_S} s", verdict(t_reindex <= TARGET_APPEND_S))
    rep.row("  re-indexed appended / full / bytes read",
            f"{ap_run['scanned_append']} / {ap_run['scanned_full']} / {ap_run['bytes_read']} B")
    rep.result("append_reindex_s", t_reindex)
    rep.result("append_reindex_ok", t_reindex <= TARGET_APPEND_S)
    rep.result("append_scanned", ap_run["scanned_append"])

    # 7. start-up on an empty home, and imports
    log("start-up on an empty home")
    with tempfile.TemporaryDirectory(prefix="memdeck-bench-empty-") as empty:
        t_first = run_timed([*mcmd, "sessions", "--json", "--home", empty])
        t_start = min(run_timed([*mcmd, "sessions", "--json", "--home", empty])
                      for _ in range(5))
        t_bare = min(run_timed([venv_python(), "-c", "pass"]) for _ in range(5))
        rep.row("start-up: empty home, first run (creates memdeck/)", fmt_s(t_first))
        rep.row("start-up: empty home (best of 5)", fmt_s(t_start))
        rep.row("  bare `python -c pass` (best of 5)", fmt_s(t_bare))
        if inherited_no_pyc and not args.no_bytecode_cache:
            raw = dict(CHILD_ENV)
            raw.pop("PYTHONPYCACHEPREFIX", None)
            raw["PYTHONDONTWRITEBYTECODE"] = "1"
            t_nopyc = min(run_timed([*mcmd, "sessions", "--json", "--home", empty], env=raw)
                          for _ in range(5))
            rep.row("  start-up without bytecode cache (this env's default)", fmt_s(t_nopyc))
            rep.result("startup_no_pyc_s", t_nopyc)
        rep.result("startup_s", t_start)
        rep.result("startup_first_s", t_first)
        rep.result("python_bare_s", t_bare)
        imp = import_report(Path(empty))
    imp_big = import_report(home)
    forbidden = sorted(set(imp["forbidden"]) | set(imp_big["forbidden"]))
    rep.row("forbidden imports (openai, textual, git)", ", ".join(forbidden) or "none",
            "none", verdict(not forbidden))
    rep.note("notable modules loaded by `sessions --json` (empty home): "
             + (", ".join(imp["heavy"]) or "none"))
    rep.note("notable modules loaded by `sessions --json` (bench home, warm): "
             + (", ".join(imp_big["heavy"]) or "none"))
    rep.result("forbidden_imports", ",".join(forbidden) or "none")
    rep.result("forbidden_imports_ok", not forbidden)
    rep.result("modules_loaded", imp["n_modules"])

    print()
    print(f"memdeck index benchmark: {len(info.files)} sessions, seed {args.seed}, home {home}")
    print(f"command: {' '.join(shlex.quote(c) for c in sessions_cmd)} > /dev/null")
    print("page cache: warmed by reading every rollout once (cat > /dev/null) before grep and "
          "memdeck")
    print(f"bytecode: {bytecode}; PYTHONDONTWRITEBYTECODE in this environment: "
          f"{'set' if inherited_no_pyc else 'unset'}")
    print(f"machine: {os.cpu_count()} CPUs; memdeck {' '.join(mcmd)}; "
          f"python {sys.version.split()[0]}")
    print()
    rep.print()
    print()
    print("top 10 import costs (cumulative, top-level modules; `sessions --json` on an empty "
          "home):")
    for cum, self_us, _depth, name in imp["top"]:
        print(f"  {cum / 1000:8.1f} ms  (self {self_us / 1000:6.1f} ms)  {name}")
    print(f"  total top-level import time: {imp['total_import_ms']:.0f} ms, "
          f"{imp['n_modules']} modules in sys.modules")
    print("  (engine.errors stands for the whole engine package: tui.cli's first "
          "`from memdeck.engine.errors import …` runs engine/__init__.py)")
    print("top 10 import costs by self time (any depth):")
    for self_us, cum, depth, name in imp["top_self"]:
        print(f"  {self_us / 1000:8.1f} ms  (cumulative {cum / 1000:6.1f} ms)  "
              f"{'  ' * depth}{name}")

    if args.profile:
        log("profiling: cold in-process refresh (default workers, then cProfile with 1 "
            "worker), then the warm listing")
        drop_index(home)
        with tempfile.NamedTemporaryFile(suffix=".prof", delete=False) as tf:
            prof = tf.name
        r = subprocess.run([venv_python(), "-c", PROFILE, str(home), prof],
                           capture_output=True, text=True, cwd=ROOT, env=CHILD_ENV)
        print()
        print(r.stdout if r.returncode == 0 else r.stderr[-3000:])
        print(f"profile data: {prof} (python -m pstats {prof})")

    if args.clean:
        shutil.rmtree(home, ignore_errors=True)
    else:
        restore_appends(home, _read_marker(home) or {})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
