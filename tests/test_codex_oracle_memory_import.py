"""Codex 0.171's import of another agent's memory, run by the real binary (tests/codex_oracle;
the import itself through `codex app-server`, as tests/fixtures/capture_codex_memory_import.py
drives it):

- what Codex writes is byte for byte what tests/fixtures/memory_import/ holds (temp paths
  aside), and only in the root the settings name: with no `[memories] version` and the
  memories feature off it writes both roots, creating `memories/`, so the home turns v1 for
  Codex and for memdeck alike;
- memdeck lists it as Codex's, with the scope Codex wrote, and creates nothing Codex reads;
- Codex's own phase 2 is told to read the extension's instructions, keeps every imported byte,
  and prunes exactly what memdeck's `prune_extension_resources` prunes on the same folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from codex_oracle.fake_responses import FakeResponses, valid_phase2_files
from codex_oracle.runner import jobs, pipeline_finished, run_exec
from external_import import EXTENSION, PREFIX, imported
from fixtures.capture_codex_memory_import import run_import, scrub
from suite_clock import now

from memdeck.engine import Engine
from memdeck.engine.phase2.workspace import prune_extension_resources

FEATURE = "[features]\nexternal_agent_memory_import = true\n"
LOOSE_OLD = f"{PREFIX}/resources/2020-01-01T00-00-00-loose.md"
KEY_TAIL = "-codex-user-home-src-ledger"  # the project key Claude Code gives the temp cwd


def fixture_files() -> dict[str, bytes]:
    return {f"{PREFIX}/{p.relative_to(EXTENSION).as_posix()}": p.read_bytes()
            for p in sorted(EXTENSION.rglob("*")) if p.is_file()}


def scrubbed(files: dict[str, bytes], tmp: Path) -> dict[str, bytes]:
    return {scrub(rel, tmp): scrub(data.decode("utf-8"), tmp).encode("utf-8")
            for rel, data in files.items()}


def visible(home: Path) -> list[str]:
    """Every path of the home except memdeck's own folder."""
    return sorted(p.relative_to(home).as_posix() for p in home.rglob("*")
                  if p.relative_to(home).parts[0] != "memdeck")


def test_codex_writes_what_the_fixture_holds_and_memdeck_shows_it(codex_bin, tmp_path) -> None:
    run = run_import(codex_bin, tmp_path, FEATURE + '[memories]\nversion = "v2"\n')
    home = run["home"]
    assert run["roots"] == ["memories_v2"] and not (home / "memories").exists()
    root = home / "memories_v2"
    assert scrubbed(imported(root), tmp_path) == fixture_files()

    before = visible(home)
    eng = Engine.open(home)
    files = {f.path: f for f in eng.memory_files() if f.path.startswith(PREFIX)}
    assert {f.kind for f in files.values()} == {"imported"}
    scope = next(f.scope for p, f in files.items() if p.endswith(f"{KEY_TAIL}/MEMORY.md"))
    assert scope is not None and scope.cwd == str(tmp_path / "codex-user-home/src/ledger")
    assert eng.memory_read(next(iter(files))).read_only
    assert visible(home) == before  # a listing creates nothing Codex reads


def test_with_no_version_set_it_writes_both_roots_and_the_home_turns_v1(codex_bin,
                                                                          tmp_path) -> None:
    run = run_import(codex_bin, tmp_path, FEATURE)  # memories off, no [memories] version
    home = run["home"]
    assert run["roots"] == ["memories", "memories_v2"]
    assert imported(home / "memories") == imported(home / "memories_v2")
    assert scrubbed(imported(home / "memories"), tmp_path) == fixture_files()
    assert Engine.open(home).home.memory_version == "v1"  # memories/ exists now


def test_codex_phase2_keeps_it_and_prunes_as_memdeck_does(codex_bin, tmp_path) -> None:
    run = run_import(codex_bin, tmp_path,
                     FEATURE + 'memories = true\n[memories]\nversion = "v2"\n')
    home, root = run["home"], run["home"] / "memories_v2"
    (root / LOOSE_OLD).write_text("an old resource lying in resources/\n", encoding="utf-8")
    before = imported(root)
    ours = tmp_path / "memdeck-pruned"
    shutil.copytree(root, ours, symlinks=True)
    prune_extension_resources(ours, now())

    server = FakeResponses(phase2_files=valid_phase2_files("v2"))
    with server:
        run_exec(home, server, "hello", keep_open=30, until=pipeline_finished(home, "v2"))
    glob = [j for j in jobs(home, "v2") if j["kind"] == "memory_consolidate_global"]
    assert [(j["status"], j["last_error"]) for j in glob] == [("done", None)]
    prompt = str(server.phase2()[0].body)
    assert "extensions/" in prompt and "<extension_name>/instructions.md" in prompt

    kept = {k: v for k, v in before.items() if k != LOOSE_OLD}
    assert imported(root) == kept  # every byte Codex's import wrote
    assert imported(ours) == kept  # memdeck's prune: the same files gone, the same kept
