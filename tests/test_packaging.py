"""An installed wheel carries the prompts, and finds them as a checkout does."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import prompts

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("stage_one_system", "stage_one_input", "consolidation")


def test_prompts_load_from_the_checkout() -> None:
    for name in NAMES:
        assert len(prompts.load(name)) > 200


def test_the_wheel_ships_the_prompts(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "-q", "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    [wheel] = tmp_path.glob("memdeck-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in NAMES:
        assert f"prompts/{name}.md" in names
    assert "engine/__init__.py" in names and "tui/cli.py" in names
    for db in ("state_5", "memories_1", "memories_v2_1"):  # Codex's schemas (codex_schema.py)
        assert f"engine/codex_schema_0169/{db}.json" in names
    # the app with every pane, widget and stylesheet it loads
    tui = ROOT / "tui"
    for path in [*tui.glob("*.py"), *tui.glob("panes/*.py"), *tui.glob("widgets/*.py"),
                 *tui.glob("styles/*.tcss")]:
        assert path.relative_to(ROOT).as_posix() in names, path
    # and a fresh interpreter finds them inside the wheel, not in this checkout
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import prompts; "
            "assert prompts.__file__.startswith(sys.argv[1]), prompts.__file__; "
            "print(len(prompts.load('consolidation')))")
    r = subprocess.run([sys.executable, "-I", "-c", code, str(wheel)], capture_output=True,
                       text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) > 200
