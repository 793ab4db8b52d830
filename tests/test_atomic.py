"""The one atomic file writer: old bytes or new, never a mix, nothing left behind on failure."""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from memdeck.engine import atomic
from memdeck.engine.atomic import atomic_file, write_atomic, write_new

ENGINE = Path(__file__).resolve().parent.parent / "engine"


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_new_file_is_written_and_an_existing_one_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "config.toml"  # the folder is made too
    write_atomic(target, "a = 1\n")
    assert target.read_text() == "a = 1\n"
    assert stat.S_IMODE(target.stat().st_mode) == atomic.NEW_FILE_MODE
    target.chmod(0o600)
    write_atomic(target, b"a = 2\r\n")  # bytes as given, line endings untouched
    assert target.read_bytes() == b"a = 2\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert temps(target.parent) == []


def test_mode_and_times_of_a_new_file(tmp_path: Path) -> None:
    target = tmp_path / "rollout.jsonl"
    write_atomic(target, "{}\n", mode=0o640, times_ns=(1_000_000_000, 2_000_000_000))
    st = target.stat()
    assert stat.S_IMODE(st.st_mode) == 0o640 and st.st_mtime_ns == 2_000_000_000


def test_a_symlink_stays_a_link_and_its_target_is_replaced(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "config.toml"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    write_atomic(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"
    assert temps(real.parent) == [] and temps(tmp_path) == []


def test_an_exception_while_writing_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="halfway"):
        with atomic_file(target) as f:
            f.write(b"half of the new")
            raise RuntimeError("halfway")
    assert target.read_text() == "old\n"
    assert temps(tmp_path) == []


@pytest.mark.parametrize("step", ["replace", "fsync"])
def test_a_failing_step_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch,
                                                          step: str) -> None:
    target = tmp_path / "accept.journal"
    target.write_text("old\n")

    def fail(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, step, fail)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "new\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n"
    assert temps(tmp_path) == []


def test_the_file_and_then_its_folder_are_fsynced(tmp_path: Path, monkeypatch) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def record(fd: int) -> None:
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", record)
    write_atomic(tmp_path / "x", "data")
    assert synced == ["file", "folder"]
    synced.clear()
    assert write_new(tmp_path / "note.md", "data")
    assert synced == ["file", "folder"]


def test_write_new_never_replaces(tmp_path: Path) -> None:
    target = tmp_path / "notes" / "2026-11-20T12-00-00-a.md"
    assert write_new(target, "first\n")
    assert not write_new(target, "second\n")
    assert target.read_text() == "first\n"
    assert temps(target.parent) == []


def test_write_new_without_hard_links(tmp_path: Path, monkeypatch) -> None:
    def no_links(*a: object) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    target = tmp_path / "note.md"
    assert write_new(target, "first\n")
    assert not write_new(target, "second\n")
    assert target.read_text() == "first\n"
    assert temps(tmp_path) == []


def test_no_other_module_writes_through_its_own_temp_file() -> None:
    """Every temp-file-and-rename in the engine is this one; the swap's directory renames
    and Codex's baseline commit message (a scratch file, never renamed) are not file writes
    of this kind."""
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        if path.name == "atomic.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("replace", "mkstemp") and \
                    isinstance(node.value, ast.Name) and node.value.id in ("os", "tempfile"):
                found.append(f"{path.relative_to(ENGINE)}:{node.lineno} {node.value.id}."
                             f"{node.attr}")
    assert found == []
