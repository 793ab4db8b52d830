"""The wheel: one top-level import name, `memdeck`, with the prompts, schemas and styles it
loads; installed into a fresh virtual environment it runs `memdeck demo --no-tui`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from memdeck import prompts

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("stage_one_system", "stage_one_input", "consolidation")


def test_prompts_load_from_the_checkout() -> None:
    for name in NAMES:
        assert len(prompts.load(name)) > 200


def _build_leftovers() -> dict[str, float]:
    """What a build in the checkout would make or touch there, with its last change."""
    found = [ROOT / "build", *ROOT.glob("*.egg-info")]
    return {p.name: max(f.stat().st_mtime for f in (p, *p.rglob("*")))
            for p in found if p.exists()}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of what the wheel is made of, so setuptools' build/ and
    memdeck.egg-info/ land in the temp folder, not in the checkout."""
    out = tmp_path_factory.mktemp("wheel")
    src = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for folder in ("engine", "tui", "prompts"):
        shutil.copytree(ROOT / folder, src / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    before = _build_leftovers()
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "-q", "-w", str(out), str(src)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert _build_leftovers() == before, "the build wrote into the checkout"
    [built] = out.glob("memdeck-*.whl")
    return built


def test_the_wheel_installs_only_memdeck(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"memdeck"}
    for name in NAMES:
        assert f"memdeck/prompts/{name}.md" in names
    assert "memdeck/engine/__init__.py" in names and "memdeck/tui/cli/__init__.py" in names
    for db in ("state_5", "memories_1", "memories_v2_1"):  # Codex's schemas (codex/schema.py)
        assert f"memdeck/engine/codex/schema_0171/{db}.json" in names
    # every module and stylesheet of the checkout is in the wheel
    for folder in ("engine", "tui", "prompts"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".tcss", ".md", ".json") and "__pycache__" not in path.parts:
                assert f"memdeck/{path.relative_to(ROOT).as_posix()}" in names, path
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "memdeck = memdeck.tui.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_the_wheel_runs_the_demo_from_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    """A new venv where pip installs only the wheel; its dependencies are this environment's
    site-packages as a plain path (no network; this environment's editable memdeck finder is a
    .pth hook there, which a plain path does not run); run from outside the checkout."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                        "--no-deps", "--no-index", str(wheel)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    bindir = venv / "bin"
    home = tmp_path / "user"
    home.mkdir()
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    r = subprocess.run([str(bindir / "memdeck"), "demo", "--no-tui"], capture_output=True,
                       text=True, timeout=120, cwd=home, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "19 sessions in" in r.stdout and "too_recent" in r.stdout, r.stdout[-2000:]
    where = subprocess.run([py, "-c", "import memdeck.engine as e; print(e.__file__)"],
                           capture_output=True, text=True, env=env, cwd=home, timeout=60)
    assert where.stdout.strip().startswith(str(site)), where.stdout + where.stderr
    assert (home / ".local/share/memdeck/demo-codex-home/sessions").is_dir()
    assert not os.path.exists(home / ".codex"), "the demo writes only its own demo home"
