"""The homes and operations of the soak (bench/soak.py): one prepared home per memory-folder
operation, copied for every trial, and what a clean run of the operation makes of it.

A prepared home is a demo home (memdeck.engine.demo_home) after an offline extract, a
consolidation and its accept, then whatever the operation needs (a pending proposal, a
backup, …). It is built once per operation and copied per trial (`copy_home`): building one
costs ~2 s, copying ~50 ms. Codex's state DB keeps absolute rollout paths, which the copy
rewrites to its own folder; nothing else in a home names its folder.
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "tests") not in sys.path:
    sys.path.insert(0, str(REPO / "tests"))

from crash_run import memdeck_argv  # noqa: E402

from memdeck.engine import Engine, demo_home  # noqa: E402
from memdeck.engine.crash_points import STEPS  # noqa: E402
from memdeck.engine.phase2.proposals import SKIP, root_state  # noqa: E402

OPS = ("accept", "restore", "reset", "restore-backup", "edit", "note", "forget")
ADDED = "- kept: a line the soak's edit adds\n"
NOTE = "the soak printer is on floor 3"
NOTES_DIR = ("extensions", "ad_hoc", "notes")


# -- reading a home ---------------------------------------------------------------------------
def folder_files(root: Path) -> dict[str, bytes]:
    """The files root_state hashes (`.git` and the proposal diff aside), by relative path."""
    if not root.is_dir():
        return {}
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if (p.is_file() or p.is_symlink()) and not (set(rel.parts) & SKIP):
            out[rel.as_posix()] = os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
    return out


def state(home: Path) -> str | None:
    root = home / "memories"
    return root_state(root) if root.is_dir() else None


def _query(db: Path, sql: str, args: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def stage1_count(home: Path) -> int:
    return int(_query(home / "memories_1.sqlite", "SELECT COUNT(*) FROM stage1_outputs")[0][0])


def selected_threads(home: Path) -> tuple[str, ...]:
    rows = _query(home / "memories_1.sqlite",
                  "SELECT thread_id FROM stage1_outputs WHERE selected_for_phase2 = 1 "
                  "ORDER BY thread_id")
    return tuple(r[0] for r in rows)


def proposal_status(home: Path, pid: str) -> str:
    rows = _query(home / "memdeck" / "memdeck.sqlite",
                  "SELECT status FROM proposals WHERE id = ?", (pid,))
    return rows[0][0] if rows else "missing"


def rollout_of(home: Path, thread: str) -> Path:
    [(path,)] = _query(home / "state_5.sqlite",
                       "SELECT rollout_path FROM threads WHERE id = ?", (thread,))
    return Path(path)


def forget_rows(home: Path, ctx: dict[str, Any]) -> tuple[bool, bool]:
    """(the rollout says disabled, the stage-1 row is still there)."""
    disabled = b'"memory_mode":"disabled"' in rollout_of(home, ctx["id"]).read_bytes()
    row = _query(home / "memories_1.sqlite",
                 "SELECT 1 FROM stage1_outputs WHERE thread_id = ?", (ctx["id"],))
    return disabled, bool(row)


# -- the operations ---------------------------------------------------------------------------
def engine_argv(home: Path, call: str) -> list[str]:
    """`Engine.open(home).<call>` in its own process (an edit, a note: the app's changes)."""
    code = f"from memdeck.engine import Engine; e = Engine.open({str(home)!r}); e.{call}"
    return [sys.executable, "-c", code]


def _argv(op: str, home: Path, ctx: dict[str, Any]) -> list[str]:
    if op == "accept":
        return memdeck_argv(home, "accept", ctx["proposal"])
    if op == "restore":
        return memdeck_argv(home, "restore", ctx["rev"])
    if op == "reset":
        return memdeck_argv(home, "reset", "--yes")
    if op == "restore-backup":
        return memdeck_argv(home, "restore-backup", ctx["backup"])
    if op == "forget":
        return memdeck_argv(home, "forget", ctx["id"])
    if op == "edit":
        live = str(home / "memories" / "MEMORY.md")
        return engine_argv(home, f"memory_save('MEMORY.md', open({live!r}).read() + "
                                 f"{ADDED!r}, {ctx['version']!r})")
    if op == "note":
        return engine_argv(home, f"memory_note({NOTE!r})")
    raise ValueError(op)


def _rows(op: str, home: Path, ctx: dict[str, Any]) -> Any:
    """What of the rows goes with the folder, per operation (None: no rows)."""
    if op == "accept":
        return proposal_status(home, ctx["proposal"]), selected_threads(home)
    if op == "restore":
        return selected_threads(home)
    if op in ("reset", "restore-backup"):
        return stage1_count(home)
    if op == "forget":
        return forget_rows(home, ctx)
    return None


def _prepare(op: str, home: Path) -> dict[str, Any]:
    eng = Engine.open(home)
    first = eng.history()[-1].commit
    if op == "accept":
        # back before the first accept (which clears Codex's selection), then a new proposal:
        # accepting it sets selected_for_phase2 again, so rows tell old from new
        eng.restore(first)
        p = eng.consolidate()
        assert p is not None and p.files, "the accept home has no proposal to accept"
        return {"proposal": p.id}
    if op == "restore":
        return {"rev": first}
    if op == "restore-backup":
        count = stage1_count(home)
        return {"backup": eng.reset().id, "count": count}
    if op == "edit":
        return {"version": eng.memory_read("MEMORY.md").version}
    if op == "forget":
        s = next(s for s in eng.sessions() if s.status == "extracted"
                 and str(rollout_of(home, s.id)).endswith(".jsonl"))
        return {"id": s.id}
    return {}


@dataclass
class Template:
    """One operation's prepared home and what a clean run of the operation makes of it."""

    op: str
    home: Path
    ctx: dict[str, Any]
    old: str | None  # root_state before
    new: str | None  # root_state after a clean run (note: None, its file name has a time)
    old_rows: Any
    new_rows: Any
    duration: float  # a clean run's wall time, seconds
    reaches: dict[str, int] = field(default_factory=dict)  # step -> times a clean run hits it
    show_id: str = ""
    old_files: dict[str, bytes] = field(default_factory=dict)  # the folder before, by file
    new_files: dict[str, bytes] = field(default_factory=dict)  # and after a clean run

    def argv(self, home: Path) -> list[str]:
        return _argv(self.op, home, self.ctx)

    def rows(self, home: Path) -> Any:
        return _rows(self.op, home, self.ctx)

    def is_new(self, home: Path) -> bool:
        """The folder is exactly the state a clean run leaves."""
        if self.op != "note":
            return state(home) == self.new
        return note_added(self.home, home)

    def step_kills(self) -> list[str]:
        """Every (step, n-th time) a clean run reaches: `MEMDECK_CRASH_AT` values."""
        return [f"{s}@{n}" for s in STEPS for n in range(1, self.reaches.get(s, 0) + 1)]


def note_added(template: Path, home: Path) -> bool:
    """`home`'s folder is the template's plus exactly one new note holding NOTE."""
    old, now = folder_files(template / "memories"), folder_files(home / "memories")
    added = [rel for rel in now if rel not in old]
    if len(added) != 1 or tuple(added[0].split("/")[:-1]) != NOTES_DIR:
        return False
    if NOTE.encode() not in now[added[0]]:
        return False
    return {k: v for k, v in now.items() if k != added[0]} == old


def copy_home(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    conn = sqlite3.connect(dst / "state_5.sqlite")
    try:
        with conn:
            conn.execute("UPDATE threads SET rollout_path = replace(rollout_path, ?, ?)",
                         (str(src) + "/", str(dst) + "/"))
    finally:
        conn.close()
    return dst


def base_home(where: Path) -> Path:
    h = demo_home(where)
    eng = Engine.open(h)
    eng.extract(backend="offline")
    p = eng.consolidate()
    assert p is not None
    eng.accept(p.id)
    return h


def run_counting_steps(argv: list[str], pause_dir: Path,
                       timeout: float = 120) -> tuple[subprocess.CompletedProcess[str],
                                                      dict[str, int], float]:
    """Run `argv` pausing at every named step, counting each pause and resuming at once:
    which steps this run reaches, and how often. The pauses add a few ms each."""
    pause_dir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDECK_")}
    env |= {"MEMDECK_PAUSE_AT": ",".join(STEPS), "MEMDECK_PAUSE_DIR": str(pause_dir)}
    seen: dict[str, int] = {}
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    while proc.poll() is None:
        for marker in list(pause_dir.iterdir()):
            seen[marker.name] = seen.get(marker.name, 0) + 1
            marker.unlink()
        if time.monotonic() - start > timeout:
            proc.kill()
        time.sleep(0.002)
    out, err = proc.communicate()
    took = time.monotonic() - start
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), seen, took


def time_clean_run(argv: list[str], runs: int) -> float:
    took = []
    for _ in range(runs):
        start = time.monotonic()
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        took.append(time.monotonic() - start)
        if r.returncode != 0:
            raise RuntimeError(f"a clean run failed: {argv}: {r.stderr}")
    return sorted(took)[len(took) // 2]


def build_template(op: str, where: Path, base: Path | None = None,
                   timing_runs: int = 1) -> Template:
    """The prepared home for `op` under `where`, measured by clean runs on copies of it."""
    where.mkdir(parents=True, exist_ok=True)
    home = copy_home(base, where / "home") if base else base_home(where / "home")
    show_id = next(s.id for s in Engine.open(home).sessions() if s.status == "extracted")
    ctx = _prepare(op, home)
    t = Template(op, home, ctx, state(home), None, None, None, 0.0, show_id=show_id)
    t.old_rows = t.rows(home)
    # the engines above hold SQLite connections until collected, and closing one checkpoints
    # and deletes its WAL file: never while the home is being copied
    gc.collect()
    clean = copy_home(home, where / "clean")
    run, t.reaches, _ = run_counting_steps(t.argv(clean), where / "pause")
    if run.returncode != 0:
        raise RuntimeError(f"a clean {op} failed: {run.stderr}")
    t.new = state(clean) if op != "note" else None
    t.new_rows = t.rows(clean)
    t.old_files = folder_files(home / "memories")
    t.new_files = folder_files(clean / "memories")
    timed = [copy_home(home, where / f"timed-{i}") for i in range(timing_runs)]
    t.duration = sorted(time_clean_run(t.argv(h), 1) for h in timed)[len(timed) // 2]
    for h in [clean, *timed]:
        shutil.rmtree(h, ignore_errors=True)
    return t


TemplateBuilder = Callable[[str, Path], Template]
