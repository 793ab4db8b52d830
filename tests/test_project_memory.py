"""Per-project memory on/off (issue 26, item 3; engine/codex/project_memory.py, `memdeck
project`). What Codex does with the file is proved on the binary in
tests/test_codex_oracle_project.py; here: what memdeck writes, what it refuses, and the
nearest thing for a project Codex does not trust."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memdeck.engine import Engine, demo_home
from memdeck.tui.cli import main


def _repo(tmp_path: Path, home: Path, trust: str | None) -> Path:
    repo = tmp_path / "shop"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "src" / "cart").mkdir(parents=True)
    if trust:
        with open(home / "config.toml", "a", encoding="utf-8") as f:
            f.write(f'\n[projects."{repo}"]\ntrust_level = "{trust}"\n')
    return repo


def test_an_untrusted_project_is_refused_in_one_line_and_nothing_is_created(
        tmp_path: Path, capsys) -> None:
    home = demo_home(tmp_path / "demo")
    repo = _repo(tmp_path, home, None)
    config = (home / "config.toml").read_bytes()
    assert main(["project", str(repo / "src"), "--use", "off", "--home", str(home)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not trusted" in err and "--forget-sessions" in err
    assert not (repo / ".codex").exists()  # its mere existence can change what Codex does
    assert (home / "config.toml").read_bytes() == config
    # the state is shown all the same: Codex ignores the project file, the home's keys hold
    assert main(["project", str(repo), "--home", str(home)]) == 0
    out = capsys.readouterr().out
    assert "Codex ignores it" in out and "memory shown to its sessions: yes" in out


def test_trust_level_untrusted_is_named(tmp_path: Path, capsys) -> None:
    home = demo_home(tmp_path / "demo")
    repo = _repo(tmp_path, home, "untrusted")
    assert main(["project", str(repo), "--generate", "off", "--home", str(home)]) == 1
    assert "trust_level = 'untrusted'" in capsys.readouterr().err


def test_a_trusted_project_gets_its_keys_and_keeps_every_other_byte(tmp_path: Path,
                                                                     capsys) -> None:
    home = demo_home(tmp_path / "demo")
    repo = _repo(tmp_path, home, "trusted")
    (repo / ".codex").mkdir()
    mine = '# the team\'s settings\nmodel = "gpt-6-luna"   # pinned\n\n[memories]\n# keep\n'
    (repo / ".codex" / "config.toml").write_text(mine, encoding="utf-8")
    config = (home / "config.toml").read_bytes()
    # asked from deep inside: the project is the git root Codex trusts
    assert main(["project", str(repo / "src" / "cart"), "--use", "off", "--generate", "off",
                 "--home", str(home), "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["folder"] == str(repo) and state["trust"] == "trusted"
    assert state["effective"] == {"use_memories": False, "generate_memories": False}
    text = (repo / ".codex" / "config.toml").read_text(encoding="utf-8")
    assert text.startswith(mine) and "use_memories = false" in text \
        and "generate_memories = false" in text
    assert (home / "config.toml").read_bytes() == config  # the home's own keys untouched
    assert main(["project", str(repo), "--use", "on", "--home", str(home)]) == 0
    assert "memory shown to its sessions: yes (use_memories, from this project)" in \
        capsys.readouterr().out
    assert "use_memories = true" in (repo / ".codex" / "config.toml").read_text()


def test_a_broken_project_file_is_one_line_and_left_as_it_is(tmp_path: Path, capsys) -> None:
    home = demo_home(tmp_path / "demo")
    repo = _repo(tmp_path, home, "trusted")
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_bytes(b"[memories\nuse_memories = \n")
    assert main(["project", str(repo), "--use", "off", "--home", str(home)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(repo / ".codex" / "config.toml") in err
    assert (repo / ".codex" / "config.toml").read_bytes() == b"[memories\nuse_memories = \n"


def test_forget_sessions_forgets_only_that_projects_sessions(accepted_home: Path,
                                                             capsys) -> None:
    eng = Engine.open(accepted_home)
    extracted = [s for s in eng.sessions() if s.status == "extracted" and s.cwd]
    project = extracted[0].cwd
    assert project is not None
    ours = {s.id for s in extracted if s.cwd == project}
    others = {s.id for s in extracted if s.cwd != project}
    assert ours and others
    assert main(["project", project, "--forget-sessions", "--home", str(accepted_home),
                 "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["forgot"]) >= ours
    after = {s.id: s for s in Engine.open(accepted_home).sessions()}
    assert all(after[i].memory_mode == "disabled" for i in ours)
    assert all(after[i].status == "extracted" for i in others)  # the rest keep their memory
    assert main(["project", project, "--forget-sessions", "--home", str(accepted_home)]) == 0
    assert capsys.readouterr().out.startswith("forgot 0 session(s)")


def test_forget_sessions_goes_alone(tmp_path: Path, capsys) -> None:
    home = demo_home(tmp_path / "demo")
    assert main(["project", str(tmp_path), "--forget-sessions", "--use", "off", "--home",
                 str(home)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_project_file_that_is_a_link_or_not_utf8_is_refused(tmp_path: Path, capsys) -> None:
    home = demo_home(tmp_path / "demo")
    repo = _repo(tmp_path, home, "trusted")
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text("# not the project's\n", encoding="utf-8")
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").symlink_to(elsewhere)
    assert main(["project", str(repo), "--use", "off", "--home", str(home)]) == 1
    assert "symbolic link" in capsys.readouterr().err
    assert elsewhere.read_text(encoding="utf-8") == "# not the project's\n"
    (repo / ".codex" / "config.toml").unlink()
    (repo / ".codex" / "config.toml").write_bytes(b"model = \"caf\xe9\"\n")
    assert main(["project", str(repo), "--use", "off", "--home", str(home)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.toml" in err
    assert (repo / ".codex" / "config.toml").read_bytes() == b"model = \"caf\xe9\"\n"
