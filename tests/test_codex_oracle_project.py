"""Per-project memory on/off (issue 26, item 3), proved with the real `codex` binary: Codex
reads a trusted project's `.codex/config.toml` above the home's, so what `memdeck project
--use off` writes there keeps the memory summary out of that project's sessions only, and
`--generate off` makes that project's new sessions start with memory disabled."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from codex_oracle.fake_responses import FakeResponses
from codex_oracle.runner import run_exec
from test_codex_oracle_write import fresh_home, memdeck, memdeck_pipeline, memory_text


def _trusted_repo(home: Path, repo: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "src").mkdir()
    cfg = home / "config.toml"
    cfg.write_text(cfg.read_text(encoding="utf-8")
                   + f'\n[projects."{repo}"]\ntrust_level = "trusted"\n', encoding="utf-8")
    return repo


def _shown_memory(home: Path, cwd: Path) -> bool:
    with FakeResponses() as server:
        rc, _, err = run_exec(home, server, "what do you remember?", cwd=cwd, timeout=90)
        assert rc == 0, err[-2000:]
        return "## Memory" in memory_text(server.turns()[0])


def test_memory_off_for_one_project_is_what_codex_does_there(tmp_path: Path,
                                                              codex_bin: Path) -> None:
    home, _root = fresh_home(tmp_path, "v1")
    memdeck_pipeline(home)
    repo = _trusted_repo(home, tmp_path / "shop")
    elsewhere = tmp_path / "blog"
    elsewhere.mkdir()
    assert _shown_memory(home, repo / "src")  # on by default, as everywhere
    before = {r["id"] for r in json.loads(memdeck("sessions", "--home", str(home),
                                                  "--json").stdout)}

    # asked from a subfolder: the project is its git root, which Codex trusts
    state = json.loads(memdeck("project", str(repo / "src"), "--use", "off", "--generate",
                               "off", "--home", str(home), "--json").stdout)
    assert state["folder"] == str(repo) and state["trust"] == "trusted"
    assert state["effective"] == {"use_memories": False, "generate_memories": False}

    assert not _shown_memory(home, repo / "src")
    assert _shown_memory(home, elsewhere)  # every other project keeps its memory
    # the session Codex just started in the project is one memory will not be made of
    rows = json.loads(memdeck("sessions", "--home", str(home), "--json").stdout)
    mine = [r for r in rows if r["cwd"] == str(repo / "src")]
    theirs = [r for r in rows if r["cwd"] == str(elsewhere)]
    [new] = [r for r in mine if r["id"] not in before]
    assert new["memory_mode"] == "disabled", new
    assert [r["memory_mode"] for r in mine if r["id"] in before] == ["enabled"]
    assert all(r["memory_mode"] == "enabled" for r in theirs)

    memdeck("project", str(repo), "--use", "on", "--home", str(home))
    assert _shown_memory(home, repo / "src")
