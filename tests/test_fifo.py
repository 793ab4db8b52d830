"""A FIFO, socket or device named like a rollout is never opened (issue 12 item 9).

`open()` on a FIFO without a writer blocks forever, and reading /dev/zero never ends: every
command that indexed the home (sessions, show, citations, extract, consolidate, forget) hung.
Each command runs here as a real subprocess on the demo home with such a file planted; the
timeout only turns a hang into a failure, it measures nothing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memdeck.engine import demo_home
from memdeck.engine.codex.linestream import (
    NOT_REGULAR,
    NotRegularFile,
    open_regular,
    read_head,
    read_regular_bytes,
)
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.index.scan import not_regular_warning, scan_file

HANG = 120  # seconds: far past any run of these commands, so only a hang reaches it
FIFO_ID = "11111111-2222-7333-8444-555555555555"
FIFO_REL = f"sessions/2026/01/02/rollout-2026-01-02T10-00-00-{FIFO_ID}.jsonl"
WARNING = f"skipped 1 file that is not a regular file: {FIFO_REL} (a FIFO)"


def memdeck(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memdeck.tui.cli", *argv, "--home", str(home)],
                          capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL)


def listed(home: Path) -> dict[str, dict]:
    r = memdeck(home, "sessions", "--json")
    assert r.returncode == 0, r.stderr
    return {s["id"]: s for s in json.loads(r.stdout)}


ELIGIBLE = "<an eligible session>"  # the demo's ids follow the clock: looked up per home


@pytest.fixture
def fifo_home(tmp_path: Path) -> tuple[Path, dict[str, dict]]:
    """The demo home with a FIFO named like a rollout, and the sessions listed before."""
    home = demo_home(tmp_path / "demo")
    before = listed(home)
    fifo = home / FIFO_REL
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    return home, before


def test_sessions_lists_the_fifo_as_unreadable_and_every_other_session(fifo_home) -> None:
    home, before = fifo_home
    after = listed(home)
    assert set(after) == set(before) | {FIFO_ID}
    assert all(after[k]["status"] == v["status"] for k, v in before.items())
    row = after[FIFO_ID]
    assert row["status"] == "unreadable"
    assert row["reason"].startswith(f"{NOT_REGULAR} (a FIFO)")
    r = memdeck(home, "sessions")
    assert r.returncode == 0
    assert "not a regular" in r.stdout


# (argv, exit code): the FIFO's own session is shown and refused, the others work as always
COMMANDS = [
    (["show", FIFO_ID[:8]], 0),
    (["show", ELIGIBLE], 0),
    (["citations"], 0),
    (["extract"], 0),
    (["consolidate"], 0),
    (["forget", ELIGIBLE], 0),
    (["forget", FIFO_ID[:8]], 1),
]


@pytest.mark.parametrize("argv,rc", COMMANDS, ids=lambda a: " ".join(a) if isinstance(a, list)
                         else str(a))
def test_every_command_finishes_beside_a_fifo(fifo_home, argv: list[str], rc: int) -> None:
    home, before = fifo_home
    eligible = next(k for k, v in before.items() if v["status"] == "eligible")
    argv = [eligible if a == ELIGIBLE else a for a in argv]
    r = memdeck(home, *argv)
    assert r.returncode == rc, r.stderr
    assert "internal error" not in r.stderr
    if rc:
        [line] = r.stderr.splitlines()  # one line, about the file
        assert FIFO_ID in line
    if argv == ["show", FIFO_ID[:8]]:
        assert "not a regular file (a FIFO)" in r.stdout
    assert set(listed(home)) == set(before) | {FIFO_ID}  # nothing else lost


@pytest.mark.parametrize("argv", [["sessions"], ["show", ELIGIBLE], ["extract"]],
                         ids=" ".join)
def test_commands_that_warn_say_one_line_about_the_fifo(fifo_home, argv: list[str]) -> None:
    home, before = fifo_home
    eligible = next(k for k, v in before.items() if v["status"] == "eligible")
    r = memdeck(home, *[eligible if a == ELIGIBLE else a for a in argv])
    assert r.returncode == 0, r.stderr
    assert [ln for ln in r.stderr.splitlines() if "regular file" in ln] == [
        f"memdeck: warning: {WARNING}"]


def test_forget_refuses_a_compressed_fifo(tmp_path: Path) -> None:
    """forget re-materialises a `.jsonl.zst` before its append: that open must not block
    either (engine/phase1/forget.py, `_materialise`)."""
    home = demo_home(tmp_path / "demo")
    fifo = home / (FIFO_REL + ".zst")
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    r = memdeck(home, "forget", FIFO_ID[:8])
    assert r.returncode == 1
    [line] = r.stderr.splitlines()
    assert fifo.name in line and "internal error" not in line
    assert fifo.exists() and not fifo.with_name(fifo.name[: -len(".zst")]).exists()


# -- the reader itself, in-process: each kind of non-regular file, and a symlink to one ------


def _socket(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    cwd = os.getcwd()
    os.chdir(path.parent)  # a rollout's name is longer than a socket path may be
    try:
        s.bind(path.name)
    finally:
        os.chdir(cwd)
    return s


@pytest.mark.parametrize("kind", ["fifo", "socket", "dev_zero", "fifo_link", "folder"])
@pytest.mark.parametrize("name", [f"rollout-2026-01-02T10-00-00-{FIFO_ID}.jsonl",
                                  f"rollout-2026-01-02T10-00-00-{FIFO_ID}.jsonl.zst"])
def test_readers_never_open_what_is_not_a_regular_file(tmp_path: Path, kind: str,
                                                       name: str) -> None:
    path = tmp_path / "archived_sessions" / name
    path.parent.mkdir()
    sock = None
    expected = {"fifo": "a FIFO", "socket": "a socket", "dev_zero": "a character device",
                "fifo_link": "a FIFO", "folder": "a folder"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = _socket(path)
    elif kind == "dev_zero":  # endless zeros: a reader that opened it would never finish
        path.symlink_to("/dev/zero")
    elif kind == "fifo_link":
        os.mkfifo(tmp_path / "elsewhere")
        path.symlink_to(tmp_path / "elsewhere")
    else:
        path.mkdir()
    try:
        with pytest.raises(NotRegularFile) as e:
            open_regular(path)
        assert e.value.kind == expected
        with pytest.raises(NotRegularFile):
            read_regular_bytes(path)
        assert read_head(path) == b""
        st = scan_file(path)
        assert st.file_problem == f"{NOT_REGULAR} ({expected}): skipped, never opened"
        assert st.line_count == 0 and st.offset == 0
        rollout = read_rollout(path)
        assert rollout.file_problem == st.file_problem and rollout.lines == ()
    finally:
        if sock is not None:
            sock.close()


def test_a_regular_file_swapped_for_a_fifo_after_a_scan_is_read_again(tmp_path: Path,
                                                                       fixture_path) -> None:
    path = tmp_path / "rollout-2026-01-02T10-00-00-x.jsonl"
    path.write_bytes(fixture_path("cli-preferences.jsonl").read_bytes())
    first = scan_file(path)
    assert first.file_problem is None and first.offset > 0
    path.unlink()
    os.mkfifo(path)
    again = scan_file(path, first)  # the incremental path checks the old head first
    assert again.file_problem is not None and again.file_problem.startswith(NOT_REGULAR)
    assert again.line_count == 0


def test_a_symlink_to_a_regular_rollout_is_still_read(tmp_path: Path, fixture_path) -> None:
    path = tmp_path / "rollout-2026-01-02T10-00-00-x.jsonl"
    path.symlink_to(fixture_path("cli-preferences.jsonl"))
    st = scan_file(path)
    assert st.file_problem is None and st.thread_id is not None
    fd = open_regular(path)
    try:
        assert os.get_blocking(fd)  # O_NONBLOCK cleared for the reads
    finally:
        os.close(fd)


def test_the_warning_counts_every_skipped_file() -> None:
    fifo = f"{NOT_REGULAR} (a FIFO): skipped, never opened"
    sock = f"{NOT_REGULAR} (a socket): skipped, never opened"
    assert not_regular_warning([("a", None), ("b", "empty file")]) is None
    assert not_regular_warning([("a", None), ("s/x.jsonl", fifo)]) == (
        "skipped 1 file that is not a regular file: s/x.jsonl (a FIFO)")
    assert not_regular_warning([("s/x.jsonl", fifo), ("b", None), ("s/y.jsonl", sock)]) == (
        "skipped 2 files that are not a regular file: s/x.jsonl (a FIFO) and 1 more")


def test_the_citation_pre_check_never_opens_a_fifo(tmp_path) -> None:
    from memdeck.engine.read_path.citation_store import file_holds

    pipe = tmp_path / "rollout-2026-01-02T00-00-00-0199aaaa-0000-7000-8000-000000000000.jsonl"
    os.mkfifo(pipe)
    assert file_holds(str(pipe), b"<oai-mem-citation>") is False  # returns: never blocks
