"""Real homes read right (issue 10): Windows paths, colliding id prefixes, sub-agents, VS Code
previews, as `memdeck` shows them. Each test runs the real command on a home of that shape."""

from __future__ import annotations

import json

import pytest

from memdeck.tui.cli import main

WINDOWS_ID = "01a23a41-0c7e-7d2b-9f4e-2b1c0d9e8f71"
VSCODE_ID = "01a23b07-77d0-7a11-8c3e-5d4f6a7b8c90"
ADA_ID = "01a23c58-4b1a-7c02-8d9e-0f1a2b3c4d5e"  # two sub-agents spawned in the same second:
GRACE_ID = "01a23c58-4b1f-7e45-9a0b-1c2d3e4f5a6b"  # their first 12 characters are the same


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def real_home(home):
    home.config("[features]\nmemories = true\n")
    for name in ("windows-cwd.jsonl", "vscode-ide-context.jsonl", "subagent-spawned-ada.jsonl",
                 "subagent-spawned-grace.jsonl"):
        home.add(name, idle_hours=9)
    return home


def _rows(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("│")]


def test_windows_cwd_lists_its_last_folder_as_the_project(capsys, real_home) -> None:
    code, out, _ = run(capsys, "sessions", "--home", str(real_home.root))
    assert code == 0
    [row] = [r for r in _rows(out) if WINDOWS_ID[:8] in r]
    assert row.split("│")[2].strip() == "shop"
    assert "C:\\" not in out


def test_show_takes_a_longer_unique_prefix_where_8_characters_collide(capsys,
                                                                      real_home) -> None:
    root = str(real_home.root)
    code, out, err = run(capsys, "show", ADA_ID[:8], "--home", root)
    assert (code, out) == (1, "") and err.count("\n") == 1
    # the one line names both sessions, by an id long enough to tell them apart, and previews
    assert "matches 2 sessions" in err
    assert ADA_ID[:13] in err and GRACE_ID[:13] in err
    assert "Find every caller of parse_price" in err and "Write the unit tests" in err
    for key in (GRACE_ID[:13], GRACE_ID[:20], GRACE_ID, GRACE_ID.upper()):
        code, out, _ = run(capsys, "show", key, "--json", "--home", root)
        assert code == 0 and json.loads(out)["id"] == GRACE_ID


def test_listing_shows_ids_long_enough_to_be_unique(capsys, real_home) -> None:
    code, out, _ = run(capsys, "sessions", "--home", str(real_home.root))
    assert code == 0
    ids = [r.split("│")[3].strip() for r in _rows(out) if r.split("│")[3].strip()]
    assert {ADA_ID[:13], GRACE_ID[:13], WINDOWS_ID[:13], VSCODE_ID[:13]} <= set(ids)
    assert len(set(ids)) == len(ids)


def test_a_home_without_collisions_keeps_8_character_ids(capsys, home) -> None:
    home.add("windows-cwd.jsonl")
    home.add("vscode-ide-context.jsonl")
    code, out, _ = run(capsys, "sessions", "--home", str(home.root))
    ids = [r.split("│")[3].strip() for r in _rows(out) if r.split("│")[3].strip()]
    assert code == 0 and sorted(ids) == sorted([WINDOWS_ID[:8], VSCODE_ID[:8]])


def test_spawned_sub_agent_reads_as_words_never_json(capsys, real_home) -> None:
    root = str(real_home.root)
    code, out, _ = run(capsys, "sessions", "--json", "--home", root)
    ada = next(d for d in json.loads(out) if d["id"] == ADA_ID)
    assert ada["status"] == "not_interactive"
    assert ada["source_label"] == "sub-agent: Ada"
    assert ada["reason"].startswith("sub-agent (Ada) session: Codex takes memories only from")
    assert "{" not in ada["reason"]
    code, out, _ = run(capsys, "show", ADA_ID, "--home", root)
    assert code == 0
    [source_line] = [line for line in out.splitlines() if " source " in line]
    assert "sub-agent: Ada" in source_line and "{" not in source_line
    assert "{" not in out.split("╰")[0]  # nothing in the header is Codex's raw JSON


def test_vscode_preview_is_the_request_not_the_ide_context(capsys, real_home) -> None:
    code, out, _ = run(capsys, "sessions", "--json", "--home", str(real_home.root))
    vscode = next(d for d in json.loads(out) if d["id"] == VSCODE_ID)
    assert vscode["preview"] == "Why does the cart total round 0.1 + 0.2 wrong? Use integer cents."
    assert vscode["source_label"] == "VS Code"


def test_an_index_from_the_older_scanner_is_read_again(capsys, real_home) -> None:
    """An index written before the preview rule changed holds the wrapper as the preview: the
    scanner's version makes the next listing read the file again."""
    import sqlite3

    root = str(real_home.root)
    assert run(capsys, "sessions", "--home", root)[0] == 0
    db = real_home.root / "memdeck" / "memdeck.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE sessions SET preview = '# Context from my IDE setup: ## Active file'")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'scan_version'")
    conn.commit()
    conn.close()
    code, out, _ = run(capsys, "sessions", "--json", "--home", root)
    vscode = next(d for d in json.loads(out) if d["id"] == VSCODE_ID)
    assert vscode["preview"].startswith("Why does the cart total round")


def test_a_clamped_setting_shows_what_the_file_says(capsys, home) -> None:
    home.config("[features]\nmemories = true\n\n[memories]\nmax_rollout_age_days = 3650\n")
    root = str(home.root)
    code, out, _ = run(capsys, "config", "get", "max_rollout_age_days", "--home", root)
    assert code == 0
    assert out == ("90  # config.toml says 3650; Codex clamps it to 90 (0 to 90)\n")
    code, out, _ = run(capsys, "config", "list", "--home", root)
    assert "max_rollout_age_days = 90  # config.toml says 3650; Codex clamps it" in out
    code, out, _ = run(capsys, "config", "get", "max_rollout_age_days", "--json", "--home", root)
    d = json.loads(out)
    assert (d["value"], d["set"]) == (90, True) and "says 3650" in d["reason"]
    # a value Codex takes as it is says nothing more
    code, out, _ = run(capsys, "config", "get", "min_rollout_idle_hours", "--home", root)
    assert code == 0 and "#" not in out
