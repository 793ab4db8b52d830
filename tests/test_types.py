"""The engine and the TUI type-check with zero errors, and the facade returns no `Any`.

mypy runs as the dev command does: `python -m tests.typecheck` (tests/typecheck.py: mypy over
memdeck.engine and memdeck.tui through a folder of links spelling the installed names).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_engine_and_the_tui_type_check() -> None:
    r = subprocess.run([sys.executable, "-m", "tests.typecheck"], capture_output=True,
                       text=True, cwd=ROOT, timeout=900)
    assert r.returncode == 0 and "Success: no issues found" in r.stdout, r.stdout + r.stderr
    # every module of both packages was read (and what they import, memdeck.prompts), not a
    # folder of links that resolved to nothing
    checked = re.search(r"in (\d+) source files", r.stdout)
    modules = sum(1 for folder in ("engine", "tui") for _ in (ROOT / folder).rglob("*.py"))
    assert checked and int(checked.group(1)) >= modules, (r.stdout, modules)


def test_the_dev_command_checks_both_packages() -> None:
    source = (ROOT / "tests" / "typecheck.py").read_text()
    assert 'PACKAGES = ("memdeck.engine", "memdeck.tui")' in source


def test_the_facade_returns_no_any() -> None:
    # the Engine and its method groups (facade_changes.py, facade_reads.py)
    classes = [n for name in ("__init__", "facade_changes", "facade_reads", "facade_sync",
                              "facade_projects")
               for n in ast.parse((ROOT / "engine" / f"{name}.py").read_text()).body
               if isinstance(n, ast.ClassDef)]
    assert {"Engine", "MemoryFolderMethods", "ReadPathMethods", "SyncMethods",
            "ProjectMethods"} <= {
        c.name for c in classes}
    loose = []
    for node in (node for c in classes for node in c.body):
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            ret = ast.unparse(node.returns) if node.returns else "(none)"
            if node.returns is None or "Any" in ret:
                loose.append(f"Engine.{node.name} -> {ret}")
    assert not loose, loose
