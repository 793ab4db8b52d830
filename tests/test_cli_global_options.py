"""`memdeck --home H --json COMMAND` and `memdeck COMMAND --home H --json` are the same command.

Each command that writes is run both ways while $CODEX_HOME points at a decoy home: the
named home changes, the decoy never does (with `reset` or `forget`, acting on the wrong home
would be data loss).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def tree_digest(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def make_home(home_builder_cls, root: Path) -> Path:
    h = home_builder_cls(root)
    h.v1().config("[features]\nmemories = true\n")
    h.add("cli-preferences.jsonl", idle_hours=9)
    h.add("memory-mode-disabled-later.jsonl", idle_hours=9)
    return root


@pytest.mark.parametrize("global_first", [True, False],
                         ids=["memdeck-OPTS-CMD", "memdeck-CMD-OPTS"])
def test_every_writing_command_acts_on_the_named_home(tmp_path, home, global_first) -> None:
    builder = type(home)
    target = make_home(builder, tmp_path / "target")
    decoy = make_home(builder, tmp_path / "decoy")
    # the decoy is what a command ignoring --home would use
    env = {**os.environ, "CODEX_HOME": str(decoy), "PYTHONPATH": str(REPO)}
    decoy_before = tree_digest(decoy)

    def run(*argv: str) -> object:
        opts = ["--home", str(target), "--json"]
        cmd = [sys.executable, "-m", "memdeck.tui.cli", *(opts + list(argv) if global_first
                                                  else list(argv[:1]) + opts + list(argv[1:]))]
        if argv[0] == "config":  # options go after the action too: `config set --home H K V`
            cmd = [sys.executable, "-m", "memdeck.tui.cli",
                   *(opts + list(argv) if global_first else list(argv[:2]) + opts
                     + list(argv[2:]))]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, (cmd, r.stderr)
        assert tree_digest(decoy) == decoy_before, f"{argv[0]} changed the decoy home"
        return json.loads(r.stdout) if r.stdout.strip() else None

    run("extract", "--backend", "offline")
    proposal = run("consolidate", "--backend", "offline")
    run("accept", proposal["id"])
    assert "Task Group" in (target / "memories" / "MEMORY.md").read_text()
    second = target / "sessions" / "2026" / "12" / "01"
    run("config", "set", "min_rollout_idle_hours", "12")
    assert "min_rollout_idle_hours = 12" in (target / "config.toml").read_text()
    history = run("history")
    assert history and history[0]["commit"]
    run("restore", history[-1]["commit"])  # the first state: before any memory
    assert not (target / "memories" / "MEMORY.md").exists()
    run("restore", history[0]["commit"])
    assert (target / "memories" / "MEMORY.md").exists()
    run("forget", "01a23054")
    assert "disabled" in next(second.glob("*cli-preferences*")).read_text().splitlines()[-1]
    backup = run("reset", "--yes")["backup"]
    assert not (target / "memories" / "MEMORY.md").exists()
    run("restore-backup", backup["id"])
    assert (target / "memories" / "MEMORY.md").exists()
    assert tree_digest(decoy) == decoy_before


def test_version_names_memdeck_and_the_codex_it_is_tested_with(capsys, tmp_path) -> None:
    from importlib.metadata import version

    from memdeck.engine.codex.home import TESTED_CODEX
    from memdeck.tui.cli import main

    before = sorted(tmp_path.iterdir())
    assert main(["--version"]) == 0
    out = capsys.readouterr().out.strip()
    assert out == f"memdeck {version('memdeck')} (tested with Codex {TESTED_CODEX})"
    assert sorted(tmp_path.iterdir()) == before
