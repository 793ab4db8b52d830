"""Issue 12, "nothing lost": every change of the memory folder goes through one journaled
switch, so a memdeck killed (SIGKILL, in its own process) at any named step leaves the folder
old or new, and the next command of any kind finishes it; a change someone makes meanwhile
is kept; a killed memdeck's git locks and temp files are cleared."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from crash_run import KILLED, Paused, leftovers, memdeck_argv, run_engine, run_memdeck

from memdeck.engine import Engine, MemdeckError
from memdeck.engine.phase2.proposals import root_state

SWITCH_STEPS = ["switch.staged", "switch.journaled", "switch.swapped", "switch.rows",
                "switch.recorded"]
ADDED = "- kept: written while memdeck was changing the folder\n"


@pytest.fixture
def home(accepted_home: Path) -> Path:
    return accepted_home


def stage1_count(h: Path) -> int:
    conn = sqlite3.connect(h / "memories_1.sqlite")
    try:
        return int(conn.execute("SELECT COUNT(*) FROM stage1_outputs").fetchone()[0])
    finally:
        conn.close()


@dataclass
class Op:
    """One kind of change: how to set it up, run it (argv or an engine call), and whether
    the home shows its result."""

    prepare: Callable[[Path], dict]
    run: Callable[[Path, dict, str | None], subprocess.CompletedProcess[str]]
    done: Callable[[Path, dict], bool]


def _restore_prep(h: Path) -> dict:
    first = Engine.open(h).history()[-1]
    return {"rev": first.commit, "new": None}


def _restore_done(h: Path, ctx: dict) -> bool:
    return Engine.open(h).history()[0].origin == "restore"


def _backup_prep(h: Path) -> dict:
    eng = Engine.open(h)
    state, count = root_state(h / "memories"), stage1_count(h)
    backup = eng.reset().id
    return {"backup": backup, "state": state, "count": count}


def _forget_prep(h: Path) -> dict:
    eng = Engine.open(h)
    s = next(s for s in eng.sessions() if s.status == "extracted")
    return {"id": s.id}


def _forget_done(h: Path, ctx: dict) -> bool:
    s = next(s for s in Engine.open(h).sessions() if s.id == ctx["id"])
    return s.memory_mode == "disabled"


def _edit_prep(h: Path) -> dict:
    return {"version": Engine.open(h).memory_read("MEMORY.md").version}


OPS: dict[str, Op] = {
    "restore": Op(_restore_prep,
                  lambda h, c, at: run_memdeck(h, "restore", c["rev"], crash_at=at),
                  _restore_done),
    "reset": Op(lambda h: {},
                lambda h, c, at: run_memdeck(h, "reset", "--yes", crash_at=at),
                lambda h, c: not (h / "memories" / "MEMORY.md").exists()),
    "restore-backup": Op(_backup_prep,
                         lambda h, c, at: run_memdeck(h, "restore-backup", c["backup"],
                                                      crash_at=at),
                         lambda h, c: root_state(h / "memories") == c["state"]),
    "edit": Op(_edit_prep,
               lambda h, c, at: run_engine(
                   h, "memory_save('MEMORY.md', open(" + repr(str(h / "memories" / "MEMORY.md"))
                   + f").read() + {ADDED!r}, {c['version']!r})", crash_at=at),
               lambda h, c: ADDED in (h / "memories" / "MEMORY.md").read_text()),
    "note": Op(lambda h: {},
               lambda h, c, at: run_engine(h, "memory_note('the printer is on floor 3')",
                                           crash_at=at),
               lambda h, c: any("floor 3" in p.read_text() for p in
                                (h / "memories" / "extensions").rglob("*.md"))),
    "forget": Op(_forget_prep,
                 lambda h, c, at: run_memdeck(h, "forget", c["id"], crash_at=at),
                 _forget_done),
}


def _rows_agree(h: Path, name: str, ctx: dict, done: bool) -> None:
    """The rows that go with the folder are the old or the new ones, as the folder is."""
    if name == "reset":
        assert (stage1_count(h) == 0) == done
    if name == "restore-backup":
        assert stage1_count(h) == (ctx["count"] if done else 0)
    if name == "forget":
        conn = sqlite3.connect(h / "memories_1.sqlite")
        row = conn.execute("SELECT 1 FROM stage1_outputs WHERE thread_id = ?",
                           (ctx["id"],)).fetchone()
        conn.close()
        assert (row is None) == done


@pytest.mark.parametrize("step", SWITCH_STEPS)
@pytest.mark.parametrize("name", list(OPS))
def test_a_change_killed_at_any_step_is_old_or_new_and_the_next_command_finishes_it(
        home: Path, name: str, step: str) -> None:
    op = OPS[name]
    ctx = op.prepare(home)
    before = root_state(home / "memories")
    killed = op.run(home, ctx, step)
    assert killed.returncode == KILLED, killed.stderr
    nxt = run_memdeck(home, "sessions")  # a command that only reads, of any kind
    assert nxt.returncode == 0, nxt.stderr
    done = op.done(home, ctx)
    # once the journal is written the change is decided: it is finished, never half-done
    assert done == (step != "switch.staged"), (name, step, nxt.stderr)
    if not done:
        assert root_state(home / "memories") == before
    _rows_agree(home, name, ctx, done)
    assert "recovered:" in nxt.stderr
    assert leftovers(home) == []
    again = op.run(home, op.prepare(home) if name != "restore-backup" else ctx, None)
    assert again.returncode == 0, again.stderr  # and the home works as before


# -- item 1: an edit made while a change runs is kept ----------------------------------------
@pytest.mark.parametrize("step", ["switch.staged", "switch.journaled"])
def test_a_line_appended_while_accept_runs_is_kept_and_the_accept_refused(
        home: Path, tmp_path: Path, step: str) -> None:
    eng = Engine.open(home)
    eng.memory_note("prefer uv over pip")  # new input for a new consolidation
    p = eng.consolidate()
    live = home / "memories" / "MEMORY.md"
    run = Paused(memdeck_argv(home, "accept", p.id), [step], tmp_path / "pause")
    run.wait(step)
    with open(live, "a", encoding="utf-8") as f:  # `echo >> MEMORY.md` meanwhile
        f.write(ADDED)
    run.resume(step)
    code, _, err = run.finish()
    assert code == 1 and "changed while memdeck was trying to accept" in err, err
    assert ADDED in live.read_text()  # as the user left it
    [top, *_] = Engine.open(home).history()
    assert top.origin == "external"  # and recorded
    assert [q.status for q in Engine.open(home).proposals() if q.id == p.id] == ["pending"]
    assert leftovers(home) == []


def test_a_line_written_into_the_old_folder_after_the_switch_is_kept(home: Path,
                                                                     tmp_path: Path) -> None:
    """A writer that opened MEMORY.md before the switch and writes after it writes into the
    folder that was switched away: the change is undone and what they wrote is live again."""
    eng = Engine.open(home)
    first = eng.history()[-1].commit
    live = home / "memories" / "MEMORY.md"
    run = Paused(memdeck_argv(home, "restore", first), ["switch.journaled", "switch.swapped"],
                 tmp_path / "pause")
    run.wait("switch.journaled")
    with open(live, "a", encoding="utf-8") as f:  # opened before the switch
        run.resume("switch.journaled")
        run.wait("switch.swapped")
        f.write(ADDED)  # lands in the old folder, now out of sight
    run.resume("switch.swapped")
    code, _, err = run.finish()
    assert code == 1 and "changed while memdeck was trying to restore" in err, err
    assert ADDED in live.read_text()
    assert Engine.open(home).history()[0].origin == "external"
    assert leftovers(home) == []


def test_a_line_written_into_the_new_folder_in_the_instant_it_is_live_is_kept(
        home: Path, tmp_path: Path) -> None:
    eng = Engine.open(home)
    first = eng.history()[-1].commit
    run = Paused(memdeck_argv(home, "restore", first), ["switch.swapped"], tmp_path / "pause")
    run.wait("switch.swapped")
    with open(home / "memories" / "raw_memories.md", "a", encoding="utf-8") as f:
        f.write(ADDED)  # into the restored folder, before its history entry
    run.resume("switch.swapped")
    code, _, err = run.finish()
    assert code == 0, err
    assert ADDED in (home / "memories" / "raw_memories.md").read_text()
    _, patch = Engine.open(home).history_show(Engine.open(home).history()[0].commit)
    assert ADDED.strip() in patch  # in the result, and in history


# -- item 2: git locks a killed memdeck left -------------------------------------------------
def test_a_stale_history_lock_is_cleared_by_the_next_command(home: Path) -> None:
    lock = home / "memdeck" / "history.git" / "index.lock"
    lock.write_text("")
    r = run_memdeck(home, "history")
    assert r.returncode == 0, r.stderr
    assert "removed a stale git lock index.lock" in r.stderr
    assert not lock.exists()
    assert run_memdeck(home, "reset", "--yes").returncode == 0


def test_a_history_lock_a_live_process_holds_is_named_and_left(home: Path) -> None:
    lock = home / "memdeck" / "history.git" / "index.lock"
    holder = subprocess.Popen([sys.executable, "-c", f"f = open({str(lock)!r}, 'w'); "
                               "print('held', flush=True); import time; time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        r = run_memdeck(home, "reset", "--yes")
        assert r.returncode == 1
        assert f"held by a running process (pid {holder.pid}" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        assert lock.exists()
    finally:
        holder.kill()
        holder.wait()
    lock.unlink()


# -- item 4: nothing is written outside the home ---------------------------------------------
def test_a_history_that_is_a_file_is_refused_and_nothing_is_made_in_the_cwd(
        home: Path, tmp_path: Path) -> None:
    gitdir = home / "memdeck" / "history.git"
    subprocess.run(["rm", "-rf", str(gitdir)], check=True)
    gitdir.write_text("not a repository\n")
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    r = subprocess.run(memdeck_argv(home, "history"), cwd=cwd, capture_output=True,
                       text=True)
    assert r.returncode == 1 and "is not a folder" in r.stderr, r.stderr
    assert list(cwd.iterdir()) == []
    assert gitdir.read_text() == "not a repository\n"


def test_a_damaged_history_says_what_to_do(home: Path) -> None:
    head = home / "memdeck" / "history.git" / "HEAD"
    head.unlink()
    r = run_memdeck(home, "history")
    assert r.returncode == 1
    assert "history" in r.stderr and "move it aside" in r.stderr
    assert "internal error" not in r.stderr


# -- item 5: safe extraction where tarfile has no filters (Python 3.11.0–3.11.3) ----------
def test_restore_backup_works_without_tarfile_filters(home: Path, monkeypatch) -> None:
    import tarfile

    eng = Engine.open(home)
    state = root_state(home / "memories")
    backup = eng.reset().id
    monkeypatch.delattr(tarfile, "data_filter")
    real = tarfile.TarFile.extractall

    def old_extractall(self, path=".", members=None, *, numeric_owner=False, **kw):
        if kw:
            raise TypeError(f"extractall() got an unexpected keyword argument {next(iter(kw))!r}")
        return real(self, path, members, numeric_owner=numeric_owner)

    monkeypatch.setattr(tarfile.TarFile, "extractall", old_extractall)
    eng.restore_backup(backup)
    assert root_state(home / "memories") == state


def _evil(kind: str) -> list[tuple[object, bytes | None]]:
    import tarfile

    def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
        m = tarfile.TarInfo(f"roots/memories/{name}")
        m.type, m.linkname = kind, target
        return m

    ms = [tarfile.TarInfo("roots/memories/../../../escaped.txt")]
    if kind == "absolute-link":
        ms = [link("link.md", "/etc/passwd")]
    elif kind == "escaping-link":
        ms = [link("skills/link.md", "../../../../escaped.txt")]
    elif kind == "chained-links":  # each stays inside on its own; together they climb out
        ms = [link("a", "."), link("b", "a/a/a/a/.."), link("c", "b/../../.."),
              tarfile.TarInfo("roots/memories/c/escaped.txt")]
    elif kind == "inside-link":  # harmless alone, but memdeck never writes a link member
        ms = [link("skills/again.md", "../MEMORY.md")]
    elif kind == "hardlink":
        ms = [link("config.md", "../../config.toml", tarfile.LNKTYPE)]
    elif kind == "device":
        ms = [tarfile.TarInfo("roots/memories/dev")]
        ms[0].type = tarfile.CHRTYPE
    out: list[tuple[object, bytes | None]] = []
    for m in ms:
        data = b"evil" if m.isfile() else None
        m.size = len(data or b"")
        out.append((m, data))
    return out


@pytest.mark.parametrize("filters", ["filters", "no-filters"])
@pytest.mark.parametrize("kind", ["dotdot", "absolute-link", "escaping-link", "chained-links",
                                  "inside-link", "hardlink", "device", "truncated"])
def test_an_unsafe_or_damaged_backup_is_refused_and_changes_nothing(
        home: Path, monkeypatch, kind: str, filters: str) -> None:
    """On every Python memdeck supports (3.11.0–3.11.3 have no tar filters): a backup with a
    member that escapes, a link out, a device, or cut short, is refused in one line."""
    import io
    import tarfile

    eng = Engine.open(home)
    eng.reset()
    [b] = eng.backups()
    if kind == "truncated":
        data = b.path.read_bytes()
        b.path.write_bytes(data[: len(data) // 2])
    else:
        with tarfile.open(b.path, "r:gz") as tar:
            members = [(m, tar.extractfile(m).read() if m.isfile() else None)  # type: ignore[union-attr]
                       for m in tar.getmembers()]
        with tarfile.open(b.path, "w:gz") as tar:
            for m, data in [*members[:-1], *_evil(kind), members[-1]]:  # manifest stays last
                tar.addfile(m, io.BytesIO(data) if data is not None else None)  # type: ignore[arg-type]
    if filters == "no-filters":
        monkeypatch.delattr(tarfile, "data_filter")
    before = root_state(home / "memories")
    # a backup cut short is not offered at all (its manifest is written last)
    why = "no backup" if kind == "truncated" else "damaged or unsafe"
    with pytest.raises(MemdeckError, match=why) as e:
        eng.restore_backup(b.id)
    assert "\n" not in str(e.value)
    assert root_state(home / "memories") == before
    assert not (home.parent / "escaped.txt").exists()
    assert not list(home.parent.parent.rglob("escaped.txt"))
    assert leftovers(home) == []
    listed = run_memdeck(home, "backups")  # the listing still works beside it
    assert listed.returncode == 0 and "internal error" not in listed.stderr


def test_a_memory_folder_with_links_comes_back_from_its_backup(home: Path) -> None:
    """memdeck's own backups hold no link member: a symlink is listed in the manifest and
    made again, a file linked twice is stored twice; both come back."""
    import os

    root = home / "memories"
    (root / "skills" / "shared").mkdir(parents=True)
    (root / "skills" / "shared" / "SKILL.md").write_text("# shared\n")
    (root / "skills" / "alias").symlink_to("shared")
    os.link(root / "MEMORY.md", root / "MEMORY.hardlink.md")
    eng = Engine.open(home)
    eng.record_outside_edits()
    before = root_state(root)
    backup = eng.reset().id
    with tarfile.open(home / "memdeck" / "backups" / f"{backup}.tar.gz") as tar:
        assert not [m.name for m in tar.getmembers() if m.issym() or m.islnk()]
    eng.restore_backup(backup)
    assert root_state(root) == before
    assert os.readlink(root / "skills" / "alias") == "shared"
    assert (root / "MEMORY.hardlink.md").read_text() == (root / "MEMORY.md").read_text()


def test_a_manifest_link_out_of_its_folder_is_refused(home: Path) -> None:
    import io
    import json

    eng = Engine.open(home)
    backup = eng.reset().id
    path = home / "memdeck" / "backups" / f"{backup}.tar.gz"
    with tarfile.open(path, "r:gz") as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None)  # type: ignore[union-attr]
                   for m in tar.getmembers()]
    manifest = json.loads(members[-1][1] or b"{}")
    manifest["links"] = {"roots/memories/MEMORY.md.link": "../../config.toml"}
    data = json.dumps(manifest).encode()
    members[-1][0].size = len(data)
    with tarfile.open(path, "w:gz") as tar:
        for m, d in [*members[:-1], (members[-1][0], data)]:
            tar.addfile(m, io.BytesIO(d) if d is not None else None)
    before = root_state(home / "memories")
    with pytest.raises(MemdeckError, match="damaged or unsafe"):
        eng.restore_backup(backup)
    assert root_state(home / "memories") == before


# -- item 3: a dead memdeck's lease does not block reset ------------------------------------
def test_a_dead_memdecks_lease_does_not_block_reset(home: Path) -> None:
    killed = run_memdeck(home, "restore", Engine.open(home).history()[-1].commit,
                         crash_at="switch.journaled")
    assert killed.returncode == KILLED
    conn = sqlite3.connect(home / "memories_1.sqlite")
    worker = conn.execute("SELECT worker_id, status FROM jobs WHERE job_key = 'global'"
                          ).fetchone()
    conn.close()
    assert worker[1] == "running" and worker[0].startswith("memdeck:")  # its lease stayed
    r = run_memdeck(home, "reset", "--yes")
    assert r.returncode == 0, r.stderr
    assert stage1_count(home) == 0


def test_memdeck_never_writes_a_temp_file_into_the_root_it_edits(home: Path) -> None:
    """A save is written into a staged copy and switched in: the root never holds a
    half-written file or a temp file, even killed in the middle."""
    v = Engine.open(home).memory_read("MEMORY.md").version
    r = run_engine(home, f"memory_save('MEMORY.md', 'x\\n', {v!r})", crash_at="switch.staged")
    assert r.returncode == KILLED
    assert [p for p in (home / "memories").rglob("*") if p.name.endswith(".tmp")] == []
    assert run_memdeck(home, "history").returncode == 0
    assert leftovers(home) == []


def test_reset_leaves_no_proposal_holding_what_the_model_wrote(home: Path) -> None:
    from conftest import plant_secret

    plant_secret(home)
    eng = Engine.open(home)
    p = eng.consolidate()
    assert p.secrets  # the token is in the proposal's files
    assert run_memdeck(home, "reset", "--yes").returncode == 0
    assert list((home / "memdeck" / "proposals").iterdir()) == []
    assert [q.status for q in Engine.open(home).proposals() if q.id == p.id] == ["rejected"]
    assert eng.proposal_diff(p.id) == ""


def test_reset_on_a_corrupt_pipeline_db_says_what_to_do(home: Path) -> None:
    db = home / "memories_1.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + b"\x13" * 4096)
    before = root_state(home / "memories")
    r = run_memdeck(home, "reset", "--yes")
    assert r.returncode == 1
    assert "internal error" not in r.stderr and "memories_1.sqlite" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert root_state(home / "memories") == before


def test_a_refused_forget_journals_nothing(home: Path) -> None:
    """A forget refused for its rollout (no session_meta) leaves no change behind for the
    next command to retry forever."""
    eng = Engine.open(home)
    s = next(s for s in eng.sessions() if s.status == "extracted")
    path = Path(s.rollout_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(x for x in lines if b'"session_meta"' not in x))
    r = run_memdeck(home, "forget", s.id)
    assert r.returncode == 1 and "no session_meta line" in r.stderr, r.stderr
    assert leftovers(home) == []
    nxt = run_memdeck(home, "sessions")
    assert nxt.returncode == 0 and "recovered" not in nxt.stderr


def test_a_reset_killed_writing_its_backup_changes_nothing_and_leaves_no_temp_file(
        home: Path) -> None:
    before, count = root_state(home / "memories"), stage1_count(home)
    killed = run_memdeck(home, "reset", "--yes", crash_at="backup.writing")
    assert killed.returncode == KILLED
    assert list((home / "memdeck" / "backups").glob(".*.tmp"))  # the archive cut short
    nxt = run_memdeck(home, "backups")
    assert nxt.returncode == 0 and "removed 1 unfinished backup file" in nxt.stderr
    assert "no backups" in nxt.stdout.lower() or nxt.stdout.strip() == ""
    assert (root_state(home / "memories"), stage1_count(home)) == (before, count)
    assert leftovers(home) == []


def test_a_forget_killed_after_its_append_deletes_the_raw_memory_next_time(home: Path) -> None:
    s = next(s for s in Engine.open(home).sessions() if s.status == "extracted")
    killed = run_memdeck(home, "forget", s.id, crash_at="forget.appended")
    assert killed.returncode == KILLED
    nxt = run_memdeck(home, "memories", "--json")
    assert f"finished an interrupted forget session {s.id}" in nxt.stderr
    assert s.id not in nxt.stdout
    again = next(x for x in Engine.open(home).sessions() if x.id == s.id)
    assert again.memory_mode == "disabled"
    lines = Path(again.rollout_path).read_text().splitlines()
    assert sum('"memory_mode":"disabled"' in x for x in lines) == 1  # appended once


def test_a_change_that_cannot_be_staged_says_so_in_one_line_and_changes_nothing(
        home: Path) -> None:
    """Staging that cannot be made (here: `memdeck/staging` is a file) stops an edit before
    anything moves, with one line."""
    from memdeck.engine import HomeError

    staging = home / "memdeck" / "staging"
    if staging.is_dir():
        staging.rmdir()
    staging.write_text("not a folder\n")
    eng = Engine.open(home)
    v = eng.memory_read("MEMORY.md").version
    before = root_state(home / "memories")
    with pytest.raises(HomeError, match="is not a folder of memdeck's") as e:
        eng.memory_save("MEMORY.md", "x\n", v)
    assert "\n" not in str(e.value)
    assert root_state(home / "memories") == before
    assert staging.read_text() == "not a folder\n"


def test_a_journal_naming_folders_outside_the_home_is_never_followed(home: Path,
                                                                      tmp_path: Path) -> None:
    """A tampered or foreign `change.journal` must not make recovery rename anything that is
    not this home's memory: it is taken as damage and cleared."""
    import json

    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "data.txt").write_text("keep me\n")
    staged = home / "memdeck" / "staging" / "abc"
    (staged / "precious").mkdir(parents=True)
    (home / "memdeck" / "change.journal").write_text(json.dumps({
        "op": "edit", "id": "abc", "dir": str(staged), "state": "committed", "what": "x",
        "roots": [{"root": str(outside), "staged": str(staged / "precious"), "base": None,
                   "new": root_state(staged / "precious")}],
        "finish": {}, "history": {"origin": "user", "message": "x", "trailers": {}}}))
    before = root_state(home / "memories")
    r = run_memdeck(home, "sessions")
    assert r.returncode == 0 and "cleared a change that was never started" in r.stderr
    assert (outside / "data.txt").read_text() == "keep me\n"
    assert root_state(home / "memories") == before
    assert leftovers(home) == []


