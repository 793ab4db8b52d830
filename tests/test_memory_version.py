"""Which memory Codex uses (docs/codex-format.md "Memory versions"), decided in one place, and
never changed by memdeck.

Codex 0.169: `[memories] version` when set, else v1 when `$CODEX_HOME/memories` exists at all,
else v2. A tool that creates `memories/` on a v2 home switches the user's Codex to an empty v1
memory, so every command here is run on a v2 home and must leave it v2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdeck.engine import Engine
from memdeck.engine.codex.home import TESTED_CODEX, CodexHome
from memdeck.engine.errors import HomeError
from memdeck.tui.cli import main

SUMMARY = "v1\n\n## User Profile\n- harmless\n"


def v2_home(home) -> Path:
    """A home where Codex 0.169 ran memory v2: memories_v2/ and memories on in config."""
    home.config("[features]\nmemories = true\n")
    root = home.root / "memories_v2"
    root.mkdir()
    (root / "memory_summary.md").write_text(SUMMARY)
    home.add("cli-preferences.jsonl", idle_hours=9)
    return home.root


def test_resolution_follows_codex(home) -> None:
    h = CodexHome.open(home.root)
    assert (h.memory_version, h.memory_root.name) == ("v2", "memories_v2")
    assert h.version_info.describe() == "v2: no memories/ folder, no version set"
    assert h.codex_pipeline_db.name == "memories_v2_1.sqlite"
    (home.root / "memories").write_text("")  # even a plain file makes Codex pick v1
    h = CodexHome.open(home.root)
    assert (h.memory_version, h.memory_root.name) == ("v1", "memories")
    assert h.codex_pipeline_db.name == "memories_1.sqlite"
    home.config('[memories]\nversion = "v2"\n')  # the setting wins over the folder
    h = CodexHome.open(home.root)
    assert h.memory_version == "v2" and "set by [memories] version" in h.version_info.reason


def test_config_get_version_says_why(capsys, home) -> None:
    assert main(["config", "get", "version", "--home", str(home.root)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == '"v2"  # no memories/ folder, no version set'
    (home.root / "memories").mkdir()
    assert main(["--home", str(home.root), "--json", "config", "get", "version"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["value"], got["set"]) == ("v1", False)
    assert got["reason"] == "memories/ exists, no version set"


def test_an_unknown_version_is_read_but_never_written(capsys, home) -> None:
    home.config('[features]\nmemories = true\n[memories]\nversion = "v3"\n')
    home.add("cli-preferences.jsonl", idle_hours=9)
    before = sorted(os.listdir(home.root))
    assert main(["sessions", "--home", str(home.root)]) == 0
    err = capsys.readouterr().err
    assert 'version = "v3" is not a version memdeck knows' in err
    assert main(["extract", "--home", str(home.root), "--backend", "offline"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "writes no memory" in err
    assert main(["consolidate", "--home", str(home.root), "--backend", "offline"]) == 1
    capsys.readouterr()
    assert sorted(p for p in os.listdir(home.root) if p != "memdeck") == before
    eng = Engine.open(home.root)
    with pytest.raises(HomeError, match="v3"):
        eng.memory_note("remember this", "remember")


READ_ONLY = [["sessions"], ["memories"], ["citations"], ["proposals"], ["backups"],
             ["history"], ["config", "get", "version"], ["config", "list"], ["show", "01a23054"]]


def _cli(home: Path, *argv: str, global_first: bool = False) -> subprocess.CompletedProcess:
    cmd = ([sys.executable, "-m", "memdeck.tui.cli", "--home", str(home), *argv] if global_first
           else [sys.executable, "-m", "memdeck.tui.cli", *argv, "--home", str(home)])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})


@pytest.mark.parametrize("argv", READ_ONLY, ids=lambda a: " ".join(a))
def test_read_only_commands_leave_a_v2_home_v2(home, argv) -> None:
    root = v2_home(home)
    before = sorted(p for p in os.listdir(root) if p != "memdeck")
    r = _cli(root, *argv, global_first=True)
    assert r.returncode == 0, r.stderr
    assert not (root / "memories").exists()
    assert sorted(p for p in os.listdir(root) if p != "memdeck") == before
    assert (root / "memories_v2" / "memory_summary.md").read_text() == SUMMARY


def test_the_whole_pipeline_leaves_a_v2_home_v2(home) -> None:
    """extract, consolidate, accept, forget, reset, restore: the v2 root only, never memories/."""
    root = v2_home(home)
    for argv in (["extract", "--backend", "offline"], ["consolidate", "--backend", "offline"]):
        r = _cli(root, *argv, "--json")
        assert r.returncode == 0, r.stderr
    pid = json.loads(r.stdout)["id"]
    assert _cli(root, "accept", pid).returncode == 0
    assert not (root / "memories").exists()
    assert (root / "memories_v2" / "memory_summary.md").read_text() != SUMMARY
    assert not (root / "memories_1.sqlite").exists()
    history = json.loads(_cli(root, "history", "--json").stdout)
    assert len(history) >= 2
    assert _cli(root, "restore", history[-1]["commit"]).returncode == 0
    assert (root / "memories_v2" / "memory_summary.md").read_text() == SUMMARY
    assert _cli(root, "forget", "01a23054").returncode == 0
    r = _cli(root, "reset", "--yes")
    assert r.returncode == 0, r.stderr
    assert not (root / "memories").exists()
    assert CodexHome.open(root).memory_version == "v2"


def test_the_watcher_creates_no_folder(home) -> None:
    import threading

    home.config("[features]\nmemories = true\n")
    home.add("cli-preferences.jsonl", idle_hours=9)
    stop = threading.Event()
    events = []
    w = Engine.open(home.root).watcher(events.append, stop=stop, tick=0.2, debounce_ms=50)
    t = threading.Thread(target=w.run)
    t.start()
    try:
        # a v2 root appearing while it runs is seen and recorded, still without memories/
        root = home.root / "memories_v2"
        for n in range(100):
            if any(e.kind == "memory_changed" for e in events):
                break
            if events:  # the first round is done: the watch has started or is starting
                root.mkdir(exist_ok=True)
                (root / "memory_summary.md").write_text(f"{SUMMARY}- change {n}\n")
            stop.wait(0.2)
    finally:
        stop.set()
        t.join(10)
    assert any(e.kind == "memory_changed" for e in events), events
    assert sorted(p.name for p in home.root.iterdir()) == [
        "config.toml", "memdeck", "memories_v2", "sessions"]


def test_a_proposal_is_accepted_only_into_the_version_it_was_made_for(home) -> None:
    home.v1().config("[features]\nmemories = true\n")
    home.add("cli-preferences.jsonl", idle_hours=9)
    eng = Engine.open(home.root)
    eng.extract(backend="offline")
    p = eng.consolidate(backend="offline")
    assert p.version == "v1" and eng.proposals()[0].to_json()["version"] == "v1"
    eng.config_set("version", "v2")  # the user switched Codex to v2 in the meantime
    from memdeck.engine.memory_folder.accept import AcceptRefused

    with pytest.raises(AcceptRefused, match="is for memory v1, but Codex now uses v2"):
        eng.accept(p.id)
    assert not (home.root / "memories_v2").exists()
    eng.config_set("version", "v1")
    assert eng.accept(p.id).status == "accepted"


def test_a_home_today_s_codex_wrote_has_no_newer_codex_warning(capsys, home) -> None:
    """0.171 is the release memdeck is proved against: its sessions are not "newer"."""
    src = (Path(__file__).parent / "fixtures" / "rollouts" / "codex-0.169-exec.jsonl")
    lines = src.read_text().splitlines()
    first = json.loads(lines[0])
    first["payload"]["cli_version"] = "0.171.0"
    home.write("rollout-2026-12-01T10-00-00-today.jsonl",
               "\n".join([json.dumps(first), *lines[1:]]).encode() + b"\n")
    assert main(["sessions", "--json", "--home", str(home.root)]) == 0
    _, err = capsys.readouterr()
    assert "newer than" not in err, err


def test_a_home_from_a_newer_codex_is_read_with_one_warning_naming_it(capsys, home) -> None:
    src = (Path(__file__).parent / "fixtures" / "rollouts" / "codex-0.169-exec.jsonl")
    lines = src.read_text().splitlines()
    first = json.loads(lines[0])
    first["payload"]["cli_version"] = "0.172.2"  # a release after the pinned one
    future = {"timestamp": first["timestamp"], "type": "hologram_state",
              "payload": {"frames": 3}}  # a line type no memdeck knows
    home.write("rollout-2026-12-01T10-00-00-newer.jsonl",
               "\n".join([json.dumps(first), json.dumps(future), *lines[1:]]).encode() + b"\n")
    assert main(["sessions", "--json", "--home", str(home.root)]) == 0
    out, err = capsys.readouterr()
    [s] = json.loads(out)
    assert s["bad_lines"] == 0 and s["id"] == first["payload"]["id"]
    warnings = [ln for ln in err.splitlines() if "warning" in ln]
    assert len([w for w in warnings if "0.172.2" in w]) == 1, err
    assert f"newer than {TESTED_CODEX}" in err
    home.write("rollout-2026-12-01T10-00-00-newer.jsonl", src.read_bytes())
    assert main(["sessions", "--home", str(home.root)]) == 0
    assert "newer than" not in capsys.readouterr().err
