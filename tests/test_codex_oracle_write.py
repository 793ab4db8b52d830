"""Codex uses what memdeck writes: proved with the real `codex` 0.171.0 binary.

Each test starts from a home Codex has already run in once (so its own databases exist and it
has indexed the sessions, which are still too recent for its phase 1), then runs the real
`memdeck extract` + `memdeck consolidate` + `memdeck accept` (offline backend: no model for
memdeck) and then `codex exec` again, with the fake Responses server playing Codex's model:

- the next request carries memdeck's `memory_summary.md` byte for byte (V2: reassembled from
  the pieces Codex cut it into, each at most 8,900 bytes);
- Codex's own next phase 2 ends `done` with no `last_error`, and its
  `phase2_workspace_diff.md` (read from disk while the consolidation agent's request is in
  flight) lists only the one real change, a note the user added: the baseline memdeck left
  was kept (no file listed as added) and `raw_memories.md` was not rewritten;
- on V2, memdeck's stage-1 rows are in `memories_v2_1.sqlite` with an empty raw memory, no
  `memories/` folder appeared, and a citation in the next session counts in the V2 database.

Between the accept and the second run the test moves the global job's `finished_at` back
seven hours: Codex skips phase 2 for six hours after a success, and the test plays that time.

Also here: memdeck's read-path preview holds exactly the (truncated) summary Codex sends and
cuts its text as Codex does; memdeck's V2 phase-1 input has the rows Codex's own phase 1 sends
for the same rollout, and the same strict schema.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from codex_oracle.fake_responses import FakeResponses, Request, text
from codex_oracle.runner import jobs, run_exec, write_config
from conftest import FIXTURES

MEMDECK = Path(sys.executable).with_name("memdeck")
BEGINS = "========= MEMORY_SUMMARY BEGINS =========\n"
ENDS = "\n========= MEMORY_SUMMARY ENDS ========="
FIRST = "01a23054-a1fc-7969-acf0-6947af085e83"  # cli-preferences.jsonl
SECOND = "01a23aaa-1111-7222-8333-444455556666"  # the same session, another project
GLOBAL = "memory_consolidate_global"


def memdeck(*argv: str) -> subprocess.CompletedProcess[str]:
    if not MEMDECK.exists():
        pytest.skip(f"{MEMDECK} is not installed (pip install -e .)")
    r = subprocess.run([str(MEMDECK), *argv], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"memdeck {' '.join(argv)}: {r.stderr[-2000:]}"
    return r


def add_sessions(home: Path) -> None:
    """Two interactive sessions ten minutes old: memdeck may extract them when named, Codex
    (idle rule: one hour) leaves them alone."""
    day = home / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True, exist_ok=True)
    src = (FIXTURES / "cli-preferences.jsonl").read_text(encoding="utf-8")
    other = src.replace(FIRST, SECOND).replace("/home/dev/src/widget", "/home/dev/src/infra")
    for tid, body in ((FIRST, src), (SECOND, other)):
        p = day / f"rollout-2026-12-01T06-39-42-{tid}.jsonl"
        p.write_text(body, encoding="utf-8")
        t = time.time() - 600
        os.utime(p, (t, t))


def fresh_home(tmp_path: Path, version: str) -> tuple[Path, Path]:
    home = tmp_path / "home"
    write_config(home, memories=True, min_rollout_idle_hours=1)
    if version == "v1":
        (home / "memories").mkdir()  # Codex 0.171 picks V1 because this folder exists
    add_sessions(home)
    return home, home / ("memories" if version == "v1" else "memories_v2")


def codex_db(home: Path, version: str) -> Path:
    return home / ("memories_1.sqlite" if version == "v1" else "memories_v2_1.sqlite")


def global_job(home: Path, version: str) -> dict[str, Any]:
    return next(j for j in jobs(home, version) if j["kind"] == GLOBAL)


def memory_text(req: Request) -> str:
    """The read-path text of a turn request: its developer input_text parts, joined."""
    return "".join(req.input_texts("developer"))


def memory_parts(req: Request) -> list[str]:
    """The developer parts that hold the read-path text (V2: several, in order)."""
    parts = req.input_texts("developer")
    start = next(i for i, p in enumerate(parts) if p.startswith("## Memory"))
    end = next(i for i in range(start, len(parts)) if ENDS in parts[i])
    return parts[start:end + 1]


def between_markers(text_: str) -> str:
    return text_.split(BEGINS, 1)[1].split(ENDS, 1)[0]


def memdeck_pipeline(home: Path) -> dict[str, Any]:
    memdeck("extract", FIRST, SECOND, "--home", str(home), "--backend", "offline")
    proposal = json.loads(memdeck("consolidate", "--home", str(home), "--backend", "offline",
                                  "--json").stdout)
    memdeck("accept", proposal["id"], "--home", str(home))
    return proposal


def codex_phase2_run(home: Path, root: Path, version: str, reply: str = "noted") -> dict:
    """`codex exec` with the first turn held open until Codex's phase 2 has finished (an exec
    that ends first leaves the global job `running` with a live lease for an hour); the
    workspace diff Codex wrote is read while its consolidation agent's request is served."""
    before = next((j["finished_at"] or 0 for j in jobs(home, version) if j["kind"] == GLOBAL),
                  0)
    seen: dict[str, Any] = {}

    def on_request(req: Request) -> None:
        if req.kind == "phase2" and "diff" not in seen:
            diff = root / "phase2_workspace_diff.md"
            seen["diff"] = diff.read_text(encoding="utf-8") if diff.exists() else None

    def responder(req: Request) -> Any:
        if req.kind != "turn" or "turn" in seen:
            return None
        seen["turn"] = req
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            job = next((j for j in jobs(home, version) if j["kind"] == GLOBAL), None)
            if job and job["status"] != "running" and (job["finished_at"] or 0) > before:
                break
            time.sleep(0.2)
        return text(reply)

    with FakeResponses(responder=responder, on_request=on_request) as server:
        rc, _, err = run_exec(home, server, "what do you remember about my projects?",
                              timeout=90)
        assert rc == 0, err[-2000:]
        assert not server.errors, server.errors
        seen["phase2_requests"] = len(server.phase2())
        seen["phase1_requests"] = len(server.phase1())
    return seen


