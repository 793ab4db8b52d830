"""`memdeck citations`: events per citing message, usage per thread and per line range."""

from __future__ import annotations

import json
from pathlib import Path

from memdeck.engine import Engine
from memdeck.tui.cli import main


def run_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_events_and_usage_follow_codex_counting(capsys, home) -> None:
    home.add("cites-memories.jsonl")
    home.add("cites-memories.jsonl", name="rollout-2026-12-01T11-00-00-again.jsonl")
    home.add("cli-preferences.jsonl")  # cites nothing
    out = run_json(capsys, "citations", "--json", "--home", str(home.root))
    assert len(out["events"]) == 2  # one per citing assistant message
    ev = out["events"][0]
    assert [e["path"] for e in ev["entries"]] == [
        "MEMORY.md", "rollout_summaries/2026-11-20T10-00-00-Ab3x-checkout_tests.md"]
    assert ev["entries"][1]["note"] == "currency rounding | Decimal"
    assert "not-a-uuid" in ev["rollout_ids"]  # kept in the event...
    threads = out["usage"]["threads"]
    assert "not-a-uuid" not in threads  # ...and counts for nothing
    # an id repeated inside one message counts once per message
    assert threads == {"01a23054-a1fc-7969-acf0-6947af085e83": 2,
                       "01a22c09-fffc-7d28-989e-c997a9247459": 2}
    lines = {(u["path"], u["line_start"], u["line_end"]): u for u in out["usage"]["lines"]}
    assert lines[("MEMORY.md", 3, 7)]["count"] == 2
    assert lines[("MEMORY.md", 3, 7)]["last_cited"].endswith("Z")


def test_no_citations_and_unreadable_files(capsys, home) -> None:
    home.add("cli-preferences.jsonl")
    home.write("rollout-2026-12-01T12-00-00-bin.jsonl", b"\x00\x01garbage")
    assert main(["citations", "--home", str(home.root)]) == 0
    assert "no session has cited memory yet" in capsys.readouterr().out
    report = Engine.open(home.root).citations()
    assert report.events == () and report.threads == {} and report.lines == ()


def test_demo_home_cites_real_memory_lines(tmp_path: Path) -> None:
    from memdeck.engine import demo_home

    engine = Engine.open(demo_home(tmp_path / "demo"))
    report = engine.citations()
    assert report.events
    memory = (engine.home.memory_root / "MEMORY.md").read_text().splitlines()
    for u in report.lines:
        if u.path == "MEMORY.md":
            assert 1 <= u.line_start <= u.line_end <= len(memory)


def test_tag_split_across_chunks_huge_lines_and_corrupt_lines(capsys, home) -> None:
    """The pre-check reads in steps and finds a tag cut by a step boundary; a huge line and
    a corrupt line around the citing message change nothing; other files still count."""
    from memdeck.engine.read_path.citation_usage import OPEN, _may_cite

    src = (home.add("cites-memories.jsonl")).read_bytes()
    at = src.index(OPEN.encode())
    for cut in range(1, len(OPEN)):
        assert _may_cite(str(home.add("cites-memories.jsonl", name=f"rollout-cut{cut}.jsonl")),
                         chunk=at + cut)
    huge = b'{"timestamp":"2026-12-01T09:00:00Z","type":"event_msg","payload":{"type":"x","t":"' \
        + b"a" * (20 << 20) + b'"}}\n'
    home.write("rollout-2026-12-01T13-00-00-huge.jsonl", src + huge + b"{corrupt\n")
    report = Engine.open(home.root).citations()
    assert report.threads["01a23054-a1fc-7969-acf0-6947af085e83"] == len(report.events)
    assert len(report.events) == 1 + (len(OPEN) - 1) + 1
