"""`memdeck show` on real rollout shapes: what a reader sees of base instructions, old
JSON-encoded tool outputs, images, compactions, assistant phases and the rollout path
(docs/codex-format.md "Transcript markers")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdeck.tui.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "rollouts"


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


def test_the_command_header_of_0118_gives_each_output_its_exit_code(capsys, home) -> None:
    home.add("codex-0.118-exec-command-header.jsonl")
    out = show(capsys, home, "01a2423d-8760")
    assert "output exit code 1  line 11\nTraceback (most recent call last):\n" in out
    assert "output exit code 0  line 19\nprice check passed\n" in out
    assert "output still running  line 23" in out
    assert "output exit code 0  line 27\nprice check passed\n" in out  # write_stdin's
    assert "Command: " not in out and "Chunk ID" not in out
    items = json.loads(show(capsys, home, "01a2423d-8760", "--json"))["items"]
    outputs = [i for i in items if i["kind"] == "tool_output"]
    assert [(o["line"], o["exit_code"]) for o in outputs] == [
        (11, 1), (15, 0), (19, 0), (23, None), (27, 0)]  # line 15: apply_patch's envelope
    assert outputs[0]["command"] == "/bin/bash -lc 'python3 price_check.py'"
    assert "command" not in outputs[1]


def test_a_code_mode_cell_shows_what_its_command_printed(capsys, home) -> None:
    home.add("codex-0.146-code-mode-exec.jsonl")
    out = show(capsys, home, "01a2423d-b951")
    assert "tool exec  line 11\nconst r = await tools.exec_command({cmd: " in out
    assert "output exit code 1  line 12\nTraceback (most recent call last):\n" in out
    assert "output exit code 0  line 19\nprice check passed\n" in out
    assert "output still running  line 22" in out
    assert "output exit code 0  line 25\nprice check passed\n" in out  # the `wait`
    assert "chunk_id" not in out and "Script completed" not in out
    items = json.loads(show(capsys, home, "01a2423d-b951", "--json"))["items"]
    outputs = {i["line"]: i for i in items if i["kind"] == "tool_output"}
    assert {n: o["exit_code"] for n, o in outputs.items()} == {
        12: 1, 16: None, 19: 0, 22: None, 25: 0, 28: 0}
    assert outputs[16]["text"] == "{}"  # what the patch cell printed
    assert outputs[28]["text"] == "price check passed\n"


def test_a_code_mode_script_is_shown_as_javascript() -> None:
    from memdeck.engine.codex.rollout import read_rollout
    from memdeck.engine.codex.transcript import transcript
    from memdeck.tui.render import tool_call_code

    calls = [e for e in transcript(read_rollout(FIXTURES / "codex-0.146-code-mode-exec.jsonl"))
             if e.kind == "tool_call"]
    assert [tool_call_code(e)[1] for e in calls] == [
        "javascript", "javascript", "javascript", "javascript", "json", "javascript"]
    patch = [e for e in transcript(read_rollout(FIXTURES / "codex-0.118-exec-command-header.jsonl"))
             if e.title == "apply_patch"]
    assert [tool_call_code(e)[1] for e in patch] == ["diff"]