def test_a_change_whose_staged_rows_are_damaged_says_how_to_give_it_up(home: Path) -> None:
    """A restore-backup killed once decided, its staged rows then damaged: reads go on, a
    change says in one line what is wrong and what to do, and doing it frees the home."""
    eng = Engine.open(home)
    backup = eng.reset().id
    killed = run_memdeck(home, "restore-backup", backup, crash_at="switch.journaled")
    assert killed.returncode == KILLED
    [rows] = (home / "memdeck" / "staging").glob("*/rows.json")
    rows.write_text('{"memories_1.sqlite": ')  # cut short
    assert run_memdeck(home, "sessions").returncode == 0  # a read still works
    r = run_memdeck(home, "reset", "--yes")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "cannot finish an interrupted restore backup" in r.stderr
    assert "move" in r.stderr and "change.journal aside" in r.stderr
    journal = home / "memdeck" / "change.journal"
    journal.rename(home / "memdeck" / "change.journal.given-up")
    assert run_memdeck(home, "reset", "--yes").returncode == 0


def test_a_lock_file_that_is_a_folder_is_one_line_and_reads_go_on(home: Path) -> None:
    lock = home / "memdeck" / "folder.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()
    assert run_memdeck(home, "sessions").returncode == 0  # a read does not need the lock
    r = run_memdeck(home, "reset", "--yes")
    assert r.returncode == 1 and "folder.lock" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "internal error" not in r.stderr
