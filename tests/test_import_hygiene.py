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
    mods = _modules_after("import engine, engine.index, engine.scan, engine.settings, "
                          "engine.sessions, engine.status, engine.demo, engine.citations")
    assert not {m for m in mods if m.split(".")[0] in ("textual", "rich")}


def test_sessions_json_loads_no_heavy_library(tmp_path) -> None:
    (tmp_path / "sessions").mkdir()
    code = ("import contextlib, io\nfrom tui.cli import main\n"
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
