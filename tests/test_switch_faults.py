"""Issue 29, "nothing lost, round 2": the switch against a writer holding MEMORY.md open, a
home spelled another way, a memory folder that is a mount point of its own or read-only,
and journals edited to point outside the home. Each case runs the real `memdeck` command in
its own process (tests/crash_run.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from crash_run import KILLED, leftovers, memdeck_argv, run_memdeck

from memdeck.engine import Engine
from memdeck.engine.memory_folder.journal import Journal, JournalError
from memdeck.engine.phase2.proposals import root_state

ADDED = "- kept: written by a process that held MEMORY.md open\n"

HOLDER = """
import sys
f = open(sys.argv[1], "a", encoding="utf-8")
print("open", flush=True)
sys.stdin.readline()  # the test says when to write
f.write(sys.argv[2])
f.flush()
f.close()
print("closed", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def home(accepted_home: Path) -> Path:
    return accepted_home


def holder(path: Path, text: str) -> subprocess.Popen[str]:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), text],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "open"
    return p


def say(p: subprocess.Popen[str], expect: str | None) -> None:
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write("go\n")
    p.stdin.flush()
    if expect is not None:
        assert p.stdout.readline().strip() == expect


# -- item 2: a writer holding MEMORY.md open across a change --------------------------------
def test_a_change_waits_for_a_writer_that_holds_memory_md_open_and_keeps_its_line(
        home: Path) -> None:
    """Open for append, the change runs, write, close: the line is live afterwards (the
    change, seeing it, is refused and the line recorded as an outside change)."""
    live = home / "memories" / "MEMORY.md"
    first = Engine.open(home).history()[-1].commit
    w = holder(live, ADDED)
    env = {**os.environ, "MEMDECK_WRITER_WAIT": "120"}
    change = subprocess.Popen(memdeck_argv(home, "restore", first), env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.5)
    assert change.poll() is None  # waiting for the writer, not switching under it
    say(w, "closed")
    code = change.wait(120)
    err = change.stderr.read() if change.stderr else ""
    say(w, None)
    w.wait(60)
    assert ADDED in live.read_text(), err  # the line is live
    assert code == 1 and "changed while memdeck was trying to restore" in err, err
    assert Engine.open(home).history()[0].origin == "external"
    assert leftovers(home) == []


