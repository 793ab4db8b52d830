"""engine/line_diff.py: difflib's answers for a small file, git's edit script, read the same
way, for a big one (a 50 MB MEMORY.md took minutes in difflib: issue 29)."""

from __future__ import annotations

import difflib
import random

import pytest

from memdeck.engine import line_diff
from memdeck.engine.line_diff import grouped, opcodes, unified


def _edited(rng: random.Random, old: list[str]) -> list[str]:
    new = list(old)
    for _ in range(rng.randint(1, 12)):
        i = rng.randrange(len(new) + 1)
        what = rng.choice(("insert", "delete", "replace"))
        if what == "insert" or not new:
            new[i:i] = [f"- added {rng.random():.6f}\n" for _ in range(rng.randint(1, 4))]
        elif what == "delete":
            del new[i:i + rng.randint(1, 4)]
        else:
            new[i:i + 1] = [f"- replaced {rng.random():.6f}\n"]
    return new


def _rebuilt(old: list[str], new: list[str], codes: list) -> list[str]:
    """`new` rebuilt from `old` and the opcodes; every equal stretch checked."""
    out: list[str] = []
    i = j = 0
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j), "opcodes leave a gap"
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
        out += old[i1:i2] if tag == "equal" else new[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(old), len(new))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_a_small_file_gets_difflibs_own_diff(seed: int) -> None:
    rng = random.Random(seed)
    old = [f"- line {rng.randint(0, 30)}\n" for _ in range(rng.randint(0, 60))]
    new = _edited(rng, old)
    assert list(unified(old, new, "a/x", "b/x")) == list(
        difflib.unified_diff(old, new, "a/x", "b/x"))


@pytest.mark.parametrize("seed", range(6))
def test_a_big_file_gets_an_exact_edit_script_from_git(seed: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    old = [f"- fact {i % 97}: the build of module {i // 20} uses cache {i % 7}\n"
           for i in range(3000)]  # repeated lines, as a grown MEMORY.md has
    new = _edited(rng, old)
    monkeypatch.setattr(line_diff, "SMALL", 100)
    codes = opcodes(old, new)
    assert _rebuilt(old, new, codes) == new
    patch = "".join(unified(old, new, "a/x", "b/x"))
    assert patch.startswith("--- a/x\n+++ b/x\n@@ -")
    applied: list[str] = []  # the hunks, applied to `old`, give `new`
    i = 0
    for group in grouped(old, new):
        _, i1, i2, j1, j2 = group[0][0], group[0][1], group[-1][2], group[0][3], group[-1][4]
        applied += old[i:i1]
        applied += new[j1:j2]
        i = i2
    applied += old[i:]
    assert applied == new


def test_no_change_is_no_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_diff, "SMALL", 0)
    same = ["a\n", "b\n"]
    assert list(unified(same, same, "a", "b")) == []
    assert list(unified([], [], "a", "b")) == []


@pytest.mark.parametrize("seed", range(6))
def test_git_writes_a_big_files_diff_as_the_lists_would_read(seed: int, tmp_path,
                                                             monkeypatch) -> None:
    """The diff written straight from git (a big file's, never held whole) is the one the
    hunks are read from (line_diff.grouped on git's edit script)."""
    from memdeck.engine.line_diff import git_unified_lines

    rng = random.Random(seed)
    old = [f"- fact {i % 97}: the build of module {i // 20} uses cache {i % 7}\n"
           for i in range(3000)]
    new = _edited(rng, old)
    (tmp_path / "old").write_text("".join(old))
    (tmp_path / "new").write_text("".join(new))
    monkeypatch.setattr(line_diff, "SMALL", 100)
    streamed = git_unified_lines(tmp_path / "old", tmp_path / "new", "a/x", "b/x")
    assert streamed is not None
    assert list(streamed) == list(unified(old, new, "a/x", "b/x"))
