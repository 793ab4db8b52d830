"""Editing the memory folder: list, read, save with conflict detection, ad-hoc notes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from conftest import FAKE_GITHUB_TOKEN, hold_global_lease

from memdeck.engine import Engine, HomeError, MemdeckError, NotFound, demo_home
from memdeck.engine.clock import FixedClock
from memdeck.engine.memory_folder.edits import (
    NOTE_NAME,
    MemoryConflict,
    MemoryPathError,
    SecretInText,
    note_slug,
)
from memdeck.engine.memory_folder.history import History

NOW = 1795176000.0  # 2026-11-20 12:00:00 UTC


@pytest.fixture
def eng(tmp_path: Path) -> Engine:
    clock = FixedClock(NOW)
    return Engine.open(demo_home(tmp_path / "demo", clock), clock=clock)


def origins(eng: Engine) -> list[str]:
    return [e.origin for e in History(eng.home, eng.clock).entries()]


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*.tmp") if ".git" not in p.parts)


# -- listing and reading ------------------------------------------------------------------------
def test_lists_files_as_a_user_thinks_of_them(eng: Engine) -> None:
    files = eng.memory_files()
    kinds = [f.kind for f in files]
    assert [f.path for f in files[:3]] == ["memory_summary.md", "MEMORY.md", "raw_memories.md"]
    assert kinds == sorted(kinds, key=["summary", "memory", "raw", "skill", "rollout_summary",
                                       "note", "extension", "other"].index)
    by_path = {f.path: f for f in files}
    assert by_path["skills/shop-tests/SKILL.md"].kind == "skill"
    assert by_path["extensions/ad_hoc/instructions.md"].kind == "extension"
    notes = [f for f in files if f.kind == "note"]
    assert len(notes) == 1 and notes[0].path.endswith("-staging-database.md")
    assert len([f for f in files if f.kind == "rollout_summary"]) == 2
    memory_md = eng.home.memory_root / "MEMORY.md"
    assert by_path["MEMORY.md"].size == memory_md.stat().st_size
    assert by_path["MEMORY.md"].mtime == memory_md.stat().st_mtime
    # Codex's baseline repository and hidden files are not memory
    assert not [f for f in files if f.path.startswith(".") or "/." in f.path]


def test_symlinks_are_left_out_and_a_symlinked_root_is_refused(eng: Engine,
                                                               tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("not memory\n")
    (eng.home.memory_root / "linked.md").symlink_to(outside)
    assert "linked.md" not in [f.path for f in eng.memory_files()]
    with pytest.raises(MemoryPathError, match="symlink"):
        eng.memory_read("linked.md")

    real = tmp_path / "real-root"
    eng.home.memory_root.rename(real)
    eng.home.memory_root.symlink_to(real)
    with pytest.raises(HomeError, match="symlink"):
        eng.memory_files()


def test_a_fresh_home_lists_nothing(home) -> None:
    eng = Engine.open(home.root)
    assert eng.memory_files() == []
    assert not eng.home.memory_root.exists()  # looking creates nothing


def test_read_gives_text_and_a_version(eng: Engine) -> None:
    f = eng.memory_read("MEMORY.md")
    disk = (eng.home.memory_root / "MEMORY.md").read_text()
    assert f.text == disk and f.kind == "memory" and f.read_only is None
    assert len(f.version) == 64
    assert eng.memory_read(" MEMORY.md ").version == f.version
    (eng.home.memory_root / "MEMORY.md").write_text(disk + "- one more\n")
    assert eng.memory_read("MEMORY.md").version != f.version
    with pytest.raises(NotFound):
        eng.memory_read("nope.md")


def test_invalid_utf8_is_shown_replaced_and_read_only(eng: Engine) -> None:
    (eng.home.memory_root / "odd.md").write_bytes(b"caf\xe9 au lait\n")
    f = eng.memory_read("odd.md")
    assert f.text == "caf\ufffd au lait\n"
    assert f.read_only and "UTF-8" in f.read_only
    with pytest.raises(MemdeckError, match="not valid UTF-8"):
        eng.memory_save("odd.md", "café au lait\n", f.version)
    assert (eng.home.memory_root / "odd.md").read_bytes() == b"caf\xe9 au lait\n"


def test_a_huge_file_is_shown_in_part_read_only_and_never_saved_over(eng: Engine) -> None:
    from memdeck.engine.memory_folder.edits import MAX_EDIT_BYTES

    line = b"- a long remembered line\n"
    data = line * (MAX_EDIT_BYTES // len(line) + 1000)
    (eng.home.memory_root / "raw_memories.md").write_bytes(data)
    f = eng.memory_read("raw_memories.md")
    assert len(f.text) <= MAX_EDIT_BYTES and f.text.endswith("\n") and data.startswith(
        f.text.encode())
    assert f.read_only and "too large to edit" in f.read_only and "\n" not in f.read_only
    with pytest.raises(MemdeckError):
        eng.memory_save("raw_memories.md", f.text, f.version)  # would drop the rest
    assert (eng.home.memory_root / "raw_memories.md").read_bytes() == data


@pytest.mark.parametrize("bad", ["../config.toml", "/etc/passwd", "skills/../../x.md",
                                 ".git/config", "", "a\\b.md"])
def test_paths_must_stay_inside_the_root(eng: Engine, bad: str) -> None:
    with pytest.raises(MemoryPathError):
        eng.memory_read(bad)
    with pytest.raises(MemoryPathError):
        eng.memory_save(bad, "x\n", None)
    assert not (eng.home.root / "x.md").exists()


def test_save_refuses_a_symlink_out_of_the_root(eng: Engine, tmp_path: Path) -> None:
    target = tmp_path / "dotfiles"
    target.mkdir()
    (target / "SKILL.md").write_text("outside\n")
    (eng.home.memory_root / "skills" / "linked").symlink_to(target)
    with pytest.raises(MemoryPathError, match="symlink"):
        eng.memory_save("skills/linked/SKILL.md", "changed\n", None)
    assert (target / "SKILL.md").read_text() == "outside\n"


# -- saving ---------------------------------------------------------------------------------
def test_save_writes_and_records_a_user_edit(eng: Engine) -> None:
    path = eng.home.memory_root / "MEMORY.md"
    f = eng.memory_read("MEMORY.md")
    before = origins(eng)
    saved = eng.memory_save("MEMORY.md", f.text + "- prefers tabs\n", f.version)
    assert saved.changed and saved.commit
    assert path.read_text() == f.text + "- prefers tabs\n"
    assert eng.memory_read("MEMORY.md").version == saved.version
    history = History(eng.home, eng.clock).entries()
    assert history[0].origin == "user" and history[0].summary == "edit MEMORY.md"
    assert history[0].commit == saved.commit
    # the demo's root as memdeck found it was recorded before the edit, as `start`
    assert origins(eng)[1:] == (before or ["start"])
    assert leftovers(eng.home.memory_root) == []


def test_an_outside_change_before_the_edit_stays_external(eng: Engine) -> None:
    History(eng.home, eng.clock).snapshot()
    summary = eng.home.memory_root / "memory_summary.md"
    summary.write_text(summary.read_text() + "- added by another tool\n")
    f = eng.memory_read("MEMORY.md")
    eng.memory_save("MEMORY.md", f.text + "- mine\n", f.version)
    entries = History(eng.home, eng.clock).entries()
    assert [e.origin for e in entries[:2]] == ["user", "external"]
    _, patch = History(eng.home, eng.clock).show(entries[0].commit)
    assert "MEMORY.md" in patch and "memory_summary.md" not in patch


def test_saving_unchanged_text_writes_nothing(eng: Engine) -> None:
    f = eng.memory_read("MEMORY.md")
    n = len(History(eng.home, eng.clock).entries())
    saved = eng.memory_save("MEMORY.md", f.text, f.version)
    assert not saved.changed and saved.commit is None
    assert len(History(eng.home, eng.clock).entries()) == n


def test_conflict_when_the_file_changed_on_disk(eng: Engine) -> None:
    path = eng.home.memory_root / "MEMORY.md"
    f = eng.memory_read("MEMORY.md")
    path.write_text(f.text + "- written by Codex meanwhile\n")
    with pytest.raises(MemoryConflict) as err:
        eng.memory_save("MEMORY.md", f.text + "- mine\n", f.version)
    assert path.read_text() == f.text + "- written by Codex meanwhile\n"  # untouched
    c = err.value
    assert c.disk_text == f.text + "- written by Codex meanwhile\n"
    assert "changed on disk" in str(c)
    # keeping mine: save again from the version on disk; both states stay in history
    saved = eng.memory_save("MEMORY.md", f.text + "- mine\n", c.disk_version)
    assert path.read_text() == f.text + "- mine\n"
    entries = History(eng.home, eng.clock).entries()
    assert entries[0].origin == "user" and entries[0].commit == saved.commit
    _, patch = History(eng.home, eng.clock).show(entries[1].commit)
    assert "+- written by Codex meanwhile" in patch


def test_conflict_when_the_file_was_deleted(eng: Engine) -> None:
    f = eng.memory_read("raw_memories.md")
    (eng.home.memory_root / "raw_memories.md").unlink()
    with pytest.raises(MemoryConflict, match="deleted") as err:
        eng.memory_save("raw_memories.md", f.text + "x\n", f.version)
    assert err.value.disk_text is None and err.value.disk_version is None
    assert not (eng.home.memory_root / "raw_memories.md").exists()


def test_a_new_file_needs_no_base_and_refuses_to_replace_one(eng: Engine) -> None:
    eng.memory_save("skills/deploy/SKILL.md", "---\nname: deploy\n---\n", None)
    assert (eng.home.memory_root / "skills/deploy/SKILL.md").exists()
    with pytest.raises(MemoryConflict):
        eng.memory_save("skills/deploy/SKILL.md", "other\n", None)


def test_a_secret_is_refused_with_its_line(eng: Engine) -> None:
    path = eng.home.memory_root / "MEMORY.md"
    f = eng.memory_read("MEMORY.md")
    n = len(History(eng.home, eng.clock).entries())
    text = f.text + f"- the deploy key is {FAKE_GITHUB_TOKEN}\n"
    line = text.splitlines().index(f"- the deploy key is {FAKE_GITHUB_TOKEN}") + 1
    with pytest.raises(SecretInText) as err:
        eng.memory_save("MEMORY.md", text, f.version)
    msg = str(err.value)
    assert f"MEMORY.md line {line}" in msg and "\n" not in msg
    assert FAKE_GITHUB_TOKEN not in msg
    assert path.read_text() == f.text
    assert len(History(eng.home, eng.clock).entries()) == n


def test_a_failed_write_leaves_the_file_and_no_temp_file(eng: Engine, monkeypatch) -> None:
    path = eng.home.memory_root / "MEMORY.md"
    f = eng.memory_read("MEMORY.md")

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(MemdeckError, match="cannot write MEMORY.md: No space left"):
        eng.memory_save("MEMORY.md", f.text + "- lost?\n", f.version)
    with pytest.raises(MemdeckError, match="cannot write the note"):
        eng.memory_note("the printer is on floor 3")
    monkeypatch.undo()
    assert path.read_text() == f.text
    assert leftovers(eng.home.memory_root) == []
    assert not list((eng.home.memory_root / "extensions/ad_hoc/notes").glob("*printer*"))
    # the user retries: it works, and the global job is not left running
    assert eng.memory_save("MEMORY.md", f.text + "- kept\n", f.version).changed


def test_save_is_refused_while_a_consolidation_runs(eng: Engine) -> None:
    hold_global_lease(eng.home.root)
    f = eng.memory_read("MEMORY.md")
    with pytest.raises(MemdeckError, match="consolidation is running"):
        eng.memory_save("MEMORY.md", f.text + "- x\n", f.version)
    assert (eng.home.memory_root / "MEMORY.md").read_text() == f.text


def test_concurrent_saves_from_one_version_never_both_win(eng: Engine) -> None:
    f = eng.memory_read("MEMORY.md")
    results: list[str] = []

    def save(tag: str) -> None:
        try:
            eng.memory_save("MEMORY.md", f.text + f"- {tag}\n", f.version)
            results.append(f"saved {tag}")
        except MemoryConflict:
            results.append("conflict")

    threads = [threading.Thread(target=save, args=(t,)) for t in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len([r for r in results if r.startswith("saved")]) == 1, results
    text = (eng.home.memory_root / "MEMORY.md").read_text()
    assert text.count("\n- a\n") + text.count("\n- b\n") == 1


# -- ad-hoc notes ------------------------------------------------------------------------------
def test_note_is_named_as_codex_names_them_and_recorded(eng: Engine) -> None:
    note = eng.memory_note("The staging DB moved to db-3 (Nov 2026)!", "remember")
    assert note.path == ("extensions/ad_hoc/notes/"
                         "2026-11-20T12-00-00-the-staging-db-moved-to-db-3-nov-2026.md")
    assert NOTE_NAME.match(note.path.rsplit("/", 1)[1])
    disk = eng.home.memory_root / note.path
    assert disk.read_text() == "Remember: The staging DB moved to db-3 (Nov 2026)!\n"
    entries = History(eng.home, eng.clock).entries()
    assert entries[0].origin == "user" and entries[0].summary == (
        "note: the-staging-db-moved-to-db-3-nov-2026")
    assert note.path in [f.path for f in eng.memory_files() if f.kind == "note"]


def test_forget_note_and_notes_in_the_same_second_do_not_overwrite(eng: Engine) -> None:
    a = eng.memory_note("Friday deploy freeze", "forget")
    b = eng.memory_note("Friday deploy freeze", "remember")
    c = eng.memory_note("Friday deploy freeze!", "remember")
    assert a.path.endswith("T12-00-00-friday-deploy-freeze.md")
    assert b.path.endswith("T12-00-00-friday-deploy-freeze-2.md")
    assert c.path.endswith("T12-00-00-friday-deploy-freeze-3.md")
    root = eng.home.memory_root
    assert (root / a.path).read_text() == "Forget: Friday deploy freeze\n"
    assert (root / b.path).read_text() == "Remember: Friday deploy freeze\n"
    assert all(NOTE_NAME.match(Path(n.path).name) for n in (a, b, c))
    assert leftovers(root) == []


def test_note_refusals(eng: Engine) -> None:
    notes = eng.home.memory_root / "extensions/ad_hoc/notes"
    before = sorted(notes.iterdir())
    with pytest.raises(SecretInText, match=r"the note line 1 holds a secret"):
        eng.memory_note(f"my token is {FAKE_GITHUB_TOKEN}")
    with pytest.raises(MemdeckError, match="empty"):
        eng.memory_note("   ")
    with pytest.raises(MemdeckError, match="remember or forget"):
        eng.memory_note("x", "ignore")
    assert sorted(notes.iterdir()) == before


def test_a_note_never_creates_a_memory_root(home) -> None:
    # A fresh home is v2 for Codex 0.169; creating memories_v2/ (or memories/) is a choice of
    # version that only an accepted consolidation makes (docs/codex-format.md "Memory versions").
    eng = Engine.open(home.root, clock=FixedClock(NOW))
    before = sorted(p.name for p in home.root.iterdir())
    with pytest.raises(HomeError, match="memories_v2/ does not exist yet"):
        eng.memory_note("Use uv, not pip", "remember")
    assert sorted(p.name for p in home.root.iterdir() if p.name != "memdeck") == before


def test_note_in_an_existing_root(home) -> None:
    eng = Engine.open(home.v1().root, clock=FixedClock(NOW))
    note = eng.memory_note("Use uv, not pip", "remember")
    assert (home.root / "memories" / note.path).read_text() == "Remember: Use uv, not pip\n"
    assert [f.path for f in eng.memory_files()] == [note.path]
    assert origins(eng)[0] == "user"


@pytest.mark.parametrize("text,slug", [
    ("Use uv, not pip", "use-uv-not-pip"),
    ("Ünïcödé façade", "unicode-facade"),
    ("!!!", "note"),
    ("a" * 60, "a" * 40),
    ("the quick brown fox jumps over the lazy dog again and again", "the-quick-brown-fox-"
     "jumps-over-the-lazy"),
])
def test_note_slug(text: str, slug: str) -> None:
    assert note_slug(text) == slug
    assert len(note_slug(text)) <= 40


# -- what the agent is shown -------------------------------------------------------------------
def test_injected_summary_is_the_trimmed_file_with_a_token_count(eng: Engine) -> None:
    summary = eng.home.memory_root / "memory_summary.md"
    got = eng.memory_injected()
    assert got.active and got.text == summary.read_text().strip()
    assert got.tokens == -(-len(got.text.encode()) // 4) and got.truncated_tokens == 0
    assert "every new session" in got.note and f"≈{got.tokens} tokens" in got.note

    summary.write_text("v1\n\n" + "- a fact worth keeping\n" * 2000)
    big = eng.memory_injected()
    assert big.truncated_tokens > 0 and "tokens truncated…" in big.text
    assert big.text.startswith("v1\n") and big.text.endswith("- a fact worth keeping")
    assert big.tokens <= 2500 + 10  # the marker itself adds a few

    eng.config_set("use_memories", "false")
    off = eng.memory_injected()
    assert not off.active and "use_memories = false" in off.note

    summary.unlink()
    assert eng.memory_injected().text == "" and "no memory_summary.md" in \
        eng.memory_injected().note
