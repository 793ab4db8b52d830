"""The engine type-checks with zero errors, and the facade returns no `Any`.

mypy cannot follow the editable install's import hook, so it reads the checkout through a
folder of links that spells the installed names (memdeck/engine -> engine/, ...). Run this file
as a script to print mypy's report: `python tests/test_types.py`.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_mypy(out: Path) -> subprocess.CompletedProcess[str]:
    links = out / "memdeck"
    links.mkdir(parents=True, exist_ok=True)
    for folder in ("engine", "prompts"):
        if not (links / folder).exists():
            (links / folder).symlink_to(ROOT / folder, target_is_directory=True)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(out / "cache"), "-p", "memdeck.engine"],
        capture_output=True, text=True, cwd=out, env={"MYPYPATH": str(out), "PATH": "/usr/bin"},
        timeout=600)


def test_the_engine_type_checks(tmp_path: Path) -> None:
    r = run_mypy(tmp_path)
    assert r.returncode == 0 and "Success: no issues found" in r.stdout, r.stdout + r.stderr


def test_the_facade_returns_no_any() -> None:
    tree = ast.parse((ROOT / "engine" / "__init__.py").read_text())
    [engine] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Engine"]
    loose = []
    for node in engine.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            ret = ast.unparse(node.returns) if node.returns else "(none)"
            if node.returns is None or "Any" in ret:
                loose.append(f"Engine.{node.name} -> {ret}")
    assert not loose, loose


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        result = run_mypy(Path(tmp))
        print(result.stdout + result.stderr, end="")
        sys.exit(result.returncode)
