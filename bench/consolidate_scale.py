#!/usr/bin/env python3
"""Offline consolidation at scale (issue 29, item 6): time against the number of ad-hoc
notes, and memory against the size of MEMORY.md.

Notes: the demo home after one accepted consolidation, then N notes (four remember notes to
one forget note, each naming its own host and sharing common words with the others, as real
notes do), then `consolidate` timed in a fresh process. The figure to watch is the time per
note as N grows: linear folding keeps it flat (it was quadratic: 1,000 notes 27.5 s, 2,000
104 s, 5,000 over 300 s). Target: 10,000 notes in 30 s or less.

Memory: MEMORY.md grown to M MB of task groups, then `consolidate` in a fresh process whose
peak resident memory (its own VmHWM, read before it exits) is compared with the memory
folder's size. Target: peak ≤ 3 × the folder's size (a 50 MB MEMORY.md took 931 MB).

    .venv/bin/python bench/consolidate_scale.py [--notes 1000,2000,5000,10000] [--mb 50]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
from memdeck.engine import Engine
home = sys.argv[1]
e = Engine.open(home)
t = time.perf_counter()
p = e.consolidate()
took = time.perf_counter() - t
hwm = 0
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        hwm = int(line.split()[1]) * 1024
print(json.dumps({"seconds": took, "peak": hwm, "proposal": p.id if p else None}))
"""


def prepared(work: Path) -> Path:
    from memdeck.engine import Engine, demo_home

    home = demo_home(work / "demo")
    eng = Engine.open(home)
    eng.extract(backend="offline")
    eng.accept(eng.consolidate().id)
    return home


def add_notes(home: Path, n: int) -> None:
    notes = home / "memories" / "extensions" / "ad_hoc" / "notes"
    for i in range(n):
        kind = "Forget" if i % 5 == 4 else "Remember"
        what = (f"the deploy host of service {i} is db-{i}.internal" if kind == "Remember"
                else f"the deploy host of service {i - 2}")
        name = f"2026-12-01T{i // 3600 % 24:02d}-{i // 60 % 60:02d}-{i % 60:02d}-n{i:05d}.md"
        (notes / name).write_text(f"{kind}: {what}\n", encoding="utf-8")


def grow_memory(home: Path, mb: int) -> int:
    memory = home / "memories" / "MEMORY.md"
    text = memory.read_text(encoding="utf-8")
    block = "\n".join(f"- fact {{i}}.{k}: the build of module {{i}} uses cache layer {k}"
                      for k in range(20))
    parts, size, i = [text], len(text), 0
    while size < mb << 20:
        g = (f"\n# Task Group: module {i}\nscope: module {i}\napplies_to: cwd=/src/m{i}; "
             "reuse_rule=any task here\n\n## Task 1: build module, success\n\n"
             "## Reusable knowledge\n" + block.replace("{i}", str(i)) + "\n")
        parts.append(g)
        size += len(g)
        i += 1
    memory.write_text("".join(parts), encoding="utf-8")
    from memdeck.engine import Engine

    Engine.open(home).record_outside_edits()
    return sum(p.stat().st_size for p in (home / "memories").rglob("*")
               if p.is_file() and ".git" not in p.parts)


def run(home: Path) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, str(home)], capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", default="1000,2000,5000,10000")
    ap.add_argument("--mb", type=int, default=50)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdeck-scale-") as tmp:
        work = Path(tmp)
        base = prepared(work / "base")
        print("notes    seconds   ms/note   peak MB")
        for n in [int(x) for x in args.notes.split(",") if x]:
            home = work / f"notes-{n}"
            shutil.copytree(base, home, symlinks=True)
            add_notes(home, n)
            r = run(home)
            print(f"{n:>6}  {r['seconds']:>8.1f}  {1000 * r['seconds'] / n:>8.2f}  "
                  f"{r['peak'] / 2**20:>8.0f}", flush=True)
            shutil.rmtree(home)
        if args.mb:
            home = work / "big"
            shutil.copytree(base, home, symlinks=True)
            folder = grow_memory(home, args.mb)
            r = run(home)
            print(f"\nMEMORY.md grown to {args.mb} MB (folder {folder / 2**20:.0f} MB): "
                  f"consolidate {r['seconds']:.1f} s, peak {r['peak'] / 2**20:.0f} MB = "
                  f"{r['peak'] / folder:.2f} × the folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