def age_global_job(home: Path, version: str, hours: float = 7) -> None:
    conn = sqlite3.connect(codex_db(home, version))
    conn.execute("UPDATE jobs SET finished_at = finished_at - ? WHERE kind = ?",
                 (int(hours * 3600), GLOBAL))
    conn.commit()
    conn.close()


def status_lines(diff: str) -> list[str]:
    section = diff.split("## Status", 1)[1].split("## Diff", 1)[0]
    return [ln for ln in section.splitlines() if ln.startswith("- ")]


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_codex_reads_and_keeps_what_memdeck_accepted(tmp_path: Path, codex_bin: Path,
                                                     version: str) -> None:
    home, root = fresh_home(tmp_path, version)
    # Codex runs here once: its DBs, its index of the threads (too recent for its phase 1),
    # and a first phase 2 that finds no valid memory yet
    first = codex_phase2_run(home, root, version)
    assert first["phase1_requests"] == 0
    assert codex_db(home, version).exists()
    assert global_job(home, version)["status"] != "running"

    memdeck_pipeline(home)
    summary = (root / "memory_summary.md").read_text(encoding="utf-8")
    lock = root / ".codex-baseline" / ".git" / "codex-baseline.lock"
    left_by_memdeck = ((root / ".git" / "codex-baseline-version").read_bytes()
                       if (root / ".git" / "codex-baseline-version").exists() else None,
                       lock.is_file() and lock.stat().st_size == 0)
    if version == "v2":
        assert not (home / "memories").exists()  # V2 stays V2
        assert not (root / "MEMORY.md").exists() and not (root / "raw_memories.md").exists()
        conn = sqlite3.connect(codex_db(home, "v2"))
        rows = conn.execute("SELECT thread_id, raw_memory, rollout_summary FROM "
                            "stage1_outputs ORDER BY thread_id").fetchall()
        conn.close()
        assert [r[0] for r in rows] == [FIRST, SECOND]
        assert all(r[1] == "" and r[2].startswith("# ") for r in rows)
    else:
        raw = (root / "raw_memories.md").read_text(encoding="utf-8")
        assert raw.endswith("\n\n") and not raw.endswith("\n\n\n")

    # the note goes in the way every memdeck change does (staged, switched in whole): Codex
    # must find its baseline `.git` intact and see the note as the only change
    from memdeck.engine import Engine

    note = Engine.open(home).memory_note("The user drinks tea, never coffee.").path
    age_global_job(home, version)
    cite = (f"From memory.\n<oai-mem-citation>\n<citation_entries>\nmemory_summary.md:1-3|"
            f"note=[projects]\n</citation_entries>\n<rollout_ids>\n{SECOND}\n</rollout_ids>\n"
            "</oai-mem-citation>")
    seen = codex_phase2_run(home, root, version, reply=cite)

    # 1. the next session is shown memdeck's summary, byte for byte
    turn = seen["turn"]
    parts = memory_parts(turn)
    assert between_markers(memory_text(turn)) == summary.strip()
    assert all(len(p.encode("utf-8")) <= 8_900 for p in parts)
    # 2. Codex's own phase 2 ran its agent on memdeck's root and ended done
    assert seen["phase2_requests"] >= 1 and seen["phase1_requests"] == 0
    job = global_job(home, version)
    assert job["status"] == "done" and job["last_error"] is None, job
    # 3. ... and saw only the real change: the baseline memdeck made was kept
    assert seen["diff"] is not None
    assert status_lines(seen["diff"]) == [f"- A {note}"], seen["diff"][:3000]
    # memdeck left the repository as Codex leaves it: the version file and the empty lock
    assert left_by_memdeck == (b"1\n", True)
    assert (root / ".git" / "codex-baseline-version").read_bytes() == b"1\n"

    if version == "v2":  # 4. a citation in a V2 session counts in the V2 database
        conn = sqlite3.connect(codex_db(home, "v2"))
        used = dict(conn.execute("SELECT thread_id, usage_count FROM stage1_outputs"))
        conn.close()
        assert used == {FIRST: None, SECOND: 1}
        rows = json.loads(memdeck("memories", "--home", str(home), "--json").stdout)
        assert {r["thread_id"]: r["usage_count"] for r in rows} == {FIRST: 0, SECOND: 1}
        assert not (home / "memories").exists()


