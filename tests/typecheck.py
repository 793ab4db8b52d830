"""Type-check memdeck's engine and TUI: `python -m tests.typecheck` prints mypy's report and
exits with mypy's status.

mypy cannot follow the editable install's import hook (the folders engine/, tui/ and prompts/
install as memdeck.engine, memdeck.tui, memdeck.prompts), so this reads the checkout through a
folder of links that spells the installed names (memdeck/engine -> engine/, ...). The config is
pyproject.toml's [tool.mypy]; tests/test_types.py runs this in the suite.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("engine", "tui", "prompts")
PACKAGES = ("memdeck.engine", "memdeck.tui")


def run_mypy(out: Path, packages: tuple[str, ...] = PACKAGES) -> subprocess.CompletedProcess[str]:
    """Run mypy over `packages` with its links and cache under `out`; the report is captured."""
    links = out / "memdeck"
    links.mkdir(parents=True, exist_ok=True)
    for folder in FOLDERS:
        if not (links / folder).exists():
            (links / folder).symlink_to(ROOT / folder, target_is_directory=True)
    args = [arg for package in packages for arg in ("-p", package)]
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(out / "cache"), *args],
        capture_output=True, text=True, cwd=out, env={"MYPYPATH": str(out), "PATH": "/usr/bin"},
        timeout=900)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        result = run_mypy(Path(tmp))
    print(result.stdout + result.stderr, end="")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
