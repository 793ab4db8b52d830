"""Memory V2 phase 2 into a proposal of `memories_v2/` (docs/codex-format.md "Validation"): only
memory_summary.md, its layout and size limit, rollout summaries synced as in V1, no
raw_memories.md or MEMORY.md; accepted with Codex 0.169's baseline; the V2 read-path preview."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from llm_server import json_reply, tool_call_reply

from memdeck.engine import Engine
from memdeck.engine.backends.offline_phase2 import V2_HEADINGS, V2_LIMIT, merge_summary_v2
from memdeck.engine.codex.memory_layout import SelectedMemory
from memdeck.engine.phase2.workspace import validate_artifacts

CLI = "01a23054-a1fc-7969-acf0-6947af085e83"
ENTRY = re.compile(r"^- rollout_summaries/(\S+\.md) — (.+); thread_id=([0-9a-f-]{36})$")


def v2_engine(home) -> Engine:
    home.config("[features]\nmemories = true\n")  # no [memories] version, no memories/: V2
    home.add("cli-preferences.jsonl")
    home.add("cites-memories.jsonl")
    eng = Engine.open(home.root)
    eng.extract(backend="offline")
    return eng


def mem(i: int, cwd: str = "/src/shop", day: int = 1, summary: str | None = None):
    tid = f"0194f5a6-89ab-7cde-8123-{i:012x}"
    return SelectedMemory(tid, 1_764_547_200 + day * 86_400 + i, "", summary or
                          f"# Fixed bug {i} in the checkout\n\nbody", f"slug {i}",
                          f"/r/{tid}.jsonl", cwd, "main")


# -- the offline merge ---------------------------------------------------------------------
def test_summary_layout_index_and_forgetting() -> None:
    stated = ("# Deploys\n\n- Stated by the user (their words): \"Always deploy with "
              "`make deploy`\"; \"Never touch prod on Fridays.\"\n")
    a, b, c = mem(1), mem(2, "/src/infra", day=2, summary=stated), mem(3, day=2)
    text = merge_summary_v2("", [a, b, c])
    assert text.startswith("v1\n\n## User Profile\n")
    assert validate_artifacts_text(text) == []
    index = text.split("## What's in Memory\n", 1)[1]
    # the project of the newest session first, then its days, newest first
    assert index.startswith("### /src/shop\n#### 2025-12-03\n- rollout_summaries/")
    assert index.index("#### 2025-12-03") < index.index("#### 2025-12-02")
    entries = [ENTRY.match(ln) for ln in index.splitlines() if ln.startswith("- rollout")]
    assert all(entries) and len(entries) == 3
    assert {m.group(1) for m in entries} == {f"{x.file_stem}.md" for x in (a, b, c)}
    assert {m.group(3) for m in entries} == {a.thread_id, b.thread_id, c.thread_id}
    assert "#### 2025-12-03" in index and "### Older Memory Topics" in index
    ref = f"rollout_summaries/{b.file_stem}.md"
    assert f"- Always deploy with `make deploy` [{ref}]" in text  # the user's own words

    # a person's edits stand; what only a removed session supported is forgotten
    edited = text.replace("## User Profile\n", "## User Profile\n- Backend dev\n")
    edited = edited.replace("- Never touch prod on Fridays.", "- Never touch prod (edited)")
    again = merge_summary_v2(edited, [a, b, c])
    assert "- Backend dev" in again and "(edited)" in again
    assert again.count("Always deploy") == 1  # taken in once, not re-added
    gone = merge_summary_v2(again, [a, c])
    assert "Always deploy" not in gone and b.thread_id not in gone
    assert "- Backend dev" in gone


def validate_artifacts_text(text: str) -> list[str]:
    heads = {ln.strip() for ln in text.splitlines()}
    return [h for h in V2_HEADINGS if h not in heads] + (
        ["too big"] if len(text.encode()) >= V2_LIMIT else [])


def test_summary_stays_under_codex_limit_with_many_sessions() -> None:
    many = [mem(i, f"/src/p{i % 7}", day=i % 20) for i in range(400)]
    text = merge_summary_v2("", many)
    assert len(text.encode()) < V2_LIMIT and validate_artifacts_text(text) == []
    assert "older sessions are in rollout_summaries/ but not listed here" in text
    newest = max(many, key=lambda m: m.source_updated_at)
    # the oldest leave the index first, after every line was cut to its file name
    assert f"- rollout_summaries/{newest.file_stem}.md\n" in text


# -- through the engine ------------------------------------------------------------------------
def test_v2_proposal_holds_only_the_summary_and_summaries(home) -> None:
    eng = v2_engine(home)
    p = eng.consolidate("offline")
    assert p.problems == [] and p.secrets == []
    paths = {f["path"]: f["change"] for f in p.files}
    assert paths.pop("memory_summary.md") == "A"
    assert paths and all(k.startswith("rollout_summaries/") and v == "A"
                         for k, v in paths.items())
    ws = home.root / "memdeck" / "proposals" / p.id / "workspace"
    assert not (ws / "MEMORY.md").exists() and not (ws / "raw_memories.md").exists()
    assert not (home.root / "memories_v2").exists()  # nothing reached a live root yet
    summary = (ws / "memory_summary.md").read_text()
    for f in paths:
        stem = f.removeprefix("rollout_summaries/")
        assert re.search(rf"^- rollout_summaries/{re.escape(stem)} — .+; thread_id=", summary,
                         re.M)
    assert validate_artifacts(ws, "v2") == []

    eng.accept(p.id)
    root = home.root / "memories_v2"
    assert not (home.root / "memories").exists()  # still V2
    assert (root / "memory_summary.md").read_text() == summary
    git = root / ".git"
    assert (git / "codex-baseline-version").read_bytes() == b"1\n"
    lock = root / ".codex-baseline" / ".git" / "codex-baseline.lock"
    assert lock.is_file() and lock.read_bytes() == b""
    show = subprocess.run(["git", "-C", str(root), "cat-file", "-p", "HEAD"],
                          capture_output=True, text=True, check=True).stdout
    assert show.endswith("Initialize Codex git baseline\n\nCo-authored-by: Codex "
                         "<noreply@openai.com>")  # no final newline, as Codex writes it
    branch = subprocess.run(["git", "-C", str(root), "symbolic-ref", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert branch == "refs/heads/main"
    tracked = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True,
                             text=True, check=True).stdout.split()
    assert "memory_summary.md" in tracked and not any("codex-baseline" in t for t in tracked)
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert status == ""  # the baseline holds the whole tree; the lock is never content
    history = subprocess.run(["git", "--git-dir", str(eng.home.history_git), "ls-tree", "-r",
                              "--name-only", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.split()
    assert "memory_summary.md" in history and not any("baseline" in h for h in history)


def test_v2_agent_gets_the_v2_prompt(home, llm_server) -> None:
    eng = v2_engine(home)
    eng.config_set("memdeck.base_url", llm_server.url)
    eng.config_set("memdeck.max_retries", "0")
    summary = ("v1\n\n## User Profile\n- dev\n\n## User preferences\n- none\n\n## General Tips"
               "\n- none\n\n## What's in Memory\n### /home/dev/src/widget\n")
    llm_server.push(tool_call_reply(("write", {"path": "memory_summary.md",
                                               "content": summary})),
                    json_reply("Wrote the summary."))
    p = eng.consolidate("openai")
    assert p.problems == []
    prompt = llm_server.chat_requests()[0].body["messages"][0]["content"]
    assert "Write only `memory_summary.md`" in prompt and "MEMORY.md` handbook" not in prompt
    assert "raw_memories.md` or any other" in prompt

    bad = "v1\n\n## User Profile\n"  # the V2 headings are missing: the proposal says so
    llm_server.push(tool_call_reply(("write", {"path": "memory_summary.md", "content": bad})),
                    json_reply("done"))
    eng.reject(p.id)
    p2 = eng.consolidate("openai")
    assert any("## What's in Memory" in x for x in p2.problems)


def test_v2_preview_is_the_v2_read_path_in_pieces(home) -> None:
    eng = v2_engine(home)
    eng.accept(eng.consolidate("offline").id)
    small = eng.memory_injected()
    root = home.root / "memories_v2"
    summary = (root / "memory_summary.md").read_text().strip()
    assert small.version == "v2" and small.active and small.text == summary
    assert len(small.messages) == 1 and small.messages[0].startswith("## Memory\n")
    assert f"`{root}/rollout_summaries/`" in small.messages[0]
    assert small.messages[0].endswith("========= MEMORY_SUMMARY BEGINS =========\n" + summary
                                      + "\n========= MEMORY_SUMMARY ENDS =========\n")
    assert "one part" in small.note

    (root / "memory_summary.md").write_text("v1\n\n" + "- é fact worth keeping\n" * 2_000)
    big = eng.memory_injected()
    assert big.truncated_tokens > 0 and len(big.text.encode()) <= 10_000 + 40
    assert len(big.messages) == 2 and "".join(big.messages) == big.message_text
    assert all(len(m.encode()) <= 8_900 for m in big.messages)
    assert big.message_tokens == sum(-(-len(m.encode()) // 4) for m in big.messages)
    assert "2 parts" in big.note and json.dumps(big.messages)  # plain strings


def test_v1_preview_is_one_part_with_the_v1_layout(tmp_path: Path) -> None:
    from memdeck.engine import demo_home

    eng = Engine.open(demo_home(tmp_path / "demo"))
    got = eng.memory_injected()
    root = eng.home.memory_root
    assert got.version == "v1" and len(got.messages) == 1
    msg = got.messages[0]
    assert f"{root}/MEMORY.md" in msg and "<oai-mem-citation>" in msg
    assert got.text in msg and msg.rstrip().endswith("before exploring the repository.")


# -- issue 9: outside lines, notes and forgetting in the V2 summary ------------------------------
def _no_empty_headers(text: str) -> list[str]:
    """`### ` / `#### ` headers of the index with nothing under them."""
    lines = text.split("## What's in Memory\n", 1)[1].splitlines()
    bad = []
    for i, line in enumerate(lines):
        if line.startswith("###"):
            nxt = next((x for x in lines[i + 1:] if x.strip()), "")
            level = len(line.split(" ", 1)[0])
            if not nxt or (nxt.startswith("#") and len(nxt.split(" ", 1)[0]) <= level) or (
                    line.startswith("### ") and nxt.startswith("### ")):
                bad.append(line)
    return bad


def test_v2_keeps_outside_lines_folds_notes_and_leaves_no_empty_header() -> None:
    from memdeck.engine.backends.offline_notes import Folding
    from memdeck.engine.phase2.notes import Note

    stated = ("# Deploys\n\n- Stated by the user (their words): "
              "\"Always deploy with `make deploy`\"\n")
    a, b = mem(1), mem(2, "/src/infra", day=2, summary=stated)
    text = merge_summary_v2("", [a, b])
    edited = (text.replace("## User Profile\n- none yet", "## User Profile\n- Backend dev")
              .replace("## What's in Memory\n", "## Team notes\n- rota in the wiki\n\n"
                       "## What's in Memory\n- read the infra runbook first\n")
              .replace("### /src/infra\n", "### /src/infra\n- the infra repo moved to gitlab\n"))
    note_dir = "extensions/ad_hoc/notes/2026-12-03T09-00-00-"
    notes = Folding([Note(note_dir + "a.md", "remember", "Never force-push to main"),
                     Note(note_dir + "b.md", "remember", "The VPN host is vpn-2"),
                     Note(note_dir + "c.md", "forget", "backend dev")])
    out = merge_summary_v2(edited, [a, b], notes)
    for line in ("## Team notes", "- rota in the wiki", "- read the infra runbook first",
                 "- the infra repo moved to gitlab", "- Always deploy with `make deploy` "
                 f"[rollout_summaries/{b.file_stem}.md]"):
        assert line in out.splitlines(), line
    assert out.index("- the infra repo moved to gitlab") > out.index("### /src/infra")
    assert "## User Profile\n- none yet\n" in out  # the forget note took the one line
    assert "## User preferences\n" in out and \
        "- Never force-push to main [ad-hoc note]" in out.split("## General Tips")[0]
    assert "- The VPN host is vpn-2 [ad-hoc note]" in \
        out.split("## General Tips", 1)[1].split("## ", 1)[0]
    assert [len(e.added) + len(e.removed) for e in notes.effects()] == [1, 1, 1]
    assert merge_summary_v2(out, [a, b], Folding(notes.notes[:2])) == out  # folded once
    assert _no_empty_headers(out) == []

    gone = merge_summary_v2(out, [a])  # the infra session forgotten
    assert b.thread_id not in gone and "#### 2025-12-03" not in gone
    assert "Always deploy" not in gone  # its quoted preference went with it
    assert "- the infra repo moved to gitlab" in gone  # a person's line stays, with its header
    assert _no_empty_headers(gone) == []
    assert validate_artifacts_text(gone) == []
