"""Sharing memory through plain git remotes (issue 26): two and three Codex homes and a bare
repository over file:// and a `git daemon` on 127.0.0.1; push, pull as a proposal, merge,
conflict, secret refused, scope-limited push, an unreachable remote, a remote memdeck did
not write."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FAKE_GITHUB_TOKEN, HomeBuilder

from memdeck.engine import AcceptRefused, Engine, SyncError, demo_home
from memdeck.engine.sync.shared import shared_text


def bare(tmp_path: Path, name: str = "team.git") -> Path:
    path = tmp_path / name
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def a_home(tmp_path: Path) -> Engine:
    """A home with memory: the demo after one accepted consolidation."""
    eng = Engine.open(demo_home(tmp_path / "a"))
    eng.extract(backend="offline")
    eng.accept(eng.consolidate().id)
    return eng


def empty_home(tmp_path: Path, name: str = "b") -> Engine:
    """A home with no memory yet, on memory v1 like the demo."""
    return Engine.open(HomeBuilder(tmp_path / name).v1().root)


def memory(eng: Engine, rel: str = "MEMORY.md") -> str:
    return (eng.home.memory_root / rel).read_text(encoding="utf-8")


def edit(eng: Engine, rel: str, old: str, new: str) -> None:
    p = eng.home.memory_root / rel
    text = p.read_text(encoding="utf-8")
    assert old in text, (old, text[:400])
    p.write_text(text.replace(old, new, 1), encoding="utf-8")


def remote_files(repo: Path, version: str = "v1") -> dict[str, str]:
    ls = subprocess.run(["git", "--git-dir", str(repo), "ls-tree", "-r", "--name-only",
                         f"memdeck/{version}"], capture_output=True, text=True, check=True)
    return {p: subprocess.run(["git", "--git-dir", str(repo), "show",
                               f"memdeck/{version}:{p}"], capture_output=True, text=True,
                              check=True).stdout for p in ls.stdout.split()}


def take(eng: Engine, remote: str = "team") -> None:
    p = eng.pull(remote)
    assert p is not None and p.backend == f"pull:{remote}", p
    assert not [x for x in p.problems if x.startswith("conflict")], p.problems
    eng.accept(p.id)


def shared_pair(tmp_path: Path) -> tuple[Path, Engine, Engine]:
    """A bare remote, and homes A and B with the same memory through it."""
    repo = bare(tmp_path)
    a, b = a_home(tmp_path), empty_home(tmp_path)
    for eng in (a, b):
        eng.remote_add("team", f"file://{repo}")
    a.push()
    take(b)
    return repo, a, b


# -- push and pull --------------------------------------------------------------------------
def test_a_push_then_a_pull_gives_the_other_home_the_same_memory(tmp_path: Path) -> None:
    repo = bare(tmp_path)
    a, b = a_home(tmp_path), empty_home(tmp_path)
    a.remote_add("team", f"file://{repo}")
    pushed = a.push()
    assert pushed.commit and pushed.files >= 3
    shared = remote_files(repo)
    assert "raw_memories.md" not in shared  # rebuilt by each home from its own database
    assert not any("rollout_path" in t for t in shared.values())  # this machine's paths stay
    assert not any("thread_id" in t for t in shared.values())
    msg = subprocess.run(["git", "--git-dir", str(repo), "log", "-1", "--format=%B",
                          "memdeck/v1"], capture_output=True, text=True).stdout
    assert "Memdeck-Origin: consolidation" in msg and "Memdeck-Machine:" in msg
    b.remote_add("team", f"file://{repo}")
    take(b)
    assert memory(b) == shared["MEMORY.md"]
    assert memory(b, "memory_summary.md") == memory(a, "memory_summary.md")
    assert b.history()[0].origin == "pull"
    assert b.pull("team") is None  # nothing new now
    assert a.push().commit is None  # and nothing new to push from A


def test_both_sides_changed_different_lines_merge_without_a_conflict(tmp_path: Path) -> None:
    repo, a, b = shared_pair(tmp_path)
    edit(a, "MEMORY.md", "# Task Group: shop", "# Task Group: shop (edited on A)")
    a.push()
    edit(b, "memory_summary.md", "## General Tips\n", "## General Tips\n- B's tip: run make\n")
    with pytest.raises(SyncError, match="has memory this machine has not taken yet"):
        b.push()  # the remote moved on: pull first, nothing lost
    take(b)
    assert "shop (edited on A)" in memory(b)
    assert "B's tip: run make" in memory(b, "memory_summary.md")
    b.push()
    take(a)
    assert "B's tip: run make" in memory(a, "memory_summary.md")
    # the same memory; A's lines keep its own sessions' paths and ids, B never had them
    assert shared_text("MEMORY.md", memory(a)) == memory(b)
    assert "rollout_path=" in memory(a) and "rollout_path=" not in memory(b)


def test_the_same_lines_changed_on_two_machines_are_a_conflict_to_resolve(
        tmp_path: Path) -> None:
    repo, a, b = shared_pair(tmp_path)
    edit(a, "MEMORY.md", "# Task Group: shop", "# Task Group: shop, as A sees it")
    a.push()
    edit(b, "MEMORY.md", "# Task Group: shop", "# Task Group: shop, as B sees it")
    p = b.pull("team")
    assert p is not None
    assert [x for x in p.problems if x.startswith("conflict: MEMORY.md line 1")]
    conflicts = b.pull_conflicts(p.id)
    assert [(c.ours, c.theirs) for c in conflicts] == [
        (["# Task Group: shop, as B sees it (Django web shop)"],
         ["# Task Group: shop, as A sees it (Django web shop)"])]
    workspace = b.home.proposals_dir / p.id / "workspace" / "MEMORY.md"
    assert "<<<<" not in workspace.read_text() and ">>>>" not in workspace.read_text()
    with pytest.raises(AcceptRefused, match="1 unresolved conflict"):
        b.accept(p.id)
    assert b.resolve_conflict(p.id, 1, "theirs") == []
    b.accept(p.id)
    assert memory(b).startswith("# Task Group: shop, as A sees it (Django web shop)\n")
    b.push()
    assert remote_files(repo)["MEMORY.md"] == memory(b)


def test_a_secret_is_refused_at_push_and_nothing_leaves(tmp_path: Path) -> None:
    repo = bare(tmp_path)
    a = a_home(tmp_path)
    a.remote_add("team", f"file://{repo}")
    edit(a, "memory_summary.md", "## General Tips\n",
         f"## General Tips\n- deploy token {FAKE_GITHUB_TOKEN}\n")
    with pytest.raises(SyncError, match=r"not pushed: memory_summary.md:\d+ holds a secret"):
        a.push()
    refs = subprocess.run(["git", "--git-dir", str(repo), "for-each-ref"],
                          capture_output=True, text=True).stdout
    assert refs == ""


def test_a_scoped_remote_gets_only_that_projects_memory(tmp_path: Path) -> None:
    repo = bare(tmp_path)
    a = a_home(tmp_path)
    a.remote_add("shop-team", f"file://{repo}", scope="shop")
    a.push("shop-team")
    shared = remote_files(repo)
    assert "# Task Group: shop" in shared["MEMORY.md"]
    assert "# Task Group: infra" not in shared["MEMORY.md"]
    assert all("infra" not in t.lower() for p, t in shared.items()
               if p.startswith("rollout_summaries/"))
    summary = shared["memory_summary.md"]
    section = re.search(r"## User preferences\n(.*?)(?=^## )", summary, re.S | re.M)
    assert section and section.group(1).strip() == ""  # nothing personal, unless asked
    with pytest.raises(SyncError, match="push only"):
        a.pull("shop-team")


def test_an_unreachable_remote_is_one_line_and_nothing_changes(tmp_path: Path) -> None:
    a = a_home(tmp_path)
    a.remote_add("gone", f"file://{tmp_path / 'no-such-repo.git'}")
    before = memory(a)
    with pytest.raises(SyncError) as e:
        a.push("gone")
    assert "\n" not in str(e.value) and "gone" in str(e.value)
    with pytest.raises(SyncError, match="cannot be read"):
        a.pull("gone")
    assert memory(a) == before and a.proposals() == [] or all(
        p.backend != "pull:gone" for p in a.proposals())


def test_a_remote_memdeck_did_not_write_is_refused(tmp_path: Path) -> None:
    repo = bare(tmp_path)
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", "memdeck/v1", str(work)], check=True)
    (work / "MEMORY.md").write_text("# not memdeck's\n")
    subprocess.run(["git", "-C", str(work), "add", "."], check=True)
    subprocess.run(["git", "-C", str(work), "-c", "user.name=x", "-c", "user.email=x@x",
                    "commit", "-qm", "hand-made"], check=True)
    subprocess.run(["git", "-C", str(work), "push", "-q", str(repo), "memdeck/v1"], check=True)
    b = empty_home(tmp_path)
    b.remote_add("team", f"file://{repo}")
    with pytest.raises(SyncError, match="commits memdeck did not write"):
        b.pull()
    assert not any(b.home.memory_root.iterdir())  # the empty memory folder stays empty


def test_three_homes_share_through_one_remote(tmp_path: Path) -> None:
    repo = bare(tmp_path)
    a, b, c = a_home(tmp_path), empty_home(tmp_path, "b"), empty_home(tmp_path, "c")
    for eng in (a, b, c):
        eng.remote_add("team", f"file://{repo}")
    a.push()
    take(b)
    take(c)
    edit(c, "memory_summary.md", "## General Tips\n", "## General Tips\n- from C\n")
    c.push()
    take(b)
    take(a)
    assert "- from C" in memory(a, "memory_summary.md") and "- from C" in memory(
        b, "memory_summary.md")


# -- git daemon on 127.0.0.1 -------------------------------------------------------------------
@pytest.fixture
def git_daemon(tmp_path: Path) -> Iterator[str]:
    base = tmp_path / "served"
    base.mkdir()
    bare(base, "team.git")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all",
                             "--enable=receive-pack", f"--base-path={base}", "--listen=127.0.0.1",
                             f"--port={port}", str(base)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail("git daemon did not start")
            time.sleep(0.1)
    try:
        yield f"git://127.0.0.1:{port}/team.git"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_push_and_pull_over_a_git_daemon(tmp_path: Path, git_daemon: str) -> None:
    a, b = a_home(tmp_path), empty_home(tmp_path)
    for eng in (a, b):
        eng.remote_add("team", git_daemon)
    a.push()
    take(b)
    assert memory(b) == shared_text("MEMORY.md", memory(a))


def test_a_remote_of_another_memory_version_says_which(tmp_path: Path) -> None:
    repo = bare(tmp_path)
    a = a_home(tmp_path)
    a.remote_add("team", f"file://{repo}")
    a.push()
    v2 = Engine.open(HomeBuilder(tmp_path / "v2").root)  # no [memories] version: v2
    v2.remote_add("team", f"file://{repo}")
    with pytest.raises(SyncError, match="has memory v1, not v2"):
        v2.pull()


# -- kill -9 during a pull's accept ---------------------------------------------------------
@pytest.mark.parametrize("step", ["switch.staged", "switch.journaled", "switch.swapped",
                                  "switch.rows", "switch.recorded"])
def test_a_pull_accept_killed_at_any_step_is_old_or_new(tmp_path: Path, step: str) -> None:
    from crash_run import KILLED, leftovers, run_memdeck

    from memdeck.engine.phase2.proposals import root_state

    _, a, b = shared_pair(tmp_path)
    edit(a, "memory_summary.md", "## General Tips\n", "## General Tips\n- from A, later\n")
    a.push()
    p = b.pull("team")
    assert p is not None
    before = root_state(b.home.memory_root)
    killed = run_memdeck(b.home.root, "accept", p.id, crash_at=step)
    assert killed.returncode == KILLED, killed.stderr
    nxt = run_memdeck(b.home.root, "sessions")  # any command finishes or undoes it
    assert nxt.returncode == 0, nxt.stderr
    done = "- from A, later" in memory(b, "memory_summary.md")
    assert done == (step != "switch.staged"), (step, nxt.stderr)
    if not done:
        assert root_state(b.home.memory_root) == before
        b.accept(p.id)  # the same pull, accepted again: nothing was lost
    assert leftovers(b.home.root) == []
    assert "- from A, later" in memory(b, "memory_summary.md")
    assert b.push().merged_pulls == 1  # and B shares again, the pulled state its parent
    assert b.pull("team") is None


def test_the_sync_status_says_how_far_apart_the_homes_are(tmp_path: Path) -> None:
    _, a, b = shared_pair(tmp_path)
    s = b.sync_status("team")
    assert s.reachable and (s.ahead, s.behind) == (0, 0) and s.incoming == []
    assert s.last_pull is not None
    edit(a, "memory_summary.md", "## General Tips\n", "## General Tips\n- from A\n")
    a.push()
    s = b.sync_status("team")
    assert s.behind == 1 and s.incoming == ["memory_summary.md"]
    a.remote_add("gone", f"file://{tmp_path / 'missing.git'}")
    gone = a.sync_status("gone")
    assert not gone.reachable and "cannot be read" in gone.problem


def test_hostile_remote_input_gets_one_line_and_changes_nothing(tmp_path: Path) -> None:
    a = a_home(tmp_path)
    with pytest.raises(SyncError, match="is not a remote name"):
        a.remote_add("../../etc", "file:///x")
    a.remote_add("tok", "https://user:s3cretTOKEN@127.0.0.1:9/none.git")
    with pytest.raises(SyncError) as e:
        a.push("tok")
    assert "s3cretTOKEN" not in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(SyncError, match="already exists"):
        a.remote_add("tok", "file:///y")


def test_a_damaged_conflicts_file_is_one_line(tmp_path: Path) -> None:
    from memdeck.engine import MemdeckError

    _, a, b = shared_pair(tmp_path)
    edit(a, "MEMORY.md", "# Task Group: shop", "# Task Group: shop, A")
    a.push()
    edit(b, "MEMORY.md", "# Task Group: shop", "# Task Group: shop, B")
    p = b.pull("team")
    assert p is not None
    (b.home.proposals_dir / p.id / "conflicts.json").write_text("[{\"path\": trunc")
    with pytest.raises(MemdeckError, match="conflicts.json is damaged"):
        b.accept(p.id)
    assert "shop, B" in memory(b)  # nothing lost
