"""Phase 2 into a reviewable proposal (DESIGN §4): nothing reaches the live memory root here.

`consolidate` takes the global lease, copies the live root into
`memdeck/proposals/<id>/workspace`, syncs the inputs there with Codex's names and layouts,
writes `phase2_workspace_diff.md`, runs the consolidation (the offline merge), validates the
result, scans what it adds for secrets, and stores the proposal as pending with the digest
of the live root it started from. Accepting it is a separate step.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import secrets as _random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..backends.offline_phase2 import merge_memory, merge_summary, merge_summary_v2
from ..codex.pipeline_db import PipelineDB
from ..errors import HomeError, MemdeckError, NotFound
from ..redact import find_secrets
from .workspace import (
    DIFF_FILE,
    copy_root,
    prune_extension_resources,
    render_diff_file,
    select_inputs,
    sync_inputs,
    validate_artifacts,
    workspace_diff,
)

SKIP = {".git", DIFF_FILE}


@dataclass(frozen=True)
class Proposal:
    id: str
    created_at: float
    status: str
    backend: str
    model: str
    threads: list[str]
    files: list[dict[str, str]]
    base_state: str
    secrets: list[dict[str, Any]]
    problems: list[str]
    reason: str | None = None
    version: str = "v1"  # the memory root it was made for: memories/ (v1) or memories_v2/ (v2)

    def to_json(self) -> dict[str, Any]:
        from ..clock import iso_utc

        return {"id": self.id, "status": self.status, "created_at": iso_utc(self.created_at),
                "backend": self.backend, "model": self.model, "threads": self.threads,
                "files": self.files, "secrets": self.secrets, "problems": self.problems,
                "reason": self.reason, "version": self.version}


def _files(root: Path) -> dict[str, Path]:
    if not root.is_dir():
        return {}
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if (p.is_file() or p.is_symlink()) and not (set(p.relative_to(root).parts) & SKIP)}


def root_state(root: Path) -> str:
    """A digest of every file's path and bytes (`.git` aside): "has the root changed?"."""
    h = hashlib.sha256()
    for rel, p in _files(root).items():
        h.update(rel.encode() + b"\0")
        h.update(os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def changed_files(live: Path, ws: Path) -> list[dict[str, str]]:
    a, b = _files(live), _files(ws)
    out = []
    for rel in sorted(set(a) | set(b)):
        if rel not in b:
            out.append({"path": rel, "change": "D"})
        elif rel not in a:
            out.append({"path": rel, "change": "A"})
        elif a[rel].read_bytes() != b[rel].read_bytes():
            out.append({"path": rel, "change": "M"})
    return out


def _text(p: Path | None) -> list[str]:
    if p is None or not p.exists():
        return []
    return p.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)


def unified_diff(live: Path, ws: Path, files: list[dict[str, str]]) -> str:
    out: list[str] = []
    for f in files:
        rel = f["path"]
        old = _text(live / rel if f["change"] != "A" else None)
        new = _text(ws / rel if f["change"] != "D" else None)
        out += difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def _added_secrets(diff: str) -> list[dict[str, Any]]:
    found, path, line_no = [], "", 0
    for line in diff.splitlines():
        if line.startswith("+++ b/"):
            path = line[6:]
        elif line.startswith("@@"):
            line_no = int(line.split("+", 1)[1].split(",", 1)[0].split(" ", 1)[0]) - 1
        elif line.startswith("+"):
            line_no += 1
            found += [{"path": path, "line": line_no, "kind": s.kind, "preview": s.preview}
                      for s in find_secrets(line[1:])]
        elif not line.startswith("-"):
            line_no += 1
    return found


def consolidate(engine: Any, backend: str = "offline") -> Proposal | None:
    """Build a pending proposal; None when the memory is already up to date."""
    if backend not in ("offline", "openai"):
        raise MemdeckError(f"unknown backend {backend!r}; use offline or openai")
    home, cfg = engine.home, engine.home.config
    version = home.memory_version  # once: the root, the inputs and the checks agree
    root = home.memory_root
    if root.is_symlink():
        raise HomeError(f"{root} is a symlink; Codex and memdeck refuse it")
    now = engine.clock.now()
    sessions = {s.id: s for s in engine.sessions() if s.id}
    pid = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now)) + "-" + _random.token_hex(2)
    pdir = home.proposals_dir / pid
    ws = pdir / "workspace"
    db = PipelineDB.open(home)
    try:
        with db.global_lease(int(now), "consolidate"):
            selected = select_inputs(db.conn, sessions, cfg.max_raw_memories_for_consolidation,
                                     cfg.max_unused_days, int(now))
            base = root_state(root)
            pdir.mkdir(parents=True)
            if root.is_dir():
                copy_root(root, ws)
            else:
                ws.mkdir()
            sync_inputs(ws, selected, version)
            prune_extension_resources(ws, now)
            (ws / DIFF_FILE).write_text(render_diff_file(workspace_diff(ws)), encoding="utf-8")
            try:
                model, usage, phash = _consolidate(engine, backend, ws, selected, now,
                                                   version)
            except BaseException:
                shutil.rmtree(pdir, ignore_errors=True)  # nothing half-made is kept
                raise
            (ws / DIFF_FILE).unlink(missing_ok=True)
    finally:
        db.close()
    files = changed_files(root, ws)
    if not files:
        shutil.rmtree(pdir)
        return None
    diff = unified_diff(root, ws, files)
    (pdir / "proposal.diff").write_text(diff, encoding="utf-8")
    p = Proposal(pid, now, "pending", backend, model, [m.thread_id for m in selected],
                 files, base, _added_secrets(diff), validate_artifacts(ws, version),
                 version=version)
    with engine.store.transaction() as c:
        c.execute("INSERT INTO proposals (id, created_at, status, backend, model, threads, "
                  "files, base_state, secrets, problems, input_tokens, output_tokens, "
                  "prompt_hash, version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (p.id, p.created_at, p.status, p.backend, p.model, json.dumps(p.threads),
                   json.dumps(p.files), p.base_state, json.dumps(p.secrets),
                   json.dumps(p.problems), usage[0], usage[1], phash, p.version))
    return p


