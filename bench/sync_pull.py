#!/usr/bin/env python3
"""Benchmark a pull from a remote with 1,000 commits and a 5,000-line MEMORY.md (issue 26:
<= 2 s).

Home A gets a memory folder with a 5,000-line MEMORY.md (100 task groups) and pushes it; B
pulls and accepts it. The remote then gains 999 more memdeck commits (written with
`git fast-import`, each adding a rollout summary, every 50th also changing a line of
MEMORY.md), while B changes a line of its own. Timed: `Engine.pull` on B (fetch of the
999 commits, the merge base, the three-way merge of every file, the proposal with its
diff). The reference, in the same run: a plain `git fetch` of the same commits into an
empty bare repository.

    .venv/bin/python bench/sync_pull.py [--commits 1000] [--lines 5000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from conftest import HomeBuilder  # noqa: E402

from memdeck.engine import Engine  # noqa: E402

TARGET = 2.0


def memory_md(lines: int) -> str:
    out: list[str] = []
    g = 0
    while len(out) < lines:
        g += 1
        cwd = f"/home/dev/src/project-{g:03d}"
        out += [f"# Task Group: project-{g:03d}", f"scope: work in {cwd}",
                f"applies_to: cwd={cwd}; reuse_rule=tasks in this folder", ""]
        for t in range(1, 9):
            out += [f"## Task {t}: change {t} of project {g}, success",
                    "### rollout_summary_files",
                    f"- rollout_summaries/2026-11-{t:02d}T10-00-00-ab{g:02d}-task_{t}.md "
                    f"(cwd={cwd}, updated_at=2026-11-{t:02d}T10:00:00Z)",
                    "### keywords", f"- project-{g:03d}, task {t}, pytest -q", ""]
        out += ["## User preferences", f"- project {g}: run make check first [Task 1]", "",
                "## Reusable knowledge", f"- project {g} tests need DATABASE_URL [Task 2]", ""]
    return "\n".join(out[:lines]) + "\n"


def grow_remote(remote: Path, commits: int, base_memory: str) -> None:
    """`commits` memdeck-shaped commits on top of the remote's memdeck/v1 (fast-import)."""
    head = subprocess.run(["git", "--git-dir", str(remote), "rev-parse", "memdeck/v1"],
                          capture_output=True, text=True, check=True).stdout.strip()
    lines = base_memory.split("\n")
    stream: list[bytes] = []
    for i in range(commits):
        files = []
        summary = (f"cwd: /home/dev/src/project-{i % 100:03d}\n\n# Remote task {i}\n\n"
                   f"- ran `pytest -q` for change {i}\n")
        files.append((f"rollout_summaries/2026-12-01T00-00-00-r{i:04d}-remote_{i}.md",
                      summary.encode()))
        if i % 50 == 0:
            lines[10 + (i // 50) * 40] = f"## Task 1: change edited on the remote ({i}), success"
            files.append(("MEMORY.md", "\n".join(lines).encode()))
        msg = f"remote change {i}\n\nMemdeck-Origin: consolidation\nMemdeck-Machine: bench\n"
        stream.append(b"commit refs/heads/memdeck/v1\n")
        stream.append(f"committer bench <bench@localhost> {1_764_547_200 + i} +0000\n".encode())
        stream.append(f"data {len(msg.encode())}\n{msg}\n".encode())
        stream.append(f"from {head}\n".encode() if i == 0 else b"")
        for path, data in files:
            stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
        stream.append(b"\n")
    subprocess.run(["git", "--git-dir", str(remote), "fast-import", "--quiet"],
                   input=b"".join(stream), check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--lines", type=int, default=5000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdeck-sync-bench-") as tmp_name:
        tmp = Path(tmp_name)
        remote = tmp / "team.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        a = Engine.open(HomeBuilder(tmp / "a").v1().root)
        text = memory_md(args.lines)
        root = a.home.memory_root
        (root / "MEMORY.md").write_text(text, encoding="utf-8")
        (root / "memory_summary.md").write_text(
            "v1\n\n## User Profile\n- none yet\n\n## User preferences\n- none yet\n\n"
            "## General Tips\n- none yet\n\n## What's in Memory\n### Older Memory Topics\n"
            "- none yet\n", encoding="utf-8")
        b = Engine.open(HomeBuilder(tmp / "b").v1().root)
        for eng in (a, b):
            eng.remote_add("team", f"file://{remote}")
        a.push()
        first = b.pull()
        assert first is not None
        b.accept(first.id)
        grow_remote(remote, args.commits - 1, text)
        mine = b.home.memory_root / "MEMORY.md"
        mine.write_text(mine.read_text(encoding="utf-8").replace(
            "## Task 3: change 3 of project 7, success",
            "## Task 3: change 3 of project 7, edited on B, success"), encoding="utf-8")
        b.record_outside_edits()
        start = time.perf_counter()
        p = b.pull()
        took = time.perf_counter() - start
        assert p is not None and not [x for x in p.problems if x.startswith("conflict")], p
        empty = tmp / "reference.git"
        subprocess.run(["git", "init", "-q", "--bare", str(empty)], check=True)
        start = time.perf_counter()
        subprocess.run(["git", "--git-dir", str(empty), "fetch", "-q", f"file://{remote}",
                        "memdeck/v1"], check=True)
        ref = time.perf_counter() - start
        count = subprocess.run(["git", "--git-dir", str(remote), "rev-list", "--count",
                                "memdeck/v1"], capture_output=True, text=True).stdout.strip()
        print(f"pull of {count} commits, MEMORY.md {args.lines:,} lines, "
              f"{len(p.files)} files changed: {took:.2f} s (target <= {TARGET} s); "
              f"plain git fetch of the same: {ref:.2f} s (ratio {took / ref:.1f})")
        b.accept(p.id)
        start = time.perf_counter()
        pushed = b.push()
        push_took = time.perf_counter() - start
        print(f"then a push of {pushed.files:,} files: {push_took:.2f} s")
        print(f"RESULT sync.pull_seconds={took:.3f}")
        print(f"RESULT sync.push_seconds={push_took:.3f}")
        print(f"RESULT sync.pull_vs_git_fetch={took / ref:.2f}")
        print(f"RESULT sync.pull.pass={int(took <= TARGET)}")


if __name__ == "__main__":
    main()
