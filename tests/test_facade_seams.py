"""The facade's seams: the pipeline stages are handed what they need (never the `Engine`, never
a backend module), phase 2 runs whatever `Phase2Backend` it is handed, warnings come back
with the result they were found with, and `history()` only reads."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from memdeck.engine import Engine, Phase2Result, demo_home
from memdeck.tui.cli import main

ENGINE = Path(__file__).resolve().parent.parent / "engine"
PIPELINE = ("codex", "index", "phase1", "phase2", "memory_folder", "read_path")


def _imported(f: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in `f`, relative ones resolved."""
    package = ["memdeck", "engine", *f.parent.relative_to(ENGINE).parts]
    out = []
    for node in ast.walk(ast.parse(f.read_text(), str(f))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out.append((node.lineno, mod))
            out += [(node.lineno, f"{mod}.{a.name}") for a in node.names]
    return out


def test_no_pipeline_package_imports_a_backend() -> None:
    bad = [f"{f.relative_to(ENGINE)}:{line} {mod}"
           for pkg in PIPELINE for f in sorted((ENGINE / pkg).rglob("*.py"))
           for line, mod in _imported(f)
           if mod == "memdeck.engine.backends" or mod.startswith("memdeck.engine.backends.")]
    assert not bad, bad
    # the check sees such an import where there is one: the facade builds the backends
    assert "memdeck.engine.backends.choice" in {m for _, m in _imported(ENGINE / "__init__.py")}


def _names_engine(annotation: ast.expr | None) -> bool:
    return annotation is not None and any(
        (isinstance(n, ast.Name) and n.id == "Engine")
        or (isinstance(n, ast.Constant) and isinstance(n.value, str) and "Engine" in n.value)
        for n in ast.walk(annotation))


def test_no_module_below_the_facade_is_handed_the_engine() -> None:
    bad = []
    for f in sorted(ENGINE.rglob("*.py")):
        if f == ENGINE / "__init__.py":
            continue
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                bad += [f"{f.relative_to(ENGINE)}:{node.lineno} {node.name}({a.arg})"
                        for a in args if a.arg == "engine" or _names_engine(a.annotation)]
            elif isinstance(node, ast.Attribute) and node.attr == "_settings_file":
                bad.append(f"{f.relative_to(ENGINE)}:{node.lineno} ._settings_file")
    assert not bad, bad


class StampBackend:
    """A Phase2Backend that adds one line to MEMORY.md and reports what it cost."""

    name = "stamp"

    def consolidate(self, workspace: Path, selected: list, now: float,
                    version: str) -> Phase2Result:
        memory = workspace / "MEMORY.md"
        memory.write_text(memory.read_text() + f"- stamped from {len(selected)} memories\n")
        return Phase2Result("stamp-model", 7, 11, "feedbeef")


def test_phase2_runs_the_backend_it_is_handed(tmp_path: Path) -> None:
    from memdeck.engine.phase2.proposals import consolidate

    eng = Engine.open(demo_home(tmp_path / "demo"))
    eng.extract(backend="offline")
    p = consolidate(eng.home, eng.store, StampBackend(), eng.sessions(), eng.clock.now())
    assert p is not None and (p.backend, p.model, p.status) == ("stamp", "stamp-model",
                                                                "pending")
    assert {"path": "MEMORY.md", "change": "M"} in p.files
    assert f"+- stamped from {len(p.threads)} memories" in eng.proposal_diff(p.id)
    row = eng.store.conn().execute("SELECT backend, input_tokens, output_tokens, prompt_hash "
                                   "FROM proposals WHERE id = ?", (p.id,)).fetchone()
    assert tuple(row) == ("stamp", 7, 11, "feedbeef")
    # the facade builds the backend memdeck's settings name
    assert eng.phase2_backend().name == "offline" and eng.phase1_backend().name == "offline"
    eng.config_set("memdeck.base_url", "http://127.0.0.1:9/v1")  # auto: an endpoint is set
    assert eng.phase2_backend().name == "openai" and eng.phase1_backend().name == "openai"
    assert eng.phase2_backend("offline").name == "offline"


def test_warnings_come_back_with_the_result(home, capsys) -> None:
    home.v1().config("[features]\nmemories = false\n")
    home.add("cli-preferences.jsonl", idle_hours=9)
    eng = Engine.open(home.root)
    listing = eng.listing()
    [off] = [w for w in listing.warnings if "memories are off" in w]
    assert listing.sessions == eng.sessions()
    assert eng.session(listing.sessions[0].rollout_path).warnings == listing.warnings
    assert off in eng.extract(backend="offline").warnings
    assert eng.memories().warnings == ()  # the pipeline DB reads fine: nothing to say
    assert not hasattr(eng, "warnings")  # nothing shared between threads
    assert main(["extract", "--backend", "offline", "--home", str(home.root)]) == 0
    assert f"memdeck: warning: {off}" in capsys.readouterr().err

    (home.root / "memories_1.sqlite").write_bytes(b"this is not a database" * 100)
    rows = eng.memories()
    assert rows.rows == [] and len(rows.warnings) == 1 and "memories_1.sqlite" in rows.warnings[0]


def test_history_only_reads_and_recording_is_its_own_call(tmp_path: Path, capsys) -> None:
    demo = demo_home(tmp_path / "demo")
    eng = Engine.open(demo)
    assert eng.history() == []
    assert not (eng.home.history_git / "HEAD").exists()  # reading made nothing
    first = eng.record_outside_edits()
    assert first is not None and [(e.commit, e.origin) for e in eng.history()] == [
        (first, "start")]
    assert eng.record_outside_edits() is None  # the history holds this state already
    memory = eng.home.memory_root / "MEMORY.md"
    memory.write_text(memory.read_text() + "- edited in an editor\n")
    assert [e.commit for e in eng.history()] == [first]  # still only reads
    # `memdeck history` records the root first, as it always has
    assert main(["history", "--json", "--home", str(demo)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["origin"] for r in rows] == ["external", "start"]
    assert rows[1]["commit"] == first