def _consolidate(engine: Any, backend: str, ws: Path, selected: list[Any],
                 now: float, version: str = "v1") -> tuple[str, tuple[int, int], str | None]:
    """Run the consolidation in the workspace: (model, (input, output tokens), prompt hash).
    V2 produces only memory_summary.md (codex-format §4.6)."""
    if backend == "offline":
        from ..backends.offline_phase1 import MODEL_NAME

        if version == "v2":
            (ws / "memory_summary.md").write_text(
                merge_summary_v2(_read(ws / "memory_summary.md"), selected), encoding="utf-8")
            return MODEL_NAME, (0, 0), None
        present = {p.stem for p in (ws / "rollout_summaries").glob("*.md")}
        memory = merge_memory(_read(ws / "MEMORY.md"), selected, present)
        (ws / "MEMORY.md").write_text(memory, encoding="utf-8")
        (ws / "memory_summary.md").write_text(
            merge_summary(_read(ws / "memory_summary.md") or "v1\n", memory, now),
            encoding="utf-8")
        return MODEL_NAME, (0, 0), None
    from memdeck import prompts

    from ..backends.openai_client import build_client, resolve_backend_config
    from ..backends.openai_phase2 import run_agent
    from ..call_log import log_call, prompt_hash

    cfg = resolve_backend_config(engine._settings_file("memdeck").read(), engine.home.config)
    ext = (ws / "extensions").is_dir()
    name = "consolidation_v2" if version == "v2" else "consolidation"
    prompt = prompts.render(
        name, memory_root=str(ws), phase2_workspace_diff_file=DIFF_FILE,
        extensions_block=("\nRead every `extensions/<name>/instructions.md` before you start, "
                          "and remove memories that come only from deleted extension "
                          "resources.\n") if ext else "")
    started = time.perf_counter()
    error, run = None, None
    try:
        run = run_agent(build_client(cfg), cfg, prompt, ws)
    except MemdeckError as e:
        error = str(e)
        raise
    finally:
        log_call(engine.store.conn(), backend="openai", purpose="phase2",
                 prompt_name=name, prompt_hash=prompt_hash(prompt), model=cfg.
                 consolidation_model, thread_id=None,
                 input_tokens=run.input_tokens if run else 0,
                 output_tokens=run.output_tokens if run else 0,
                 duration_ms=int((time.perf_counter() - started) * 1000), error=error)
    return (cfg.consolidation_model, (run.input_tokens, run.output_tokens),
            prompt_hash(prompt))


def _read(p: Path) -> str:
    return p.read_text(encoding="utf-8") if p.is_file() else ""


def _row(r: Any) -> Proposal:
    return Proposal(r["id"], r["created_at"], r["status"], r["backend"], r["model"],
                    json.loads(r["threads"]), json.loads(r["files"]), r["base_state"],
                    json.loads(r["secrets"]), json.loads(r["problems"]), r["reason"],
                    r["version"] or "v1")


def list_proposals(engine: Any) -> list[Proposal]:
    rows = engine.store.conn().execute("SELECT * FROM proposals ORDER BY created_at DESC, id "
                                       "DESC").fetchall()
    return [_row(r) for r in rows]


def get(engine: Any, pid: str) -> Proposal:
    rows = [p for p in list_proposals(engine) if p.id == pid or p.id.startswith(pid)]
    if len(rows) != 1:
        raise NotFound(f"no proposal {pid!r} (see `memdeck proposals`)" if not rows else
                       f"{pid!r} matches {len(rows)} proposals; give more of the id")
    return rows[0]


def diff_text(engine: Any, pid: str) -> str:
    p = get(engine, pid)
    path = engine.home.proposals_dir / p.id / "proposal.diff"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def reject(engine: Any, pid: str, reason: str | None) -> Proposal:
    p = get(engine, pid)
    if p.status != "pending":
        raise MemdeckError(f"proposal {p.id} is {p.status}, not pending")
    with engine.store.transaction() as c:
        c.execute("UPDATE proposals SET status = 'rejected', decided_at = ?, reason = ? "
                  "WHERE id = ?", (engine.clock.now(), reason, p.id))
    ws = engine.home.proposals_dir / p.id / "workspace"
    shutil.rmtree(ws, ignore_errors=True)  # the diff stays, as the record of what was refused
    return get(engine, p.id)
