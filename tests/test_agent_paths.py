"""The consolidation agent's one path rule (issue 12 item 8, engine/phase2/paths.py), driven
through the real agent loop and the real openai client against tests/llm_server.py.

Each hostile call is one agent run: the scripted model makes the call, reads the tool result
and finishes. What every run must show: the call came back to the model as an `error:` tool
result, the run finished, no byte of the planted outside file reached the server, and the
inputs, the user's note and the outside files are unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import served_demo
from llm_server import LLMServer, Reply, json_reply, tool_call_reply

from memdeck.engine import Engine, MemdeckError
from memdeck.engine.backends.openai_client import BackendConfig, build_client
from memdeck.engine.backends.openai_phase2 import AgentRun, run_agent
from memdeck.engine.memory_folder.accept import AcceptRefused
from memdeck.engine.phase2.backend import Phase2Result
from memdeck.engine.phase2.hunks import note_changes
from memdeck.engine.phase2.paths import PathKind, PathRefused, classify, is_user_note, normalise
from memdeck.engine.phase2.proposals import consolidate
from memdeck.engine.phase2.workspace import DIFF_FILE as DIFF
from memdeck.engine.phase2.workspace import validate_artifacts

SECRET = "OUTSIDE-SECRET-7f3a9c"  # only in files outside the workspace
NOTE = "extensions/ad_hoc/notes/2026-12-01T10-00-00-keep-staging.md"
NOTE_TEXT = "Remember: the staging database is on port 5433\n"
PROTECTED = ("raw_memories.md", "rollout_summaries/2026-12-01T09-00-00-abcd-shop.md", NOTE,
             "phase2_workspace_diff.md")


# -- a workspace with things planted in it --------------------------------------------------
def make_workspace(tmp: Path) -> tuple[Path, Path]:
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"{SECRET}\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "deep.md").write_text(f"deep {SECRET}\n")
    ws = tmp / "ws"
    files = {
        "MEMORY.md": "# Memory\n## User preferences\n- Run `make check-quick`\n",
        "memory_summary.md": "v1\n\n## User Profile\n- x\n",
        "raw_memories.md": "# Raw Memories\n- raw one\n",
        "rollout_summaries/2026-12-01T09-00-00-abcd-shop.md": "summary of shop\n",
        "phase2_workspace_diff.md": "# Memory Workspace Diff\n- A " + NOTE + "\n",
        "extensions/ad_hoc/instructions.md": "Fold notes.\n",
        NOTE: NOTE_TEXT,
        ".git/config": "[core]\n",
        "skills/deploy/SKILL.md": "deploy skill\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / "link.md").symlink_to(outside / "secret.md")  # a file symlink at the top
    (ws / "linkdir").symlink_to(outside, target_is_directory=True)  # a folder symlink
    (ws / "skills" / "evil.md").symlink_to("../../outside/secret.md")  # relative, nested
    (ws / "skills" / "evildir").symlink_to(outside / "sub", target_is_directory=True)
    (ws / "extensions" / "ad_hoc" / "notes" / "2026-12-02T00-00-00-link.md").symlink_to(
        outside / "secret.md")  # a symlink named like a note
    (ws / "dangling.md").symlink_to(tmp / "nowhere.md")
    os.mkfifo(ws / "pipe.md")  # opening it for reading would hang the run
    return ws, outside


def digest(*roots: Path) -> dict[str, str]:
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.is_symlink() and not p.is_fifo():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def client_cfg(server: LLMServer) -> tuple[Any, BackendConfig]:
    cfg = BackendConfig(base_url=server.url, api_key="test", extract_model="m",
                        consolidation_model="m", timeout=10.0, max_retries=0)
    return build_client(cfg), cfg


def tool_results(server: LLMServer) -> list[str]:
    """The tool results the model was sent, in order (from the last recorded request)."""
    last = server.chat_requests()[-1].body
    return [m["content"] for m in last["messages"] if m["role"] == "tool"]


def everything_sent(server: LLMServer) -> str:
    return json.dumps([r.body for r in server.requests])


# -- the hostile calls ----------------------------------------------------------------------
KEEP = NOTE.rsplit("/", 1)[1]
HOSTILE: list[tuple[str, str, Any]] = [
    # reaching outside: escapes, absolute paths, symlinks (file, folder, nested, dangling)
    ("abs", "read", {"path": "/etc/passwd"}),
    ("abs-outside", "read", {"path": "OUTSIDE"}),  # filled in with the real absolute path
    ("dotdot", "read", {"path": "../outside/secret.md"}),
    ("dot-dotdot", "read", {"path": "./../outside/secret.md"}),
    ("inner-dotdot", "read", {"path": "skills/../../outside/secret.md"}),
    ("backslash", "read", {"path": "..\\outside\\secret.md"}),
    ("tilde", "read", {"path": "~/secret.md"}),
    ("nul", "read", {"path": "MEMORY.md\x00../../outside/secret.md"}),
    ("newline", "read", {"path": "MEMORY.md\n../outside"}),
    ("file-link", "read", {"path": "link.md"}),
    ("file-link-dot", "read", {"path": "./link.md"}),
    ("dir-link", "read", {"path": "linkdir/secret.md"}),
    ("dir-link-slashes", "read", {"path": "linkdir//sub/deep.md"}),
    ("nested-link", "read", {"path": "skills/evil.md"}),
    ("nested-dir-link", "read", {"path": "skills/evildir/deep.md"}),
    ("note-named-link", "read", {"path": "extensions/ad_hoc/notes/2026-12-02T00-00-00-link.md"}),
    ("dangling", "read", {"path": "dangling.md"}),
    ("hidden", "read", {"path": ".git/config"}),
    ("hidden-dot", "read", {"path": "./.git/config"}),
    ("fifo", "read", {"path": "pipe.md"}),
    ("search-file-link", "search", {"queries": [SECRET[:8]], "path": "link.md"}),
    ("search-dir-link", "search", {"queries": [SECRET[:8]], "path": "linkdir"}),
    ("search-nested-link", "search", {"queries": ["deep"], "path": "skills/evildir"}),
    ("search-dotdot", "search", {"queries": [SECRET[:8]], "path": "../outside"}),
    ("search-fifo", "search", {"queries": ["x"], "path": "pipe.md"}),
    ("list-dir-link", "list", {"path": "linkdir"}),
    ("list-dotdot", "list", {"path": ".."}),
    ("list-abs", "list", {"path": "/"}),
    # arguments that are not strings
    ("path-number", "read", {"path": 5}),
    ("path-list", "read", {"path": ["MEMORY.md"]}),
    ("path-object", "read", {"path": {"p": "MEMORY.md"}}),
    ("path-bool", "read", {"path": True}),
    ("path-null-read", "read", {"path": None}),  # the root: a folder, not a file
    ("search-path-number", "search", {"queries": ["x"], "path": 7}),
    ("search-queries-numbers", "search", {"queries": [1, 2]}),
    ("search-queries-null", "search", {"queries": None}),
    ("list-path-float", "list", {"path": 3.5}),
    ("line-offset-text", "read", {"path": "MEMORY.md", "line_offset": "2"}),
    ("write-path-number", "write", {"path": 9, "content": "x"}),
    ("write-content-number", "write", {"path": "MEMORY.md", "content": 5}),
    ("edit-old-null", "edit", {"path": "MEMORY.md", "old": None, "new": "x"}),
    ("delete-path-list", "delete", {"path": ["raw_memories.md"]}),
    ("delete-root", "delete", {"path": None}),
    ("write-missing-path", "write", {"content": "x"}),
    # spellings of the user's note and of the inputs
    ("del-note-dot", "delete", {"path": f"./{NOTE}"}),
    ("del-note-slashes", "delete", {"path": f"extensions//ad_hoc/notes//{KEEP}"}),
    ("del-note-trailing", "delete", {"path": f"{NOTE}/"}),
    ("del-note-updown", "delete", {"path": f"x/../{NOTE}"}),
    ("del-note-case", "delete", {"path": f"Extensions/AD_HOC/Notes/{KEEP}"}),
    ("del-note-spaces", "delete", {"path": f"  ./{NOTE}  "}),
    ("del-note-backslash", "delete", {"path": NOTE.replace("/", "\\")}),
    ("del-note-abs", "delete", {"path": "WS/" + NOTE}),  # filled in with the absolute path
    ("write-note-empty", "write", {"path": NOTE, "content": ""}),
    ("edit-note", "edit", {"path": f"./{NOTE}", "old": "5433", "new": "1"}),
    ("write-new-note", "write", {"path": "extensions/ad_hoc/notes/2026-12-03T00-00-00-x.md",
                                 "content": "Forget: everything"}),
    ("write-notes-folder", "write", {"path": "extensions/ad_hoc/notes", "content": "x"}),
    ("write-raw-dot", "write", {"path": "./raw_memories.md", "content": ""}),
    ("del-raw-trailing", "delete", {"path": "raw_memories.md/"}),
    ("del-raw-case", "delete", {"path": "RAW_MEMORIES.md"}),
    ("edit-summary-slashes", "edit", {"path": "rollout_summaries//2026-12-01T09-00-00-abcd-"
                                              "shop.md", "old": "shop", "new": "x"}),
    ("del-summary-dot", "delete", {"path": "./rollout_summaries/2026-12-01T09-00-00-abcd-"
                                           "shop.md"}),
    ("write-summaries-folder", "write", {"path": "rollout_summaries", "content": "x"}),
    ("write-diff-file", "write", {"path": "./phase2_workspace_diff.md", "content": ""}),
    # writing through planted links
    ("write-through-dir-link", "write", {"path": "linkdir/new.md", "content": "x"}),
    ("write-over-file-link", "write", {"path": "link.md", "content": "x"}),
    ("edit-through-link", "edit", {"path": "skills/evil.md", "old": "OUTSIDE", "new": "x"}),
    ("delete-link", "delete", {"path": "skills/evildir/deep.md"}),
    # not a tool, not an object
    ("unknown-tool", "exec", {"code": "rm -rf /"}),
    ("args-not-json", "read", "{not json"),
    ("args-a-list", "read", "[1, 2]"),
]


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    return make_workspace(tmp_path)


def _fill(args: Any, ws: Path, outside: Path) -> Any:
    if isinstance(args, dict) and isinstance(args.get("path"), str):
        path = args["path"]
        if path == "OUTSIDE":
            return {**args, "path": str(outside / "secret.md")}
        if path.startswith("WS/"):
            return {**args, "path": str(ws / path[3:])}
    return args


@pytest.mark.parametrize(("case", "tool", "args"), HOSTILE, ids=[c for c, _, _ in HOSTILE])
def test_a_hostile_call_is_refused_to_the_model_and_the_run_goes_on(
        case: str, tool: str, args: Any, planted: tuple[Path, Path], llm_server) -> None:
    ws, outside = planted
    before = digest(ws, outside)
    llm_server.push(tool_call_reply((tool, _fill(args, ws, outside))),
                    json_reply("done"))
    client, cfg = client_cfg(llm_server)
    run = run_agent(client, cfg, "consolidate", ws)
    assert isinstance(run, AgentRun) and run.steps == 2 and run.summary == "done"
    [result] = tool_results(llm_server)
    assert result.startswith("error: ") and "\n" not in result, result
    assert SECRET not in everything_sent(llm_server)
    assert digest(ws, outside) == before  # nothing changed, inside or out
    assert (ws / "link.md").is_symlink() and (ws / "pipe.md").is_fifo()


def test_every_hostile_call_in_one_run(planted: tuple[Path, Path], llm_server) -> None:
    """All of them in one turn: one bad call never stops the ones after it."""
    ws, outside = planted
    before = digest(ws, outside)
    calls = [(tool, _fill(args, ws, outside)) for _, tool, args in HOSTILE]
    llm_server.push(tool_call_reply(*calls, ("read", {"path": "./MEMORY.md"})),
                    json_reply("done"))
    client, cfg = client_cfg(llm_server)
    assert run_agent(client, cfg, "consolidate", ws).steps == 2
    results = tool_results(llm_server)
    assert len(results) == len(HOSTILE) + 1
    assert all(r.startswith("error: ") for r in results[:-1])
    assert "make check-quick" in results[-1]  # the good call after them still ran
    assert SECRET not in everything_sent(llm_server) and digest(ws, outside) == before


def test_search_and_list_never_show_or_descend_into_symlinks(planted: tuple[Path, Path],
                                                              llm_server) -> None:
    ws, outside = planted
    llm_server.push(tool_call_reply(("search", {"queries": ["deep", SECRET[:8], "skill"]}),
                                    ("search", {"queries": ["skill"], "path": "./skills/"}),
                                    ("list", {}), ("list", {"path": "skills//"}),
                                    ("list", {"path": "extensions/ad_hoc/notes"})),
                    json_reply("done"))
    client, cfg = client_cfg(llm_server)
    run_agent(client, cfg, "consolidate", ws)
    everywhere, in_skills, top, skills, notes = tool_results(llm_server)
    assert everywhere == in_skills == "skills/deploy/SKILL.md:1: deploy skill"
    assert json.loads(top) == ["MEMORY.md", "extensions/", "memory_summary.md",
                               "phase2_workspace_diff.md", "raw_memories.md",
                               "rollout_summaries/", "skills/"]
    assert json.loads(skills) == ["deploy/"]
    assert json.loads(notes) == [KEEP]
    assert SECRET not in everything_sent(llm_server)


def test_normal_spellings_of_allowed_paths_work(planted: tuple[Path, Path], llm_server) -> None:
    ws, _ = planted
    llm_server.push(
        tool_call_reply(("read", {"path": f"./{NOTE}"}),  # notes are readable
                        ("read", {"path": "rollout_summaries//2026-12-01T09-00-00-abcd-shop.md"}),
                        ("write", {"path": "./skills//new/SKILL.md/", "content": "new\n"}),
                        ("edit", {"path": " MEMORY.md ", "old": "check-quick", "new": "check"}),
                        ("write", {"path": "scratch.md", "content": "tmp"}),
                        ("delete", {"path": "./scratch.md"})),
        json_reply("done"))
    client, cfg = client_cfg(llm_server)
    run_agent(client, cfg, "consolidate", ws)
    note, summary, *rest = tool_results(llm_server)
    assert "5433" in note and "summary of shop" in summary and rest == ["ok"] * 4
    assert (ws / "skills/new/SKILL.md").read_text() == "new\n"
    assert "Run `make check`\n" in (ws / "MEMORY.md").read_text()
    assert not (ws / "scratch.md").exists()


# -- the rule itself ------------------------------------------------------------------------
@pytest.mark.parametrize(("raw", "normal"), [
    (None, "."), ("", "."), (".", "."), ("./", "."), ("a//b", "a/b"), ("./a/./b/", "a/b"),
    ("  MEMORY.md ", "MEMORY.md"), ("skills/x/SKILL.md", "skills/x/SKILL.md"),
])
def test_normalise(raw: object, normal: str) -> None:
    assert normalise(raw) == normal


@pytest.mark.parametrize("raw", [
    5, 0, True, [], {}, 1.5, "/etc", "~", "../x", "a/../b", "a/..", "..", ".git", "a/.hidden",
    "a\\b", "a\x00b", "a\nb", "a\x7fb", "\ud800", "x" * 2000,
])
def test_normalise_refuses(raw: object) -> None:
    with pytest.raises(PathRefused):
        normalise(raw)


@pytest.mark.parametrize(("rel", "kind"), [
    ("raw_memories.md", PathKind.INPUT), ("Raw_Memories.MD", PathKind.INPUT),
    ("rollout_summaries", PathKind.INPUT), ("rollout_summaries/a.md", PathKind.INPUT),
    ("phase2_workspace_diff.md", PathKind.INPUT), (NOTE, PathKind.NOTE),
    ("extensions/ad_hoc/notes", PathKind.NOTE), ("extensions/ad_hoc", PathKind.HOLDS_PROTECTED),
    ("extensions", PathKind.HOLDS_PROTECTED), (".", PathKind.HOLDS_PROTECTED),
    ("extensions/ad_hoc/instructions.md", PathKind.MEMORY), ("MEMORY.md", PathKind.MEMORY),
    ("rollout_summaries.md", PathKind.MEMORY), ("raw_memories.md.bak", PathKind.MEMORY),
])
def test_classify(rel: str, kind: PathKind) -> None:
    assert classify(rel) is kind


def test_a_note_is_recognised_in_any_spelling() -> None:
    for spelling in (NOTE, f"./{NOTE}", f"{NOTE}/", NOTE.replace("/", "//"),
                     NOTE.upper(), f" {NOTE}"):
        assert is_user_note(spelling), spelling
    for other in ("MEMORY.md", "extensions/ad_hoc/notes", f"../{NOTE}", f"/{NOTE}", 5, None):
        assert not is_user_note(other), other
    files = [{"path": NOTE, "change": "D"}, {"path": f"./{NOTE}x", "change": "M"},
             {"path": "extensions/ad_hoc/notes/new.md", "change": "A"},
             {"path": "MEMORY.md", "change": "D"}]
    assert note_changes(files) == [(NOTE, "D"), (f"./{NOTE}x", "M")]


# -- whole consolidations -------------------------------------------------------------------
@pytest.fixture
def demo(tmp_path: Path, llm_server) -> Path:
    home = served_demo(tmp_path / "demo", llm_server.url, extracted=True)
    note = home / "memories" / NOTE
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(NOTE_TEXT)
    return home


def proposal_dirs(home: Path) -> list[Path]:
    folder = home / "memdeck" / "proposals"
    return sorted(folder.iterdir()) if folder.is_dir() else []


# writes that are refused only because of what make_workspace planted
NEED_PLANTS = {"write-over-file-link", "write-through-dir-link"}


def test_a_consolidation_full_of_hostile_calls_completes_and_keeps_inputs_and_notes(
        demo: Path, llm_server) -> None:
    outside = demo.parent / "outside.md"
    outside.write_text(SECRET)
    calls = [(tool, args) for case, tool, args in HOSTILE if case not in NEED_PLANTS
             and "WS/" not in str(args) and "OUTSIDE" not in str(args)]
    calls += [("read", {"path": str(outside)}),
              ("edit", {"path": "./MEMORY.md",
                        "old": "## User preferences\n- Run `make check-quick`",
                        "new": "## User preferences\n- Pin exact versions\n"
                               "- Run `make check-quick`"})]
    inputs: dict[str, str] = {}

    def model(body: Any) -> Reply:
        if inputs:
            return json_reply("done")
        [pdir] = proposal_dirs(demo)  # the inputs as synced, before the agent's turn
        ws = pdir / "workspace"
        inputs.update(digest(ws / "rollout_summaries", ws / "extensions"),
                      raw=(ws / "raw_memories.md").read_text(), diff=(ws / DIFF).read_text())
        return tool_call_reply(*calls)

    llm_server.handler = model
    p = Engine.open(demo).consolidate("openai")
    assert p is not None and p.status == "pending" and p.problems == []
    ws = demo / "memdeck" / "proposals" / p.id / "workspace"
    assert (ws / NOTE).read_text() == NOTE_TEXT and NOTE not in [f["path"] for f in p.files]
    assert inputs.pop("raw") == (ws / "raw_memories.md").read_text()
    assert "Memory Workspace Diff" in inputs.pop("diff")  # and the agent could not touch it
    assert inputs == digest(ws / "rollout_summaries", ws / "extensions")
    assert "- Pin exact versions" in (ws / "MEMORY.md").read_text()
    state = Engine.open(demo).proposal_state(p)
    assert state.deleted_notes == state.changed_notes == () and state.warnings == []
    results = tool_results(llm_server)
    assert len(results) == len(calls) and results[-1] == "ok"
    assert all(r.startswith("error: ") for r in results[:-1])
    assert SECRET not in everything_sent(llm_server)


class DeletesTheNote:
    """A consolidation backend that deletes the user's note and edits another (as a buggy
    or hostile backend might): Review must name it."""

    name = "offline"

    def consolidate(self, workspace: Path, selected: list, now: float,
                    version: str) -> Phase2Result:
        (workspace / NOTE).unlink()
        (workspace / "MEMORY.md").write_text((workspace / "MEMORY.md").read_text() + "- x\n")
        return Phase2Result("test")


def test_review_flags_a_proposal_that_deletes_a_user_note(demo: Path) -> None:
    eng = Engine.open(demo)
    p = consolidate(eng.home, eng.store, DeletesTheNote(), eng.sessions(), eng.clock.now())
    assert p is not None
    state = eng.proposal_state(p)
    assert state.deleted_notes == (NOTE,)
    assert state.warnings == [f"deletes the user's note {NOTE}"]
    ws = demo / "memdeck" / "proposals" / p.id / "workspace"
    assert validate_artifacts(ws, live=demo / "memories") == [f"deletes the user's note {NOTE}"]
    assert p.problems == [f"deletes the user's note {NOTE}"]  # so auto-accept skips it
    with pytest.raises(AcceptRefused, match="deletes the user's note"):
        eng.accept(p.id)  # and accept refuses it: a note is never deleted
    assert (demo / "memories" / NOTE).exists()


def _plant_dir_link(root: Path, outside: Path) -> str:
    (root / "extensions" / "shared").symlink_to(outside, target_is_directory=True)
    return "extensions/shared"


def _plant_file_link(root: Path, outside: Path) -> str:
    (root / "skills").mkdir(exist_ok=True)
    (root / "skills" / "linked.md").symlink_to(outside / "secret.md")
    return "skills/linked.md"


def _plant_fifo(root: Path, outside: Path) -> str:
    os.mkfifo(root / "rollout_summaries" / "2026-01-01T00-00-00-zzzz-pipe.md")
    return "rollout_summaries/2026-01-01T00-00-00-zzzz-pipe.md"


PLANTS = {"folder-symlink": _plant_dir_link, "file-symlink": _plant_file_link,
          "fifo": _plant_fifo}


@pytest.mark.parametrize("plant", PLANTS, ids=list(PLANTS))
@pytest.mark.parametrize("backend", ["openai", "offline"])
def test_a_symlink_or_fifo_in_the_memory_folder_is_refused_in_one_line(
        plant: str, backend: str, demo: Path, llm_server) -> None:
    outside = demo.parent / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET)
    rel = PLANTS[plant](demo / "memories", outside)
    with pytest.raises(MemdeckError) as e:
        Engine.open(demo).consolidate(backend)
    message = str(e.value)
    assert "\n" not in message and rel in message and "consolidate again" in message
    assert llm_server.chat_requests() == []  # refused before the model saw anything
    assert Engine.open(demo).proposals() == []
    assert (demo / "memories" / rel).exists() or (demo / "memories" / rel).is_symlink()


def test_a_refused_memory_folder_leaves_no_proposal_folder(demo: Path, llm_server) -> None:
    outside = demo.parent / "outside"
    outside.mkdir()
    _plant_dir_link(demo / "memories", outside)
    with pytest.raises(MemdeckError):
        Engine.open(demo).consolidate("openai")
    assert proposal_dirs(demo) == []


def test_a_failing_agent_leaves_no_proposal_folder(demo: Path, llm_server) -> None:
    llm_server.push(Reply("status", status=400, body=b'{"error": {"message": "bad"}}'))
    with pytest.raises(MemdeckError):
        Engine.open(demo).consolidate("openai")
    assert proposal_dirs(demo) == []


def test_an_ordinary_proposal_folding_a_note_is_not_flagged(demo: Path) -> None:
    """The note check names only real losses: the offline merge folds the note and keeps it."""
    eng = Engine.open(demo)
    p = eng.consolidate("offline")
    assert p is not None and p.problems == []
    ws = demo / "memdeck" / "proposals" / p.id / "workspace"
    assert "5433" in (ws / "MEMORY.md").read_text()  # folded ...
    assert validate_artifacts(ws, live=demo / "memories") == []  # ... and kept
    assert eng.proposal_state(p).warnings == []