def test_a_writer_that_never_closes_gets_one_line_and_nothing_switches(home: Path) -> None:
    live = home / "memories" / "MEMORY.md"
    first = Engine.open(home).history()[-1].commit
    before = root_state(home / "memories")
    w = holder(live, ADDED)
    env = {**os.environ, "MEMDECK_WRITER_WAIT": "1"}
    r = subprocess.run(memdeck_argv(home, "restore", first), env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "MEMORY.md is held open for writing by pid" in r.stderr
    assert "nothing of the restore" in r.stderr
    assert root_state(home / "memories") == before
    say(w, "closed")  # it writes at last: into the live folder, never switched away
    say(w, None)
    w.wait(60)
    assert ADDED in live.read_text()
    assert leftovers(home) == []


def test_a_writer_that_opens_between_the_checks_and_the_switch_is_kept(
        home: Path, tmp_path: Path) -> None:
    """Opened after the change's checks, written after the switch: the change waits for it to
    close, sees the line in the folder it switched away, and undoes the switch."""
    from crash_run import Paused

    live = home / "memories" / "MEMORY.md"
    first = Engine.open(home).history()[-1].commit
    run = Paused(memdeck_argv(home, "restore", first), ["switch.journaled"],
                 tmp_path / "pause")
    run.wait("switch.journaled")
    w = holder(live, ADDED)  # opened now: the old folder's file
    run.resume("switch.journaled")
    time.sleep(1.0)
    assert run.proc.poll() is None  # switched, and waiting for the writer to close
    say(w, "closed")
    code, _, err = run.finish()
    say(w, None)
    w.wait(60)
    assert code == 1 and "changed while memdeck was trying to restore" in err, err
    assert ADDED in live.read_text()
    assert leftovers(home) == []


# -- item 3: the home spelled another way -----------------------------------------------------
def _spellings(home: Path, tmp_path: Path) -> dict[str, Path]:
    link = tmp_path / "via-link"
    link.symlink_to(home)
    return {"symlink": link, "dotdot": home / ".." / home.name}


@pytest.mark.parametrize("spelling", ["symlink", "dotdot"])
@pytest.mark.parametrize("op", ["reset", "restore-backup", "accept"])
def test_recovery_does_not_depend_on_how_the_home_is_spelled(home: Path, tmp_path: Path,
                                                             op: str, spelling: str) -> None:
    eng = Engine.open(home)
    args: tuple[str, ...] = ("reset", "--yes")
    if op == "restore-backup":
        args = ("restore-backup", eng.reset().id)
    elif op == "accept":
        eng.memory_note("prefer uv over pip")
        args = ("accept", eng.consolidate().id)
    killed = run_memdeck(home, *args, crash_at="switch.journaled")
    assert killed.returncode == KILLED, killed.stderr
    other = _spellings(home, tmp_path)[spelling]
    nxt = run_memdeck(other, "sessions")
    assert nxt.returncode == 0, nxt.stderr
    assert "recovered: finished an interrupted" in nxt.stderr, nxt.stderr
    conn = sqlite3.connect(home / "memories_1.sqlite")
    rows = conn.execute("SELECT COUNT(*) FROM stage1_outputs").fetchone()[0]
    conn.close()
    if op == "reset":
        assert not (home / "memories" / "MEMORY.md").exists() and rows == 0
    if op == "restore-backup":
        assert (home / "memories" / "MEMORY.md").exists() and rows > 0
    if op == "accept":
        assert [p.status for p in Engine.open(home).proposals()][0] == "accepted"
    assert leftovers(home) == []


# -- item 4: the memory folder as a mount point of its own ------------------------------------
def _can_mount() -> bool:
    return sys.platform.startswith("linux") and os.geteuid() == 0 and subprocess.run(
        ["mount", "--version"], capture_output=True).returncode == 0


def _bind(home: Path, tmp_path: Path) -> Path:
    """Move the memory folder to another place and bind-mount it back (a container volume)."""
    real = tmp_path / "volume"
    (home / "memories").rename(real)
    (home / "memories").mkdir()
    r = subprocess.run(["mount", "--bind", str(real), str(home / "memories")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"this machine cannot bind-mount: {r.stderr.strip()}")
    return real


def is_mount_point(p: Path) -> bool:
    """In the mount table (a bind mount on the same file system too, which ismount misses)."""
    points = {line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()}
    return str(p) in points


@pytest.fixture
def mounted(home: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    if not _can_mount():
        pytest.skip("bind mounts need root on Linux")
    _bind(home, tmp_path)
    yield home
    subprocess.run(["umount", "-l", str(home / "memories")], capture_output=True)


def test_every_change_works_on_a_memory_folder_that_is_a_mount_point(mounted: Path) -> None:
    home = mounted
    eng = Engine.open(home)
    first = eng.history()[-1].commit
    r = run_memdeck(home, "restore", first)
    assert r.returncode == 0, r.stderr
    assert Engine.open(home).history()[0].origin == "restore"
    backup = run_memdeck(home, "reset", "--yes")
    assert backup.returncode == 0, backup.stderr
    assert not (home / "memories" / "MEMORY.md").exists()
    assert is_mount_point(home / "memories")  # still the mount, now empty
    bid = Engine.open(home).backups()[0].id
    assert run_memdeck(home, "restore-backup", bid).returncode == 0
    assert (home / "memories" / "MEMORY.md").exists()
    assert not list((home / "memories").rglob(".memdeck-tmp-*"))
    assert leftovers(home) == []


@pytest.mark.parametrize("step", ["switch.journaled", "switch.swapped", "switch.rows"])
def test_a_change_killed_on_a_mounted_folder_is_finished_by_the_next_command(
        mounted: Path, step: str) -> None:
    home = mounted
    first = Engine.open(home).history()[-1].commit
    want = Engine.open(home).history_show(first)[0]
    killed = run_memdeck(home, "restore", first, crash_at=step)
    assert killed.returncode == KILLED
    nxt = run_memdeck(home, "sessions")
    assert nxt.returncode == 0 and "recovered: finished" in nxt.stderr, nxt.stderr
    top = Engine.open(home).history()[0]
    assert top.origin == "restore" and want.commit[:12] in top.summary
    assert leftovers(home) == []


def test_a_read_only_memory_folder_fails_in_one_line_and_nothing_applies_later(
        mounted: Path) -> None:
    home = mounted
    first = Engine.open(home).history()[-1].commit
    before = root_state(home / "memories")
    ro = subprocess.run(["mount", "-o", "remount,ro,bind", str(home / "memories")],
                        capture_output=True, text=True)
    assert ro.returncode == 0, ro.stderr
    r = run_memdeck(home, "restore", first)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "nothing of the restore" in r.stderr and "internal error" not in r.stderr
    assert not (home / "memdeck" / "change.journal").exists()
    subprocess.run(["mount", "-o", "remount,rw,bind", str(home / "memories")], check=True)
    assert run_memdeck(home, "sessions").returncode == 0
    assert root_state(home / "memories") == before  # not applied once writable again
    assert Engine.open(home).history()[0].origin != "restore"


def test_the_file_by_file_switch_is_old_or_new_where_a_mount_cannot_be_made(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same fallback, forced on an ordinary folder: each machine runs it."""
    import memdeck.engine.memory_folder.switch as switch

    monkeypatch.setattr(switch, "is_mount", lambda p: True)
    eng = Engine.open(home)
    first = eng.history()[-1].commit
    eng.restore(first)
    assert eng.history()[0].origin == "restore"
    assert (home / "memories" / "MEMORY.md").read_text() == file_at(eng, first, "MEMORY.md")
    assert leftovers(home) == []


def file_at(eng: Engine, commit: str, rel: str) -> str:
    """`rel` as history holds it at `commit`."""
    return subprocess.run(["git", "--git-dir", str(eng.home.history_git), "show",
                           f"{commit}:{rel}"], capture_output=True, text=True,
                          check=True).stdout


# -- item 8: journals edited to point outside the home ----------------------------------------
def _journal(home: Path, op: str, finish: dict, roots: list | None = None) -> Path:
    sid = "0123abcd4567"
    (home / "memdeck" / "staging" / sid).mkdir(parents=True, exist_ok=True)
    j = home / "memdeck" / "change.journal"
    j.write_text(json.dumps({
        "version": 2, "op": op, "id": sid, "state": "committed", "what": op,
        "roots": roots or [], "kept": {}, "finish": finish,
        "history": {"origin": "user", "message": op, "trailers": {}}}))
    return j


def test_a_journal_cannot_make_reset_clear_a_database_outside_the_home(
        home: Path, tmp_path: Path) -> None:
    victim = tmp_path / "someone-elses.sqlite"
    conn = sqlite3.connect(victim)
    conn.execute("CREATE TABLE stage1_outputs (thread_id TEXT)")
    conn.execute("INSERT INTO stage1_outputs VALUES ('keep me')")
    conn.commit()
    conn.close()
    _journal(home, "reset", {"clear": [str(victim)], "backup": None})
    r = run_memdeck(home, "sessions")
    assert r.returncode == 0 and "cleared a change that was never started" in r.stderr
    conn = sqlite3.connect(victim)
    assert conn.execute("SELECT * FROM stage1_outputs").fetchall() == [("keep me",)]
    conn.close()


def test_a_journal_cannot_make_forget_append_to_a_file_outside_the_home(
        home: Path, tmp_path: Path) -> None:
    victim = tmp_path / "notes.jsonl"
    victim.write_text("{}\n")
    _journal(home, "forget", {"thread": "x", "path": str(victim), "now": 1, "already": False,
                              "stamp": "2026-12-01T00:00:00.000Z"})
    assert run_memdeck(home, "sessions").returncode == 0
    assert victim.read_text() == "{}\n"


def test_a_journal_cannot_point_a_restore_backup_at_rows_outside_its_folder(
        home: Path, tmp_path: Path) -> None:
    rows = tmp_path / "rows.json"
    rows.write_text("{}")
    _journal(home, "restore-backup", {"rows": str(rows)})
    r = run_memdeck(home, "sessions")
    assert "cleared a change that was never started" in r.stderr
    assert rows.read_text() == "{}"


@pytest.mark.parametrize("root", ["../outside", "/tmp", "memories/../..", ""])
def test_a_journal_root_must_be_a_memory_root_of_the_home(home: Path, root: str) -> None:
    with pytest.raises(JournalError):
        Journal.loads(json.dumps({
            "version": 2, "op": "edit", "id": "abc", "what": "x",
            "roots": [{"root": root, "staged": "memories", "base": None, "new": None}],
            "history": {"origin": "user", "message": "x", "trailers": {}}}),
            Engine.open(home).home, home / "memdeck" / "staging")


def test_a_newer_memdecks_journal_is_left_for_it_and_changes_say_so(home: Path) -> None:
    j = _journal(home, "edit", {})
    data = json.loads(j.read_text())
    data["version"] = 99
    j.write_text(json.dumps(data))
    assert run_memdeck(home, "sessions").returncode == 0  # reads go on
    r = run_memdeck(home, "reset", "--yes")
    assert r.returncode == 1 and "newer memdeck" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert j.exists()  # left for the memdeck that wrote it


# -- item 8: a full disk -----------------------------------------------------------------------
def fill(disk: Path, leave: int) -> Path:
    """Fill the file system of `disk` up to `leave` bytes free; returns the filler file."""
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    with open(filler, "wb") as f:
        try:
            while True:
                st = os.statvfs(disk)
                free = st.f_bavail * st.f_frsize - leave
                if free <= 0:
                    break
                f.write(b"\0" * min(free, 1 << 16))
                f.flush()
        except OSError:
            pass
    return filler


@pytest.fixture
def small_disk(accepted_home: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The accepted home on a 48 MB tmpfs of its own."""
    import shutil

    if not _can_mount():
        pytest.skip("a tmpfs needs root on Linux")
    disk = tmp_path / "disk"
    disk.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(disk)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"this machine cannot mount a tmpfs: {r.stderr.strip()}")
    shutil.copytree(accepted_home, disk / "home", symlinks=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


EDIT = """
import sys
from memdeck.engine import Engine, MemdeckError
from memdeck.tui.messages import one_line
e = Engine.open(sys.argv[1])
f = e.memory_read("MEMORY.md")
try:
    e.memory_save("MEMORY.md", f.text + "- more\\n", f.version)
except (MemdeckError, OSError) as err:  # what the app shows: one line
    print(one_line(err), file=sys.stderr)
    sys.exit(1)
"""


@pytest.mark.parametrize("leave", [0, 96 << 10, 1 << 20, 3 << 20], ids=["0", "96K", "1M", "3M"])
@pytest.mark.parametrize("op", ["reset", "restore", "restore-backup", "accept", "edit"])
def test_a_full_disk_is_one_line_and_nothing_is_lost(small_disk: Path, op: str,
                                                     leave: int) -> None:
    """The disk fills at whatever step the free space runs out: the command says so in one
    line (never "internal error", never a good backup called damaged), and once there is room
    again the folder is the old state or the new one, with nothing left half-done."""
    home = small_disk / "home"
    eng = Engine.open(home)
    argv: list[str] = []
    if op == "reset":
        argv = ["reset", "--yes"]
    elif op == "restore":
        argv = ["restore", eng.history()[-1].commit]
    elif op == "restore-backup":
        bid = eng.reset().id
        eng.restore_backup(bid)
        argv = ["restore-backup", bid]
    elif op == "accept":
        eng.memory_note("prefer uv over pip")
        argv = ["accept", eng.consolidate().id]
    before = root_state(home / "memories")
    filler = fill(small_disk, leave)
    if argv:
        r = run_memdeck(home, *argv)
    else:
        r = subprocess.run([sys.executable, "-c", EDIT, str(home)], capture_output=True,
                           text=True, timeout=120)
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    if r.returncode != 0:
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "damaged" not in r.stderr, r.stderr  # a good backup is never called damaged
        assert "space" in r.stderr.lower(), r.stderr  # says what is wrong
    after = root_state(home / "memories")
    filler.unlink()  # room again: the next command finishes or undoes what was cut short
    nxt = run_memdeck(home, "sessions")
    assert nxt.returncode == 0, nxt.stderr
    final = root_state(home / "memories")
    if r.returncode != 0:  # refused: the old state, or a change decided and now finished
        assert final in (before, after), nxt.stderr
    assert leftovers(home) == []


@pytest.mark.parametrize("memdeck_dir", ["kept", "never made"])
def test_a_read_only_home_lists_its_sessions_with_one_warning(
        accepted_home: Path, tmp_path: Path, memdeck_dir: str) -> None:
    """A home memdeck cannot write (a read-only mount, another user's): every read works, with
    the statuses a writable home shows and one warning saying why nothing can change."""
    import shutil

    if not _can_mount():
        pytest.skip("a read-only bind mount needs root on Linux")
    src = accepted_home
    if memdeck_dir == "never made":
        shutil.rmtree(src / "memdeck")
    for side in src.glob("*.sqlite-*"):  # as Codex leaves them when it is not running
        side.unlink()
    want = json.loads(run_memdeck(src, "sessions", "--json").stdout)
    if memdeck_dir == "never made":
        shutil.rmtree(src / "memdeck")
    for side in src.glob("*.sqlite-*"):
        side.unlink()
    ro = tmp_path / "read-only"
    ro.mkdir()
    subprocess.run(["mount", "--bind", str(src), str(ro)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], check=True)
        r = run_memdeck(ro, "sessions", "--json")
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        assert [(s["id"], s["status"]) for s in got] == [(s["id"], s["status"]) for s in want]
        warnings = [w for w in r.stderr.splitlines() if w.startswith("memdeck: warning")]
        assert len(warnings) == 1 and "cannot be written" in warnings[0], r.stderr
        change = run_memdeck(ro, "reset", "--yes")
        assert change.returncode == 1 and len(change.stderr.strip().splitlines()) == 1
        assert "internal error" not in change.stderr
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True)