def test_memdeck_preview_is_what_codex_sends(tmp_path: Path, codex_bin: Path) -> None:
    """A V2 summary too big for one piece: memdeck's preview holds the same truncated summary
    Codex sends, split into pieces of at most 8,900 bytes as Codex splits its own text."""
    from memdeck.engine import Engine

    home = tmp_path / "home"
    write_config(home, memories=True)
    root = home / "memories_v2"
    root.mkdir(parents=True)
    lines = ["v1", "", "## User Profile"] + [
        f"- fact {i:05d}: the user likes é, ü and long lines of text {uuid.UUID(int=i)}"
        for i in range(400)]
    (root / "memory_summary.md").write_text("\n".join(lines) + "\n\n", encoding="utf-8")

    with FakeResponses() as server:
        rc, _, err = run_exec(home, server, "hello", timeout=90)
        assert rc == 0, err[-2000:]
        turn = server.turns()[0]
    codex_parts = memory_parts(turn)
    codex_summary = between_markers("".join(codex_parts))
    assert len(codex_parts) == 2 and len(codex_parts[0].encode()) == 8_900

    preview = Engine.open(home).memory_injected()
    assert preview.active and preview.version == "v2"
    assert between_markers("".join(preview.messages)) == codex_summary
    assert preview.text == codex_summary  # the summary part: the same bytes Codex sends
    assert "…" in codex_summary and re.search(r"…\d+ tokens truncated…", preview.text)
    assert len(preview.messages) >= 2
    assert all(len(m.encode("utf-8")) <= 8_900 for m in preview.messages)
    assert preview.messages[0].startswith("## Memory")
    assert preview.messages[-1].endswith(ENDS.strip() + "\n")


def _rows(rendered: str) -> list[tuple[str, Any]]:
    """`[label]\\n<json>\\n` rows (and omission markers) as (label, parsed JSON or None)."""
    out = []
    for m in re.finditer(r"^\[([^\]\n]+)\]\n(\{.*\})?$", rendered, re.M):
        out.append((m.group(1), json.loads(m.group(2)) if m.group(2) else None))
    return out


def test_memdeck_v2_phase1_input_matches_codex(tmp_path: Path, codex_bin: Path) -> None:
    """Codex's own V2 phase 1 on a session, and memdeck's input for the same rollout: the same
    labelled rows in the same order, the same items (memdeck redacts more and leaves out
    Codex's per-message bookkeeping), and the same strict two-field schema."""
    from memdeck.engine.backends.replies import STAGE_ONE_OUTPUT_SCHEMA_V2
    from memdeck.engine.codex.rollout import read_rollout
    from memdeck.engine.phase1.input_v2 import build_input_v2
    from memdeck.engine.redact import redact

    home = tmp_path / "home"
    write_config(home, memories=True, min_rollout_idle_hours=1)
    add_sessions(home)
    for p in (home / "sessions").rglob("*.jsonl"):
        t = time.time() - 3 * 3600
        os.utime(p, (t, t))
    with FakeResponses(first_turn_delay=4) as server:
        rc, _, err = run_exec(home, server, "hello", timeout=90)
        assert rc == 0, err[-2000:]
        asked = [r for r in server.phase1() if FIRST in "".join(r.input_texts("user"))]
    assert asked, "Codex did not extract the session"
    req = asked[0]
    assert req.schema() == STAGE_ONE_OUTPUT_SCHEMA_V2
    codex_text = "".join(req.input_texts("user"))
    codex_rows = _rows(codex_text)
    rollout = next((home / "sessions").rglob(f"*{FIRST}.jsonl"))
    mine = _rows(build_input_v2(read_rollout(rollout)).text)
    assert [label for label, _ in mine] == [label for label, _ in codex_rows]
    for (_, ours), (_, theirs) in zip(mine, codex_rows, strict=True):
        theirs = json.loads(redact(json.dumps(theirs, ensure_ascii=False)))
        theirs.pop("internal_chat_message_metadata_passthrough", None)
        assert ours == theirs
