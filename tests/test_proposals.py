"""Phase 2 into a proposal: reviewable, never touching the live memory root."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import hold_global_lease

from memdeck.engine import Engine, MemdeckError, demo_home
from memdeck.engine.phase2.proposals import root_state
from memdeck.tui.cli import main

FIELDS = {"id", "status", "created_at", "backend", "model", "threads", "files"}
KIND = "github-token"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    home = demo_home(tmp_path / "demo")
    Engine.open(home).extract(backend="offline")
    return home


def run(capsys, *argv: str):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_consolidate_writes_a_proposal_not_the_live_root(capsys, demo: Path) -> None:
    before = root_state(demo / "memories")
    code, out, _ = run(capsys, "consolidate", "--json", "--home", str(demo))
    p = json.loads(out)
    assert code == 0 and FIELDS <= set(p) and p["status"] == "pending"
    assert p["backend"] == "offline" and len(p["threads"]) == 5
    changes = {f["path"]: f["change"] for f in p["files"]}
    assert changes["MEMORY.md"] == "M" and changes["raw_memories.md"] == "M"
    assert sum(1 for k, v in changes.items() if k.startswith("rollout_summaries/")
               and v == "A") == 3
    assert p["secrets"] == [] and p["problems"] == []
    assert root_state(demo / "memories") == before  # nothing reached the live root

    ws = demo / "memdeck" / "proposals" / p["id"] / "workspace"
    assert (ws / "memory_summary.md").read_text().startswith("v1\n")
    assert not (ws / "phase2_workspace_diff.md").exists()
    code, out, _ = run(capsys, "diff", p["id"][:12], "--home", str(demo))
    assert code == 0 and "+## Task 2: Upgrade Django to 5.1, success" in out

    code, out, _ = run(capsys, "proposals", "--json", "--home", str(demo))
    assert [x["id"] for x in json.loads(out)] == [p["id"]]
    # the live state the proposal started from is in memdeck's history
    assert Engine.open(demo).history()


def test_a_secret_in_a_raw_memory_is_flagged(capsys, demo: Path) -> None:
    conn = sqlite3.connect(demo / "memories_1.sqlite")
    conn.execute("UPDATE stage1_outputs SET raw_memory = raw_memory || "
                 "'- user preference: deploy key ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789' "
                 "WHERE rollout_slug = 'docs_broken_links'")
    conn.commit()
    conn.close()
    p = Engine.open(demo).consolidate()
    found = {(s["path"], s["kind"]) for s in p.secrets}
    assert ("raw_memories.md", KIND) in found and ("MEMORY.md", KIND) in found
    assert all(s["line"] > 0 for s in p.secrets)
    assert all("ghp_AbCdEf" not in s["preview"] for s in p.secrets)
    code, out, _ = run(capsys, "consolidate", "--home", str(demo))
    assert "SECRET" in out and "cannot be accepted" in out


def test_reject_keeps_the_record_and_drops_the_workspace(capsys, demo: Path) -> None:
    p = Engine.open(demo).consolidate()
    code, out, _ = run(capsys, "reject", p.id, "--reason", "too noisy", "--home", str(demo))
    assert code == 0 and "too noisy" in out
    [row] = Engine.open(demo).proposals()
    assert (row.status, row.reason) == ("rejected", "too noisy")
    assert not (demo / "memdeck" / "proposals" / p.id / "workspace").exists()
    assert Engine.open(demo).proposal_diff(p.id) == ""  # what the model wrote is gone too
    code, _, err = run(capsys, "reject", p.id, "--home", str(demo))
    assert code == 1 and "not pending" in err and err.count("\n") == 1


def test_refusals_are_one_line(capsys, demo: Path) -> None:
    code, _, err = run(capsys, "consolidate", "--backend", "openai", "--home", str(demo))
    assert code == 1 and "needs a key" in err and err.count("\n") == 1
    assert not list((demo / "memdeck" / "proposals").glob("*"))  # nothing half-made kept
    hold_global_lease(demo)
    with pytest.raises(MemdeckError, match="consolidation is running"):
        Engine.open(demo).consolidate()
    code, _, err = run(capsys, "diff", "nope", "--home", str(demo))
    assert code == 1 and "no proposal" in err
