"""Issue 9, requirement 5, through the engine on real memory folders: the offline consolidation
folds ad-hoc notes once (remember notes become lines, forget notes remove the lines they
match and nothing else), every proposal says which note caused which hunk, a line written
outside memdeck survives the merge, and forgetting leaves no empty group or header (v1 and
v2)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from memdeck.engine import Engine, demo_home
from memdeck.engine.clock import FixedClock

NOW = 1795176000.0  # 2026-11-20 12:00 UTC, as the app's tests read the demo
DEMO_NOTE = "the shop's staging database is `shop_staging` on db-2; never point tests at it."
FRIDAYS = {
    "MEMORY.md": "- Deploy only through `make deploy`; never on Fridays [Task 1]",
    "memory_summary.md": "- Deploys only through `make deploy`, never on Fridays.",
}


@pytest.fixture
def demo(tmp_path: Path) -> Engine:
    """The demo home (a v1 memory root with Codex's baseline, memdeck's history, and a
    remember note added after the last consolidation), its sessions extracted."""
    clock = FixedClock(NOW)
    eng = Engine.open(demo_home(tmp_path / "demo", clock), clock=clock)
    eng.extract(backend="offline")
    return eng


def lines(root: Path, rel: str) -> list[str]:
    return (root / rel).read_text(encoding="utf-8").splitlines()


def workspace(eng: Engine, pid: str) -> Path:
    return eng.home.proposals_dir / pid / "workspace"


def group_of(memory: str, line: str) -> str:
    """The `# Task Group:` heading above `line` in MEMORY.md."""
    before = memory[: memory.index(line)]
    return before[before.rindex("# Task Group:"):].split("\n", 1)[0]


def section_of(text: str, line: str) -> str:
    """The `## ` heading above `line`."""
    return re.findall(r"^## .+$", text[: text.index(line)], re.M)[-1]


def debris(root: Path, version: str = "v1") -> list[str]:
    """Empty groups, sections and headers left in the memory folder."""
    bad = []
    if version == "v1":
        memory = (root / "MEMORY.md").read_text()
        for block in re.split(r"^(?=# Task Group:)", memory, flags=re.M)[1:]:
            body = [x for x in block.splitlines()[1:] if x.strip()
                    and not x.startswith(("scope:", "applies_to:", "## ", "### "))
                    and x.strip().lower() != "- none recorded"]
            if "## Task " not in block and not body:
                bad.append(block.splitlines()[0])
    summary = (root / "memory_summary.md").read_text()
    index = summary.split("## What's in Memory\n", 1)[1].splitlines()
    for i, line in enumerate(index):
        if line.startswith("###"):
            nxt = next((x for x in index[i + 1:] if x.strip()), "")
            level = len(line.split(" ", 1)[0])
            if not nxt or (nxt.startswith("###") and len(nxt.split(" ", 1)[0]) <= level):
                bad.append(line)
    for h in ("## User Profile", "## User preferences", "## General Tips"):
        body = summary.split(h + "\n", 1)[1].split("\n## ", 1)[0]
        if not body.strip():
            bad.append(h)
    return bad


# -- remember notes -----------------------------------------------------------------------------
def test_a_remember_note_is_folded_where_it_belongs_once(demo: Engine) -> None:
    root = demo.home.memory_root
    note = next((root / "extensions/ad_hoc/notes").glob("*.md"))
    note_text = note.read_text()
    p = demo.consolidate("offline")
    [effect] = demo.proposal_notes(p.id)
    assert effect.note.kind == "remember" and effect.note.text == DEMO_NOTE
    line = f"- {DEMO_NOTE} [ad-hoc note]"
    assert effect.added == (("MEMORY.md", line), ("memory_summary.md", line))
    named = [h for h in demo.proposal_hunks(p.id) if h.notes]
    assert {h.path for h in named} == {"MEMORY.md", "memory_summary.md"}
    assert all(f"+{line}\n" in h.lines and h.notes == (effect.note,) for h in named)
    assert all(not h.notes for h in demo.proposal_hunks(p.id) if h not in named)

    demo.accept(p.id)
    memory = (root / "MEMORY.md").read_text()
    summary = (root / "memory_summary.md").read_text()
    assert memory.count(line) == 1 and summary.count(line) == 1
    assert group_of(memory, line).startswith("# Task Group: shop")  # it names the shop
    assert section_of(memory, line) == "## User preferences"  # "never …": a preference
    assert section_of(summary, line) == "## User preferences"
    assert note.read_text() == note_text  # Codex never deletes a note; neither does memdeck

    demo.memory_note("CI runs on buildkite agents", "remember")  # something new to fold
    p2 = demo.consolidate("offline")
    assert [e.note.text for e in demo.proposal_notes(p2.id)] == [
        "CI runs on buildkite agents"]  # the first note was taken in: not applied twice
    ws = workspace(demo, p2.id)
    assert (ws / "MEMORY.md").read_text().count(line) == 1
    assert (ws / "memory_summary.md").read_text().count(line) == 1
    assert "- CI runs on buildkite agents [ad-hoc note]" in lines(ws, "memory_summary.md")


def test_a_rejected_proposal_leaves_its_notes_for_the_next(demo: Engine) -> None:
    p = demo.consolidate("offline")
    demo.reject(p.id, "not now")
    p2 = demo.consolidate("offline")
    assert [e.note.text for e in demo.proposal_notes(p2.id)] == [DEMO_NOTE]
    assert f"- {DEMO_NOTE} [ad-hoc note]" in lines(workspace(demo, p2.id), "MEMORY.md")


# -- forget notes -------------------------------------------------------------------------------
def test_a_forget_note_removes_the_lines_it_matches_and_nothing_else(demo: Engine) -> None:
    root = demo.home.memory_root
    demo.accept(demo.consolidate("offline").id)
    for rel, line in FRIDAYS.items():
        assert line in lines(root, rel)
    demo.memory_note("never on Fridays", "forget")
    demo.memory_note("the printer in room 4", "forget")  # matches nothing
    p = demo.consolidate("offline")
    ws = workspace(demo, p.id)
    for rel, line in FRIDAYS.items():
        before, after = Counter(lines(root, rel)), Counter(lines(ws, rel))
        assert before - after == Counter([line]), rel  # exactly the matching line went
        assert after - before == Counter(), rel  # and nothing came instead
    # near misses stay: a keywords line and an index line mention Fridays too
    assert "- make deploy, red-kite, staging, Friday freeze" in lines(ws, "MEMORY.md")
    assert "  learnings: never deploy on Fridays" in lines(ws, "memory_summary.md")
    fridays, printer = demo.proposal_notes(p.id)
    assert fridays.removed == tuple(FRIDAYS.items()) and not fridays.added
    assert not printer.removed and "matched no line" in printer.outcome
    named = {h.path: h for h in demo.proposal_hunks(p.id) if h.notes}
    assert set(named) == set(FRIDAYS)
    for rel, h in named.items():
        assert f"-{FRIDAYS[rel]}\n" in h.lines and h.notes == (fridays.note,)
        assert h.notes[0].label == "2026-11-20 'forget: never on Fridays'"

    demo.accept(p.id)
    for rel, line in FRIDAYS.items():
        assert line not in lines(root, rel)
    assert len(list((root / "extensions/ad_hoc/notes").glob("*.md"))) == 3  # all still there
    assert debris(root) == []


# -- outside edits and forgetting -------------------------------------------------------------
OUTSIDE_MEMORY = "- The shop's CI runs on buildkite; logs are kept 30 days"
OUTSIDE_PREFERENCE = "- Prefers small pull requests."
OUTSIDE_INDEX = "  see also: the shop's wiki page on checkout"


def test_lines_written_outside_memdeck_stay_and_forgetting_leaves_no_debris(
        demo: Engine) -> None:
    root = demo.home.memory_root
    hand = [x for x in lines(root, "memory_summary.md") if x.startswith("  ")]
    assert hand  # the demo's summary was written by hand: desc/learnings lines
    demo.accept(demo.consolidate("offline").id)
    assert [x for x in lines(root, "memory_summary.md") if x.startswith("  ")] == hand

    # someone edits the folder with another tool
    memory = (root / "MEMORY.md").read_text()
    memory = memory.replace("## Reusable knowledge\n- Money", "## Reusable knowledge\n"
                            f"{OUTSIDE_MEMORY}\n- Money", 1)
    (root / "MEMORY.md").write_text(memory)
    summary = (root / "memory_summary.md").read_text()
    summary = summary.replace("\n\n## General Tips\n",
                              f"\n{OUTSIDE_PREFERENCE}\n\n## General Tips\n")
    learnings = "  learnings: quick suite first; Decimal for money\n"
    summary = summary.replace(learnings, f"{learnings}{OUTSIDE_INDEX}\n")
    summary = summary.rstrip("\n") + "\n\n## Team notes\n- the on-call rota is in the wiki\n"
    (root / "memory_summary.md").write_text(summary)

    # forget every infra session that has a memory: its task group must go entirely
    infra = [s for s in demo.sessions() if s.id and (s.cwd or "").endswith("/infra")]
    assert sum(demo.forget(s.id).had_memory for s in infra) == 2
    p = demo.consolidate("offline")
    demo.accept(p.id)
    memory, summary = (root / "MEMORY.md").read_text(), (root / "memory_summary.md").read_text()
    assert "# Task Group: infra" not in memory and "/home/demo/src/infra" not in summary
    assert "red-kite" not in memory and "terraform" not in summary
    assert debris(root) == []
    assert OUTSIDE_MEMORY in memory.splitlines()
    assert section_of(memory, OUTSIDE_MEMORY) == "## Reusable knowledge"
    assert section_of(summary, OUTSIDE_PREFERENCE) == "## User preferences"
    assert section_of(summary, OUTSIDE_INDEX) == "## What's in Memory"
    assert "## Team notes\n- the on-call rota is in the wiki\n" in summary
    shop = [x for x in hand if "red-kite" not in x and "Fridays" not in x]
    assert len(shop) == 2  # the infra entry's two lines went with the infra sessions
    assert [x for x in summary.splitlines() if x.startswith("  ")] == [*shop, OUTSIDE_INDEX]

    # a note, not the merge, may take an outside line away
    demo.memory_note("buildkite logs", "forget")
    p = demo.consolidate("offline")
    [effect] = demo.proposal_notes(p.id)
    assert effect.removed == (("MEMORY.md", OUTSIDE_MEMORY),)


# -- memory V2 ----------------------------------------------------------------------------------
def v2_engine(home) -> Engine:
    home.config("[features]\nmemories = true\n")  # no [memories] version, no memories/: V2
    home.add("cli-preferences.jsonl")
    home.add("cites-memories.jsonl")
    eng = Engine.open(home.root)
    eng.extract(backend="offline")
    return eng


def test_v2_notes_outside_lines_and_forgetting(home) -> None:
    eng = v2_engine(home)
    eng.accept(eng.consolidate("offline").id)
    root = home.root / "memories_v2"
    summary = (root / "memory_summary.md").read_text()
    scope = next(x for x in summary.splitlines() if x.startswith("### /"))
    summary = (summary.replace("## User Profile\n- none yet", "## User Profile\n- Backend dev")
               .replace(f"{scope}\n", f"{scope}\n- the widget repo moved to gitlab\n")
               .rstrip("\n") + "\n\n## Team notes\n- rota in the wiki\n")
    (root / "memory_summary.md").write_text(summary)
    eng.memory_note("Always sign commits", "remember")
    eng.memory_note("backend dev", "forget")
    p = eng.consolidate("offline")
    effects = eng.proposal_notes(p.id)
    assert [(e.note.kind, len(e.added), len(e.removed)) for e in effects] == [
        ("remember", 1, 0), ("forget", 0, 1)]
    named = [h for h in eng.proposal_hunks(p.id) if h.notes]
    assert named and {n.kind for h in named for n in h.notes} == {"remember", "forget"}
    eng.accept(p.id)
    text = (root / "memory_summary.md").read_text()
    assert "- Always sign commits [ad-hoc note]" in text.splitlines()
    assert section_of(text, "- Always sign commits") == "## User preferences"
    assert "Backend dev" not in text and "## User Profile\n- none yet\n" in text
    for line in ("- the widget repo moved to gitlab", "## Team notes", "- rota in the wiki"):
        assert line in text.splitlines()
    assert debris(root, "v2") == []

    for s in eng.sessions():  # forget every session: the index keeps only the person's line
        if s.id:
            eng.forget(s.id)
    eng.accept(eng.consolidate("offline").id)
    text = (root / "memory_summary.md").read_text()
    assert "thread_id=" not in text and "####" not in text
    assert f"{scope}\n- the widget repo moved to gitlab\n" in text
    assert "- Always sign commits [ad-hoc note]" in text  # a note is not a session's
    assert debris(root, "v2") == []


# -- bad input: a note file or the attribution file that is not what memdeck wrote ---------


def test_a_note_with_invalid_utf8_nul_bytes_and_a_huge_line_is_folded_and_kept(
        demo: Engine) -> None:
    """A note another tool wrote badly is read with replacement characters, folded, and left
    byte for byte on disk (notes are never deleted)."""
    root = demo.home.memory_root
    demo.accept(demo.consolidate("offline").id)
    notes = root / "extensions" / "ad_hoc" / "notes"
    bad = (b"Remember: the release branch is \xff\xfe release/2026\x00 never main\n"
           + b"x" * 2_000_000 + b"\n")
    path = notes / "2026-11-20T11-00-00-bad-bytes.md"
    path.write_bytes(bad)
    p = demo.consolidate("offline")
    assert p is not None
    texts = [e.note.text for e in demo.proposal_notes(p.id)]
    assert any("release branch" in t for t in texts), texts
    assert path.read_bytes() == bad
    memory = (workspace(demo, p.id) / "MEMORY.md").read_text(encoding="utf-8")
    assert "the release branch is release/2026 never main" in memory
    assert "\x00" not in memory and "\ufffd" not in memory
    longest = max(len(line) for line in memory.splitlines())
    assert longest < 700, longest  # the pasted megabyte is cut, not folded into one bullet


@pytest.mark.parametrize("damage", [b"", b"[{\"note\": ", b"{\"not\": \"a list\"}", b"\xff\xfe",
                                    b"[1, 2, 3]"])
def test_a_damaged_attribution_file_costs_the_labels_not_the_review(demo: Engine,
                                                                   damage: bytes) -> None:
    p = demo.consolidate("offline")
    effects = demo.home.proposals_dir / p.id / "notes.json"
    assert effects.is_file() and demo.proposal_notes(p.id)
    effects.write_bytes(damage)
    assert demo.proposal_notes(p.id) == []
    hunks = demo.proposal_hunks(p.id)
    assert hunks and all(not h.notes for h in hunks)
    accepted = demo.accept(p.id)
    assert accepted.status == "accepted"


# -- an edited note replaces its line (issue 23, item 4) -------------------------------------
def note_lines(root: Path, needle: str) -> dict[str, list[str]]:
    return {f: [x for x in lines(root, f) if needle in x]
            for f in ("MEMORY.md", "memory_summary.md")}


def test_editing_a_folded_note_replaces_its_line_in_every_file(demo: Engine) -> None:
    root = demo.home.memory_root
    note = demo.memory_note("Run the linter with ruff before every commit", "remember")
    demo.accept(demo.consolidate("offline").id)
    assert note_lines(root, "ruff") == {
        f: ["- Run the linter with ruff before every commit [ad-hoc note]"]
        for f in ("MEMORY.md", "memory_summary.md")}
    opened = demo.memory_read(note.path)
    assert "already folded" in opened.hint and "next consolidation replaces" in opened.hint
    demo.memory_save(note.path, opened.text.replace("with ruff", "with `ruff check --fix`"),
                     opened.version)
    assert "already folded" not in demo.memory_read(note.path).hint  # waiting again
    p = demo.consolidate("offline")
    kinds = sorted((e.note.kind, len(e.added), len(e.removed))
                   for e in demo.proposal_notes(p.id))
    assert kinds == [("remember", 2, 0), ("replaced", 0, 2)]  # both files, in one proposal
    demo.accept(p.id)
    assert note_lines(root, "ruff") == {
        f: ["- Run the linter with `ruff check --fix` before every commit [ad-hoc note]"]
        for f in ("MEMORY.md", "memory_summary.md")}


def test_a_shorter_edit_is_not_lost_to_the_old_longer_line(demo: Engine) -> None:
    """The new text is part of the old line: the old one goes and the new one is written,
    never "already remembered" by the line it replaces."""
    root = demo.home.memory_root
    note = demo.memory_note("Use uv run pytest -x for the checkout tests", "remember")
    demo.accept(demo.consolidate("offline").id)
    opened = demo.memory_read(note.path)
    demo.memory_save(note.path, "Remember: Use uv run pytest\n", opened.version)
    demo.accept(demo.consolidate("offline").id)
    assert note_lines(root, "uv run")["MEMORY.md"] == ["- Use uv run pytest [ad-hoc note]"]


def test_a_line_a_person_wrote_like_the_old_note_but_untagged_stays(demo: Engine) -> None:
    root = demo.home.memory_root
    note = demo.memory_note("Prefer httpx over requests", "remember")
    demo.accept(demo.consolidate("offline").id)
    memory = (root / "MEMORY.md").read_text()
    (root / "MEMORY.md").write_text(memory + "\n- Prefer httpx over requests\n")
    opened = demo.memory_read(note.path)
    demo.memory_save(note.path, "Remember: Prefer httpx over urllib\n", opened.version)
    demo.accept(demo.consolidate("offline").id)
    found = note_lines(root, "httpx")["MEMORY.md"]
    assert "- Prefer httpx over requests" in found  # the person's own, untagged
    assert "- Prefer httpx over requests [ad-hoc note]" not in found
    assert "- Prefer httpx over urllib [ad-hoc note]" in found


def test_a_summary_edit_without_the_v1_first_line_is_refused_and_nothing_changes(
        demo: Engine) -> None:
    from memdeck.engine.memory_folder.edits import InvalidSummary

    root = demo.home.memory_root
    before = (root / "memory_summary.md").read_bytes()
    opened = demo.memory_read("memory_summary.md")
    for bad in ("# My memory\n" + opened.text, opened.text.replace("v1\n", "", 1),
                "V1\n" + opened.text.split("\n", 1)[1], ""):
        with pytest.raises(InvalidSummary, match="must start with the line `v1`"):
            demo.memory_save("memory_summary.md", bad, opened.version)
    assert (root / "memory_summary.md").read_bytes() == before
    saved = demo.memory_save("memory_summary.md", opened.text + "\n- one more tip\n",
                             opened.version)
    assert saved.changed
