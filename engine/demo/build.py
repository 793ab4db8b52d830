"""Build the demo Codex home: a realistic `~/.codex` that exercises every part of memdeck.

Times are relative to the moment it is built, so every status stays right whenever it runs.
Building is idempotent: the folder is rebuilt from scratch, but only if it is empty or was
built by memdeck (a marker file says so); any other folder is refused, never deleted.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..clock import Clock
from ..codex.memory_layout import SelectedMemory
from ..codex.schema import create_memories_db, create_state_db, mark_backfill_complete
from ..errors import HomeError
from .content import SESSIONS, UNREADABLE_HOURS_AGO, DemoSession
from .memory_folder import write_memory_root

# A session of the demo, when it started and when it was last active (epoch seconds).
Planned = tuple[DemoSession, float, float]
# A memory pipeline job row, in the column order `_write_pipeline_db` inserts.
JobRow = tuple[str, str | None, int, int | None, int | None, int | None, int, str | None, int,
               int | None]

MARKER = ".memdeck-demo"
CONFIG = """\
# Codex configuration (demo home built by `memdeck demo`)
model = "gpt-5.4"

[features]
# Memories are off by default in Codex; this home has them on.
memories = true

[memories]
# Wait this long after a session's last activity before extracting it.
min_rollout_idle_hours = 6
# Extract sessions up to 45 days old (Codex's default is 10); memories unused for
# max_unused_days (default 30) are still never consolidated.
max_rollout_age_days = 45
# Threads that used web search or MCP are marked polluted.
disable_on_external_context = true
"""


def default_demo_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memdeck" / "demo-codex-home"


def uuid7(ms: int, rng: random.Random) -> str:
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= rng.getrandbits(12) << 64
    value |= 0b10 << 62
    value |= rng.getrandbits(62)
    return str(uuid.UUID(int=value))


def _ts(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{int((t % 1) * 1000):03d}Z")


class _Writer:
    def __init__(self, start: float) -> None:
        self.t = start
        self.lines: list[str] = []

    def add(self, kind: str, payload: dict[str, Any], step: float = 7.3) -> None:
        self.t += step
        self.lines.append(json.dumps({"timestamp": _ts(self.t), "type": kind,
                                      "payload": payload}, separators=(",", ":"),
                                     ensure_ascii=False))

    def user(self, text: str) -> None:
        self.add("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]})

    def assistant(self, text: str, phase: str) -> None:
        self.add("response_item", {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": text}],
                                   "phase": phase})
        self.add("event_msg", {"type": "agent_message", "message": text}, 0.01)


def _meta(s: DemoSession, tid: str, start: float, mode: str | None) -> dict[str, Any]:
    p: dict[str, Any] = {
        "session_id": tid, "id": tid, "timestamp": _ts(start), "cwd": s.cwd,
        "originator": "codex_cli_rs", "cli_version": "0.150.0", "source": s.source,
        "thread_source": "user", "model_provider": "openai",
        "base_instructions": {"text": "You are Codex, a coding agent."},
    }
    if mode:
        p["memory_mode"] = mode
    p["history_mode"] = "legacy"
    return p


def render_session(s: DemoSession, tid: str, start: float, ids: dict[str, str]) -> list[str]:
    w = _Writer(start - 7.3)
    meta = _meta(s, tid, start, None)
    w.add("session_meta", {**meta, "git": {"commit_hash": "3f2c9e1b7d4a", "branch": s.branch,
                                           "repository_url": f"git@example.com:demo/"
                                                             f"{s.cwd.rsplit('/', 1)[-1]}.git"}}, 0)
    w.add("turn_context", {"cwd": s.cwd, "approval_policy": "on-request",
                           "sandbox_policy": {"type": "workspace-write", "network_access": False,
                                              "exclude_tmpdir_env_var": False,
                                              "exclude_slash_tmp": False},
                           "model": "gpt-5.4", "summary": "auto"}, 0)
    if s.agents_md:
        from .content import AGENTS_SHOP

        w.user(AGENTS_SHOP.replace("/home/demo/src/shop", s.cwd))
    w.user(f"<environment_context>\n  <cwd>{s.cwd}</cwd>\n  <shell>bash</shell>\n"
           "</environment_context>")
    for i, turn in enumerate(s.turns):
        kind = turn[0]
        if kind == "user":
            w.user(turn[1])
            w.add("event_msg", {"type": "user_message", "message": turn[1], "images": [],
                                "local_images": [], "text_elements": []}, 0.01)
        elif kind == "assistant":
            w.assistant(turn[1], "final_answer")
        elif kind == "commentary":
            w.assistant(turn[1], "commentary")
        elif kind == "cite":
            entries = "\n".join(f"{p}:{a}-{b}|note=[{n}]" for p, a, b, n in turn[2])
            rids = "\n".join(ids[k] for k in turn[3])
            w.assistant(f"{turn[1]}\n\n<oai-mem-citation>\n<citation_entries>\n{entries}\n"
                        f"</citation_entries>\n<rollout_ids>\n{rids}\n</rollout_ids>\n"
                        "</oai-mem-citation>", "final_answer")
        elif kind == "call":
            cid = f"call_{i}"
            w.add("response_item", {"type": "function_call", "name": turn[1],
                                    "arguments": json.dumps(turn[2]), "call_id": cid})
            w.add("response_item", {"type": "function_call_output", "call_id": cid,
                                    "output": turn[3]})
        elif kind == "patch":
            cid = f"call_{i}"
            w.add("response_item", {"type": "custom_tool_call", "call_id": cid,
                                    "name": "apply_patch", "input": turn[1]})
            w.add("response_item", {"type": "custom_tool_call_output", "call_id": cid,
                                    "output": turn[2]})
        elif kind == "web":
            w.add("response_item", {"type": "web_search_call", "status": "completed",
                                    "action": {"type": "search", "query": turn[1]}})
        if s.corrupt_line_after == i:
            w.lines.append(w.lines[-1][: len(w.lines[-1]) // 2])  # a write cut short, mid-file
    w.add("event_msg", {"type": "token_count", "info": None, "rate_limits": None})
    if s.memory_off_later:
        w.add("session_meta", _meta(s, tid, start, "disabled"))
    return w.lines


def build_demo(path: str | os.PathLike[str] | None, clock: Clock, keep: bool = False) -> Path:
    root = Path(path).expanduser() if path else default_demo_dir()
    root = root.absolute()
    if keep and root.is_dir() and not root.is_symlink() and (root / MARKER).exists():
        return root  # what the user changed there last time, as they left it
    if root.exists():
        if root.is_symlink() or not root.is_dir():
            raise HomeError(f"{root} is not a folder; choose another --dir")
        if any(root.iterdir()) and not (root / MARKER).exists():
            raise HomeError(f"{root} is not empty and was not built by `memdeck demo`; "
                            "choose another --dir")
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / MARKER).write_text("built by memdeck demo\n", encoding="utf-8")
    (root / "config.toml").write_text(CONFIG, encoding="utf-8")
    now = clock.now()
    rng = random.Random(20261202)

    ids: dict[str, str] = {}
    plan: list[Planned] = []
    for s in SESSIONS:
        last = now - s.hours_ago * 3600
        start = last - 60 * (2 + len(s.turns))
        ids[s.key] = uuid7(int(start * 1000), rng)
        plan.append((s, start, last))
    files: dict[str, Path] = {}
    for s, start, last in plan:
        files[s.key] = _write_rollout(root, s, ids[s.key], start, last, ids)
    bad_start = now - UNREADABLE_HOURS_AGO * 3600
    bad = _rollout_path(root, bad_start, uuid7(int(bad_start * 1000), rng), False)
    bad.write_bytes(b"\x00" * 4096)
    os.utime(bad, (bad_start, bad_start))

    mtimes = {k: int(p.stat().st_mtime) for k, p in files.items()}
    _write_state_db(root, plan, ids, files, mtimes)
    selected = _write_pipeline_db(root, plan, ids, files, mtimes, now, rng)
    write_memory_root(root / "memories", selected, now - 26 * 3600)
    return root


def _rollout_path(root: Path, start: float, tid: str, archived: bool) -> Path:
    local = datetime.fromtimestamp(start)  # Codex names files in local time
    name = f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{tid}.jsonl"
    folder = root / "archived_sessions" if archived else (
        root / "sessions" / local.strftime("%Y") / local.strftime("%m") / local.strftime("%d"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def _write_rollout(root: Path, s: DemoSession, tid: str, start: float, last: float,
                   ids: dict[str, str]) -> Path:
    path = _rollout_path(root, start, tid, s.archived)
    data = ("\n".join(render_session(s, tid, start, ids)) + "\n").encode("utf-8")
    if s.compressed:
        import zstandard

        path = path.with_name(path.name + ".zst")
        path.write_bytes(zstandard.ZstdCompressor(level=3).compress(data))
    else:
        path.write_bytes(data)
    os.utime(path, (last, last))
    return path


def _write_state_db(root: Path, plan: list[Planned], ids: dict[str, str],
                    files: dict[str, Path], mtimes: dict[str, int]) -> None:
    db = root / "state_5.sqlite"
    create_state_db(db)
    conn = sqlite3.connect(db)
    with conn:
        for s, start, _last in plan:
            first = next((t[1] for t in s.turns if t[0] == "user"), "")
            src = s.source if isinstance(s.source, str) else json.dumps(s.source)
            mode = s.state_mode or ("disabled" if s.memory_off_later else "enabled")
            conn.execute(
                "INSERT INTO threads (id, rollout_path, created_at, updated_at, source, "
                "model_provider, cwd, title, sandbox_policy, approval_mode, has_user_event, "
                "archived, first_user_message, memory_mode, preview, created_at_ms, "
                "updated_at_ms, git_branch, cli_version) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (ids[s.key], str(files[s.key]), int(start), mtimes[s.key], src, "openai",
                 s.cwd, first[:80], "workspace-write", "on-request", int(bool(first)),
                 int(s.archived), first, mode, first, int(start * 1000),
                 mtimes[s.key] * 1000, s.branch, "0.150.0"))
    conn.close()
    # as a Codex that indexed these rollouts long ago leaves it; without it Codex's first start
    # re-indexes them all and resets the `polluted` thread to `enabled`
    rel = [p.relative_to(root).as_posix() for p in files.values()]
    mark_backfill_complete(db, max((r for r in rel if r.startswith("sessions/")), default=None),
                           max(mtimes.values(), default=0))


def _write_pipeline_db(root: Path, plan: list[Planned], ids: dict[str, str],
                       files: dict[str, Path], mtimes: dict[str, int], now: float,
                       rng: random.Random) -> dict[str, SelectedMemory]:
    """Codex's pipeline DB for the demo; returns the memories phase 2 selected, by session key."""
    from .content import raw_memory_for, rollout_summary_for

    db = root / "memories_1.sqlite"
    create_memories_db(db)
    conn = sqlite3.connect(db)
    selected: dict[str, SelectedMemory] = {}
    pruned: dict[str, tuple[int, int, int]] = {}  # thread: watermark, extracted, pruned at
    n = int(now)
    with conn:
        for s, _start, _last in plan:
            p, tid, m = s.pipeline, ids[s.key], mtimes[s.key]
            job: JobRow | None = None
            if p.get("extracted"):
                row: dict[str, Any] = dict(
                    thread_id=tid, source_updated_at=m, raw_memory=raw_memory_for(s),
                    rollout_summary=rollout_summary_for(s), rollout_slug=p.get("slug"),
                    generated_at=min(n, m + 7 * 3600),
                    usage_count=p.get("usage") or None,
                    last_usage=n - 86400 if p.get("usage") else None,
                    selected_for_phase2=int(bool(p.get("selected"))),
                    selected_for_phase2_source_updated_at=m if p.get("selected") else None)
                conn.execute(f"INSERT INTO stage1_outputs ({', '.join(row)}) VALUES "
                             f"({', '.join('?' * len(row))})", tuple(row.values()))
                if p.get("selected"):
                    selected[s.key] = SelectedMemory(
                        tid, m, row["raw_memory"], row["rollout_summary"], row["rollout_slug"],
                        str(files[s.key]), s.cwd, s.branch)
                job = ("done", None, m + 6 * 3600, m + 7 * 3600, None, None, 3, None, m, m)
            elif p.get("no_output"):
                job = ("done", None, m + 6 * 3600, m + 6 * 3600 + 40, None, None, 3, None, m, m)
            elif p.get("pruned_after_days"):  # extracted by memdeck, pruned by a later run
                job = ("done", None, m + 6 * 3600, m + 7 * 3600, None, None, 3, None, m, m)
                pruned[tid] = (m, m + 7 * 3600, m + p["pruned_after_days"] * 86400)
            elif p.get("failed"):
                job = ("error", None, n - 20 * 60, n - 19 * 60, None, n + 40 * 60, 2,
                       p["failed"], m, None)
            elif p.get("running"):
                job = ("running", str(uuid.UUID(int=rng.getrandbits(128))), n - 25 * 60, None,
                       n + 35 * 60, None, 3, None, m, None)
            if job:
                conn.execute(
                    "INSERT INTO jobs (kind, job_key, status, worker_id, started_at, "
                    "finished_at, lease_until, retry_at, retry_remaining, last_error, "
                    "input_watermark, last_success_watermark, ownership_token) "
                    "VALUES ('memory_stage1', ?,?,?,?,?,?,?,?,?,?,?,?)",
                    (tid, *job, str(uuid.UUID(int=rng.getrandbits(128), version=4))
                     if job[0] == "running" else None))
        last_ok = max((r.source_updated_at for r in selected.values()), default=0)
        pending_wm = max(mtimes.values())
        conn.execute(
            "INSERT INTO jobs (kind, job_key, status, started_at, finished_at, retry_remaining, "
            "input_watermark, last_success_watermark) VALUES "
            "('memory_consolidate_global', 'global', 'pending', ?, ?, 3, ?, ?)",
            (n - 26 * 3600 - 300, n - 26 * 3600, pending_wm, last_ok))
    conn.close()
    _write_extract_log(root, pruned)
    return selected


def _write_extract_log(root: Path, pruned: dict[str, tuple[int, int, int]]) -> None:
    """What memdeck's own DB keeps of those runs (index/extract_log.py): Codex's tables keep
    the job and no trace of the pruning."""
    from ..codex.home import CodexHome
    from ..index.extract_log import ExtractOutcome, PrunedMemory, record_outcome, record_pruned
    from ..store import Store

    if not pruned:
        return
    home = CodexHome(root)
    home.ensure_memdeck_dir()
    store = Store(home.memdeck_db)
    days = home.config.max_unused_days
    try:
        with store.transaction() as c:
            for tid, (wm, done, at) in pruned.items():  # v1: the demo's memories_1.sqlite
                record_outcome(c, "v1", ExtractOutcome(tid, wm, "extracted", done))
                record_pruned(c, "v1", [PrunedMemory(tid, wm, done, None, None, at, days)])
    finally:
        store.close()

