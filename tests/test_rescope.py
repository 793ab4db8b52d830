"""Re-scope a block (issue 26, item 2): a MEMORY.md task group narrowed to the projects it was
taught in or widened to every project, as a proposal reviewed and accepted like any change
(read_path/rescope.py; `memdeck scope --narrow/--widen LINE`; `n`/`w` in the app's Review of
the scope)."""

from __future__ import annotations

import json
from pathlib import Path

from memdeck.engine import Engine
from memdeck.tui.cli import main


def _group(home: Path, title: str):
    return next(b for b in Engine.open(home).scope_map()
                if b.kind == "task_group" and b.title.startswith(title))


def _applies(home: Path) -> list[str]:
    text = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    return [ln for ln in text.splitlines() if ln.startswith("applies_to:")]


def test_widen_then_narrow_go_through_review_and_history(accepted_home: Path, capsys) -> None:
    infra = _group(accepted_home, "infra")
    before = _applies(accepted_home)
    assert main(["scope", "--widen", str(infra.line), "--home", str(accepted_home),
                 "--json"]) == 0
    p = json.loads(capsys.readouterr().out)
    assert p["status"] == "pending" and p["backend"] == "rescope:widen"
    assert _applies(accepted_home) == before  # nothing changes before it is accepted
    diff = (accepted_home / "memdeck" / "proposals" / p["id"] / "proposal.diff").read_text()
    changed = [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert len(changed) == 2 and changed[1].startswith("+applies_to: cwd=*;")
    assert main(["accept", p["id"], "--home", str(accepted_home)]) == 0
    after = _applies(accepted_home)
    assert [a for a in after if a not in before] == [changed[1][1:]]
    assert _group(accepted_home, "infra").applies_to == ["*"]
    history = json.loads(_out(capsys, ["history", "--home", str(accepted_home), "--json"]))
    assert history[0]["origin"] == "user" and p["id"] in history[0]["summary"]

    assert main(["scope", "--narrow", str(infra.line), "--home", str(accepted_home),
                 "--json"]) == 0
    p2 = json.loads(capsys.readouterr().out)
    assert main(["accept", p2["id"], "--home", str(accepted_home)]) == 0
    assert _applies(accepted_home) == before
    assert _group(accepted_home, "infra").applies_to == infra.taught_in


def _out(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out


def test_what_cannot_be_rescoped_is_one_line_and_proposes_nothing(accepted_home: Path,
                                                                 capsys) -> None:
    shop = _group(accepted_home, "shop")
    section = next(b for b in Engine.open(accepted_home).scope_map()
                   if b.kind == "summary_section")
    for argv, says in (
        (["--narrow", str(shop.line)], "already applies to"),
        (["--widen", "2"], "no task group at line 2"),
        (["--narrow", str(section.line)], "no task group at line"),
    ):
        assert main(["scope", *argv, "--home", str(accepted_home)]) == 1, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err, (argv, err)
    assert not [p for p in Engine.open(accepted_home).proposals() if p.status == "pending"]


def test_a_group_without_applies_to_gets_one_where_codex_puts_it(accepted_home: Path) -> None:
    memory = accepted_home / "memories" / "MEMORY.md"
    text = memory.read_text(encoding="utf-8")
    memory.write_text("\n".join(ln for ln in text.split("\n")
                                if not ln.startswith("applies_to:")), encoding="utf-8")
    eng = Engine.open(accepted_home)
    eng.record_outside_edits()
    docs = _group(accepted_home, "docs-site")
    assert docs.applies_to == ["*"]  # no applies_to: every project reads it
    p = eng.rescope(docs.line, "narrow")
    eng.accept(p.id)
    lines = memory.read_text(encoding="utf-8").split("\n")
    at = lines.index(next(ln for ln in lines if ln.startswith("applies_to:")))
    assert lines[at - 1].startswith("scope:") and lines[at - 2].startswith("# Task Group: docs")
    assert _group(accepted_home, "docs-site").applies_to == docs.taught_in


def test_a_memory_md_that_is_not_utf8_is_one_line_and_proposes_nothing(accepted_home: Path,
                                                                      capsys) -> None:
    memory = accepted_home / "memories" / "MEMORY.md"
    line = _group(accepted_home, "infra").line
    memory.write_bytes(memory.read_bytes() + b"\n- caf\xe9 latte\n")
    before = memory.read_bytes()
    assert main(["scope", "--widen", str(line), "--home", str(accepted_home)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not UTF-8" in err
    assert memory.read_bytes() == before
    assert not [p for p in Engine.open(accepted_home).proposals() if p.status == "pending"]


def test_a_path_leaving_the_folder_is_refused_and_leaves_no_proposal(accepted_home: Path
                                                                    ) -> None:
    import pytest

    from memdeck.engine import MemdeckError
    from memdeck.engine.phase2.file_proposal import propose_files

    eng = Engine.open(accepted_home)
    before = sorted((accepted_home / "memdeck" / "proposals").iterdir())
    with pytest.raises(MemdeckError, match="not a path inside the memory folder"):
        propose_files(eng.home, eng.store, eng.clock.now(), "pull:evil", "x",
                      {"../../config.toml": b"model = 'evil'\n"})
    assert sorted((accepted_home / "memdeck" / "proposals").iterdir()) == before
    assert "evil" not in (accepted_home / "config.toml").read_text(encoding="utf-8")


def test_a_big_memory_md_is_rescoped_with_its_other_lines_byte_for_byte(
        accepted_home: Path) -> None:
    memory = accepted_home / "memories" / "MEMORY.md"
    filler = "".join(f"- fact {i}: the build of module {i} uses cache layer {i % 7}\n"
                     for i in range(60_000))  # about 3.5 MB of bullets in the last group
    memory.write_text(memory.read_text(encoding="utf-8") + filler, encoding="utf-8")
    eng = Engine.open(accepted_home)
    eng.record_outside_edits()
    before = memory.read_text(encoding="utf-8").split("\n")
    eng.accept(eng.rescope(_group(accepted_home, "infra").line, "widen").id)
    after = memory.read_text(encoding="utf-8").split("\n")
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert len(changed) == 1 and changed[0][1].startswith("applies_to: cwd=*;")
