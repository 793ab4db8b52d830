#!/usr/bin/env python3
"""Follow Codex releases: run the whole oracle suite and the probe (bench/codex_probe.py) on
the pinned Codex and on another release (`latest` by default), side by side.

Codex ships every few days; memdeck is proved against one pinned release
(tests/codex_oracle/runner.py `PINNED_CODEX`, `.ci/run`). This installs the other release
with npm into its own cache folder (`~/.cache/memdeck-codex-<version>`), runs
`tests/test_codex_oracle_*.py` and `tests/test_status_codex_prune.py` against each binary
(`MEMDECK_CODEX_BIN`, `MEMDECK_CODEX_VERSION`, `CI=1` so that nothing skips), and prints one
table of every check (pinned vs other), then what it sees changed: the databases'
migrations, the rollout line types and fields, the feature flags, the `[memories]` keys Codex
ignores, the injected memory text, the phase-1 and phase-2 request shapes.

    .venv/bin/python bench/codex_drift.py [--version latest|X.Y.Z] [--jobs 2]
        [--record docs/codex-compat.md]

`--record` writes the report into the file between `<!-- codex-drift -->` and
`<!-- /codex-drift -->`. Exits 1 when a check passes on the pinned release and fails on the
other one (a newer Codex would break a user).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests")]
from codex_oracle.runner import PINNED_CODEX, codex_version  # noqa: E402

from memdeck.engine.clock import SystemClock  # noqa: E402

ORACLE = sorted(str(p.relative_to(REPO)) for p in (REPO / "tests").glob("test_codex_oracle_*.py"))
ORACLE.append("tests/test_status_codex_prune.py")
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
MARKERS = ("<!-- codex-drift -->", "<!-- /codex-drift -->")


def resolve(version: str) -> str:
    if version != "latest":
        return version
    r = subprocess.run(["npm", "view", "@openai/codex", "version"], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0 or not r.stdout.strip():
        raise SystemExit(f"npm cannot say which Codex is latest: {r.stderr.strip()[:200]}")
    return r.stdout.strip().splitlines()[-1]


def install(version: str) -> Path:
    """The `codex` binary of `version`, installed once into its cache folder."""
    for folder in (CACHE / "memdeck-codex", CACHE / f"memdeck-codex-{version}"):
        b = folder / "node_modules" / ".bin" / "codex"
        if b.exists() and codex_version(b) == version:
            return b
    folder = CACHE / f"memdeck-codex-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["npm", "install", "--prefix", str(folder), "--save-exact", "--no-audit",
                        "--no-fund", "--loglevel=error", f"@openai/codex@{version}"],
                       capture_output=True, text=True, timeout=900)
    b = folder / "node_modules" / ".bin" / "codex"
    if r.returncode != 0 or codex_version(b) != version:
        raise SystemExit(f"cannot install @openai/codex@{version}: {r.stderr.strip()[-300:]}")
    return b


def _env(binary: Path, version: str) -> dict[str, str]:
    return {**os.environ, "MEMDECK_CODEX_BIN": str(binary), "MEMDECK_CODEX_VERSION": version,
            "CI": "1"}


def oracle(binary: Path, version: str, jobs: int, work: Path) -> dict[str, str]:
    """test id -> passed / failed / skipped, on this binary."""
    xml = work / f"oracle-{version}.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-n", str(jobs), f"--junitxml={xml}", *ORACLE], cwd=REPO,
                   env=_env(binary, version), capture_output=True, text=True, timeout=3600)
    out: dict[str, str] = {}
    if not xml.exists():
        return out
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                state = "failed"
            elif child.tag == "skipped":
                state = "skipped"
        out[name] = state
    return out


def probe(binary: Path, version: str, work: Path) -> dict[str, Any]:
    out = work / f"probe-{version}.json"
    r = subprocess.run([sys.executable, str(REPO / "bench" / "codex_probe.py"), "--out",
                        str(out)], cwd=REPO, env=_env(binary, version), capture_output=True,
                       text=True, timeout=1800)
    if r.returncode != 0 or not out.exists():
        return {"error": (r.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def _set_diff(a: list[str], b: list[str]) -> str:
    new, gone = sorted(set(b) - set(a)), sorted(set(a) - set(b))
    parts = ([f"new: {', '.join(new)}"] if new else []) + (
        [f"gone: {', '.join(gone)}"] if gone else [])
    return "; ".join(parts) or "same"


def changes(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, how it changed) between two probes."""
    if "error" in a or "error" in b:
        return [("probe", f"pinned: {a.get('error', 'ok')}; other: {b.get('error', 'ok')}")]
    rows = []
    for db in sorted(set(a["databases"]) | set(b["databases"])):
        x, y = a["databases"].get(db, {}), b["databases"].get(db, {})
        rows.append((f"{db} migrations", f"{len(x.get('migrations', []))} → "
                     f"{len(y.get('migrations', []))} ("
                     f"{_set_diff(x.get('migrations', []), y.get('migrations', []))})"))
        rows.append((f"{db} tables and indexes",
                     _set_diff(x.get("objects", []), y.get("objects", []))))
    rows.append(("rollout line types", _set_diff(a["rollout"].get("types", []),
                                                 b["rollout"].get("types", []))))
    rows.append(("rollout fields", _set_diff(a["rollout"].get("fields", []),
                                             b["rollout"].get("fields", []))))
    rows.append(("tool output starts", f"{a['rollout'].get('tool_output_starts')!r} → "
                 f"{b['rollout'].get('tool_output_starts')!r}"))
    fa, fb = a["features"], b["features"]
    changed = sorted(k for k in set(fa) & set(fb) if fa[k] != fb[k])
    rows.append(("feature flags", _set_diff(sorted(fa), sorted(fb))
                 + (f"; changed: {', '.join(f'{k} {fa[k]} → {fb[k]}' for k in changed)}"
                    if changed else "")))
    mem = {k: fb.get(k) for k in sorted(set(fa) | set(fb)) if "memor" in k}
    rows.append(("memory flags (other)", ", ".join(f"{k}: {v[0]}, default {v[1]}" if v else
                                                   f"{k}: gone" for k, v in mem.items())))
    ignored = [", ".join(p["memories_keys_ignored"]) or "none" for p in (a, b)]
    rows.append(("[memories] keys memdeck writes, ignored", f"{ignored[0]} → {ignored[1]}"))
    rows.append(("injected summary byte for byte", f"{a['injected']['summary_byte_for_byte']}"
                 f" → {b['injected']['summary_byte_for_byte']}"))
    rows.append(("injected memory text", "same" if a["injected"]["text"]
                 == b["injected"]["text"] else "changed (the probe JSON holds both)"))
    for phase in ("phase1", "phase2"):
        rows.append((f"{phase} request", f"{a[phase]} → {b[phase]}" if a[phase] != b[phase]
                     else f"same: {b[phase]}"))
    rows.append(("phase2 body keys", _set_diff(a.get("phase2_body_keys", []),
                                               b.get("phase2_body_keys", []))))
    return rows


