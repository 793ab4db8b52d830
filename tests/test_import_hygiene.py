"""The engine stays UI-free, and listing sessions loads no heavy library."""

import subprocess
import sys

HEAVY = ("textual", "rich", "openai", "git")


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint('\\n'.join(sys.modules))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return set(r.stdout.split())


def test_engine_imports_no_ui_library() -> None:
    mods = _modules_after(
        "import importlib, pkgutil, memdeck.engine as e\n"
        "for m in pkgutil.walk_packages(e.__path__, 'memdeck.engine.'):\n"
        "    importlib.import_module(m.name)")
    assert "memdeck.engine.phase2.proposals" in mods
    assert not {m for m in mods if m.split(".")[0] in ("textual", "rich")}


def test_sessions_json_loads_no_heavy_library(tmp_path) -> None:
    (tmp_path / "sessions").mkdir()
    code = ("import contextlib, io\nfrom memdeck.tui.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['sessions', '--json', '--home', {str(tmp_path)!r}]) == 0")
    mods = _modules_after(code)
    assert not {m for m in mods if m.split(".")[0] in HEAVY}


def test_no_engine_source_mentions_ui_imports() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "engine"
    for f in root.rglob("*.py"):
        text = f.read_text()
        for lib in ("textual", "rich"):
            assert f"import {lib}" not in text and f"from {lib}" not in text, f


def test_nothing_imports_the_folders_by_their_checkout_names() -> None:
    """engine/, tui/ and prompts/ install as memdeck.engine, memdeck.tui and memdeck.prompts;
    importing one by its folder name (it works from the checkout's root) would load a second
    copy of every module, with its own state."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    bad = []
    for folder in ("engine", "tui", "prompts", "tests", "bench", "screenshots"):
        for f in (root / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(f.read_text(), str(f))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom)
                         and not node.level else [])
                bad += [f"{f.relative_to(root)}:{node.lineno} {n}" for n in names
                        if n.split(".")[0] in ("engine", "tui", "prompts")]
    assert not bad, bad


def test_a_warm_listing_loads_neither_scanner_nor_recovery_nor_metadata(home) -> None:
    """What a listing with nothing new to read leaves out (each was measured costing every
    `memdeck sessions` 12-25 ms, issue 23): the scanner and its JSON validator, the secret
    patterns, the machinery that finishes an interrupted change, the package metadata
    `--version` reads. A rollout appended since makes the scanner load, as it must."""
    home.add("cli-preferences.jsonl")
    argv = ['sessions', '--json', '--home', str(home.root)]
    code = ("import contextlib, io\nfrom memdeck.tui.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main({argv!r}) == 0")
    _modules_after(code)  # builds the index
    warm = _modules_after(code)
    left_out = {"memdeck.engine.index.scan", "memdeck.engine.redact", "simdjson",
                "memdeck.engine.memory_folder.switch", "memdeck.engine.memory_folder.accept",
                "memdeck.engine.phase2.proposals", "importlib.metadata", "socket"}
    assert not warm & left_out, warm & left_out
    [rollout] = (home.root / "sessions").rglob("*.jsonl")
    with rollout.open("a") as f:
        f.write('{"timestamp":"2026-12-01T11:00:00.000Z","type":"event_msg",'
                '"payload":{"type":"agent_message","message":"done"}}\n')
    assert "memdeck.engine.index.scan" in _modules_after(code)
