#!/usr/bin/env python3
"""What one Codex binary does that memdeck depends on, as JSON (bench/codex_drift.py runs it
for the pinned release and for `latest`, each in its own process so that the oracle's
runner finds that binary: `MEMDECK_CODEX_BIN`, `MEMDECK_CODEX_VERSION`).

Everything is measured on the binary against the fake Responses server on 127.0.0.1
(tests/codex_oracle), never read from source:
- `features`: `codex features list` (name -> stage and default);
- `databases`: the migrations and `sqlite_master` names of the databases Codex creates;
- `rollout`: the line types, payload types and field names of a `codex exec` rollout with a
  shell call (its output's first line too: the tool-output header);
- `memories_keys_ignored`: which `[memories]` keys memdeck writes Codex says it ignores;
- `injected`: the developer text a turn carries for a v1 memory_summary.md (and whether it is
  the summary byte for byte);
- `phase1` / `phase2`: the models, the phase-1 JSON schema's fields and the phase-2 request's
  tools, from Codex running its own pipeline on an idle session.

    .venv/bin/python bench/codex_probe.py --out probe.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests")]

from codex_oracle.capture_schema import DATABASES, dump_db  # noqa: E402
from codex_oracle.fake_responses import (  # noqa: E402
    FakeResponses,
    call,
    text,
    valid_phase2_files,
)
from codex_oracle.runner import (  # noqa: E402
    age_rollouts,
    codex_version,
    pipeline_finished,
    require_codex,
    run_exec,
    write_config,
)

SUMMARY = "v1\n\n## User Profile\n- probe: the user keeps tabs, never spaces\n"
FIXTURE = REPO / "tests" / "fixtures" / "rollouts" / "cli-preferences.jsonl"
THREAD = "01a23054-a1fc-7969-acf0-6947af085e83"


def features(binary: Path, home: Path) -> dict[str, list[str]]:
    home.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([str(binary), "features", "list"], capture_output=True, text=True,
                       env={**os.environ, "CODEX_HOME": str(home)}, timeout=60)
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[-1] in ("true", "false"):
            out[parts[0]] = [" ".join(parts[1:-1]), parts[-1]]
    return out


def rollout_shape(path: Path) -> dict[str, Any]:
    types: set[str] = set()
    fields: set[str] = set()
    first_output_line = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        payload = line.get("payload")
        kind = str(line.get("type"))
        sub = payload.get("type") if isinstance(payload, dict) else None
        name = f"{kind}/{sub}" if sub else kind
        types.add(name)
        fields.update(f"{kind}.{k}" for k in line if k not in ("type", "payload"))
        if isinstance(payload, dict):
            fields.update(f"{name}.{k}" for k in payload)
            meta = payload.get("metadata")
            if isinstance(meta, dict):
                fields.update(f"{name}.metadata.{k}" for k in meta)
            if sub in ("function_call_output", "custom_tool_call_output") \
                    and not first_output_line:
                out = payload.get("output")
                first_output_line = (out if isinstance(out, str) else json.dumps(out))[:40]
    return {"types": sorted(types), "fields": sorted(fields),
            "tool_output_starts": first_output_line}


def probe(work: Path) -> dict[str, Any]:
    binary = require_codex()
    result: dict[str, Any] = {"version": codex_version(binary)}
    result["features"] = features(binary, work / "features-home")

    # 1. a fresh home, one exec with a shell call: databases and rollout shape
    home = work / "exec-home"
    keys = {"max_rollout_age_days": 30, "min_rollout_idle_hours": 6,
            "max_raw_memories_for_consolidation": 256, "max_unused_days": 30,
            "max_rollouts_per_startup": 16, "generate_memories": True, "use_memories": True}
    write_config(home, memories=True, **keys)  # the keys memdeck writes, at their defaults
    with FakeResponses() as server:
        server.push(call("exec_command", {"cmd": "printf 'alpha\\n'; exit 3"}),
                    text("done"))
        rc, _out, err = run_exec(home, server, "run it", timeout=120)
    result["exec_ok"] = rc == 0
    result["memories_keys_ignored"] = sorted(
        k for k in keys if f"memories.{k}` is ignored" in err)
    result["databases"] = {}
    for name in DATABASES:
        if (home / name).exists():
            d = dump_db(home / name)
            result["databases"][name] = {
                "migrations": [f"{m['version']} {m['description']}" for m in d["migrations"]],
                "objects": sorted(o["name"] for o in d["schema"])}
    [rollout] = list((home / "sessions").rglob("rollout-*.jsonl")) or [None]
    result["rollout"] = rollout_shape(rollout) if rollout else {}

    # 2. the read path: what a turn carries for a v1 memory_summary.md
    home = work / "read-home"
    write_config(home, memories=True, version="v1")
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "memory_summary.md").write_text(SUMMARY, encoding="utf-8")
    with FakeResponses() as server:
        run_exec(home, server, "hello", timeout=120)
        turns = server.turns()
    dev = "".join(turns[0].input_texts("developer")) if turns else ""
    start = dev.find("## Memory")
    shown = dev[start:start + 1500].replace(str(home), "<home>") if start >= 0 else ""
    result["injected"] = {"summary_byte_for_byte": SUMMARY.strip() in dev, "text": shown}

    # 3. Codex's own pipeline on an idle session: phase-1 and phase-2 requests
    home = work / "pipeline-home"
    day = home / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    shutil.copyfile(FIXTURE, day / f"rollout-2026-12-01T10-00-00-{THREAD}.jsonl")
    write_config(home, memories=True, min_rollout_idle_hours=0, version="v1")
    age_rollouts(home, 2)
    with FakeResponses(phase2_files=valid_phase2_files("v1")) as server:
        run_exec(home, server, "next", keep_open=8, until=pipeline_finished(home, "v1"),
                 timeout=180)
        p1, p2 = server.phase1(), server.phase2()
    result["phase1"] = {"requests": len(p1), "model": p1[0].model if p1 else None,
                        "schema_fields": sorted((p1[0].schema() or {}).get("properties", {}))
                        if p1 else []}
    tools = sorted({str(t.get("name") or t.get("type")) for r in p2
                    for t in (r.body.get("tools") or []) if isinstance(t, dict)})
    result["phase2_body_keys"] = sorted({k for r in p2 for k in r.body}) if p2 else []
    result["phase2"] = {"requests": len(p2), "model": p2[0].model if p2 else None,
                        "tools": tools}
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdeck-probe-") as tmp:
        data = probe(Path(tmp))
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
