"""`memdeck show` on real rollout shapes: what a reader sees of base instructions, old
JSON-encoded tool outputs, images, compactions, assistant phases and the rollout path
(docs/codex-format.md "Transcript markers")."""

from __future__ import annotations

import json

import pytest

from memdeck.tui.cli import main


def show(capsys, home, *argv: str) -> str:
    code = main(["show", *argv, "--home", str(home.root)])
    out, _ = capsys.readouterr()
    assert code == 0
    return out


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")


def test_base_instructions_are_one_line(capsys, home) -> None:
    home.add("codex-0.169-tui.jsonl")
    out = show(capsys, home, "01a2393e")
    assert "developer base instructions (173 lines)  line 4" in out
    assert "# Autonomy and persistence" not in out  # a heading deep in the instructions
    assert "<skills_instructions>" in out  # other developer text is still shown
    items = json.loads(show(capsys, home, "01a2393e", "--json"))["items"]
    base = next(i for i in items if i["line"] == 4)
    assert base["title"] == "base instructions" and "# Autonomy and persistence" in base["text"]


def test_json_encoded_tool_outputs_are_decoded_with_their_exit_code(capsys, home) -> None:
    home.add("codex-0.34-no-source.jsonl")
    out = show(capsys, home, "5b8c2f4e")
    assert "output exit code 1  line 11\nimported 41 rows\nskipped row 7:" in out
    assert "output exit code 0  line 19\nSuccess. Updated the following files:\n" in out
    assert '"metadata"' not in out and "\\n" not in out
    # the 0.34 apply_patch call is the patch itself, not its JSON argv
    assert "\n*** Update File: ledger/import.py\n" in out


def test_each_image_is_one_marker_and_no_wrapper_tag_is_left(capsys, home) -> None:
    home.add("images-and-compaction.jsonl")
    out = show(capsys, home, "01a23c41")
    assert "<image" not in out and "</image>" not in out
    # one attached with its image, two whose images were dropped
    assert out.count("[image]") == 3
    assert out.index("[image]  line 4") < out.index("The checkout page shows this error.")


def test_a_compaction_is_one_marker_where_it_happened(capsys, home) -> None:
    home.add("images-and-compaction.jsonl")
    out = show(capsys, home, "01a23c41")
    assert out.count("context compacted here") == 1  # `compacted` line + its event: one
    assert out.index("without the CSRF token") < out.index("context compacted here  line 11") \
        < out.index("Still broken after the fix")


def test_the_assistant_role_is_printed_once(capsys, home) -> None:
    home.add("images-and-compaction.jsonl")
    out = show(capsys, home, "01a23c41")
    assert "assistant commentary  line 8" in out
    assert "assistant final_answer  line 10" in out
    assert "assistant assistant" not in out


def test_the_whole_rollout_path_is_printed_to_copy(capsys, home, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    path = home.add("cli-preferences.jsonl")
    assert len(str(path)) > 60
    out = show(capsys, home, "01a23054")
    assert f"rollout {path}\n" in out  # one line: the terminal wraps it, nothing is cut