def report(pinned: str, other: str, checks: tuple[dict[str, str], dict[str, str]],
           seen: list[tuple[str, str]], took: float) -> tuple[str, bool]:
    a, b = checks
    names = sorted(set(a) | set(b))
    broken = [n for n in names if a.get(n) == "passed" and b.get(n) != "passed"]
    day = time.strftime("%Y-%m-%d", time.gmtime(SystemClock().now()))
    lines = [f"Codex drift, {day}: pinned {pinned} vs {other} ({took:.0f} s)", "",
             f"| check | {pinned} | {other} |", "| --- | --- | --- |"]
    lines += [f"| `{n}` | {a.get(n, '—')} | {b.get(n, '—')} |" for n in names]
    lines += ["", f"{sum(v == 'passed' for v in b.values())} of {len(names)} checks pass on "
              f"{other}; {len(broken)} that pass on {pinned} do not"
              + (f": {', '.join(broken)}" if broken else ""), "",
              f"| what | {pinned} → {other} |", "| --- | --- |"]
    lines += [f"| {what} | {how.replace('|', '/')} |" for what, how in seen]
    return "\n".join(lines), bool(broken)


def record(path: Path, text: str) -> None:
    doc = path.read_text(encoding="utf-8")
    start, end = MARKERS
    block = f"{start}\n{text}\n{end}"
    if start in doc and end in doc:
        doc = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, doc,
                     flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n## Drift: the pinned Codex against a newer one\n\n" \
            + block + "\n"
    path.write_text(doc, encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default="latest", help="the other release (default latest)")
    ap.add_argument("--pinned", default=PINNED_CODEX)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--record", type=Path, help="write the report into this Markdown file")
    args = ap.parse_args()
    started = time.monotonic()
    other = resolve(args.version)
    print(f"codex drift: pinned {args.pinned}, other {other} ({args.version})", flush=True)
    bins = {v: install(v) for v in dict.fromkeys((args.pinned, other))}
    with tempfile.TemporaryDirectory(prefix="memdeck-drift-") as tmp:
        work = Path(tmp)
        checks = {v: oracle(b, v, args.jobs, work) for v, b in bins.items()}
        probes = {v: probe(b, v, work) for v, b in bins.items()}
    text, broken = report(args.pinned, other, (checks[args.pinned], checks[other]),
                          changes(probes[args.pinned], probes[other]),
                          time.monotonic() - started)
    print(text)
    if args.record:
        record(args.record, text)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
