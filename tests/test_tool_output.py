"""Tool outputs decoded to text and exit code (engine/codex/tool_output.py), in each shape Codex
has written, and left alone in any other (docs/codex-format.md "Tool outputs").
The shapes shared with the reader are in tests/test_reader_codex_versions.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memdeck.engine.codex.code_mode import NestedCall, nested_calls
from memdeck.engine.codex.tool_output import decode_output, decode_tool_output
from memdeck.engine.codex.transcript import output_title


def test_a_running_unified_exec_command_names_its_session() -> None:
    out = decode_tool_output("Chunk ID: f800eb\nWall time: 1.0024 seconds\n"
                             "Process running with session ID 32244\n"
                             "Original token count: 9\nOutput:\nstarting\n")
    assert (out.text, out.exit_code, out.running, out.session_id) == ("starting\n", None,
                                                                      True, 32244)
    done = decode_tool_output("Chunk ID: f800ec\nWall time: 3.1 seconds\n"
                              "Process exited with code 0\nOriginal token count: 2\nOutput:\nok\n")
    assert (done.exit_code, done.running, done.session_id) == (0, False, None)


def test_windows_line_ends_and_a_padded_envelope() -> None:
    out = decode_tool_output("Exit code: 1\r\nWall time: 0.3 seconds\r\nOutput:\r\nboom\r\n")
    assert (out.text, out.exit_code, out.duration_s) == ("boom\r\n", 1, 0.3)
    env = decode_tool_output("  " + json.dumps({"output": "catch (error) {}",
                                                "metadata": {"exit_code": 0,
                                                             "duration_seconds": 0.4}}))
    assert (env.text, env.exit_code, env.duration_s) == ("catch (error) {}", 0, 0.4)


@pytest.mark.parametrize("raw", [
    '{"output": "x", "metadata": {"exit_code": "1"}}',  # a code that is not a number
    '{"output": "x", "metadata": {"exit_code": true}}',
    '{"output": "x", "metadata": []}',
    "Process exited with code one\nerror",
    "Exit status: 1\nerror: it broke",
    "error: Exit code: 1",  # the words inside the output, not a header
])
def test_an_unknown_shape_gives_no_exit_code(raw: str) -> None:
    assert decode_tool_output(raw).exit_code is None


# -- 0.115-0.118: the `Command:` header (fixtures/rollouts/codex-0.118-exec-command-header.jsonl) --

ROLLOUTS = Path(__file__).parent / "fixtures" / "rollouts"


def outputs_of(name: str) -> dict[int, Any]:
    """line number → the `output` of each tool output line of a captured rollout."""
    out = {}
    for n, line in enumerate((ROLLOUTS / name).read_text().splitlines(), 1):
        p = json.loads(line)["payload"]
        if p.get("type") in ("function_call_output", "custom_tool_call_output"):
            out[n] = p["output"]
    return out


def test_the_command_header_of_0118_is_decoded() -> None:
    outs = outputs_of("codex-0.118-exec-command-header.jsonl")
    failed = decode_tool_output(outs[11])
    assert (failed.exit_code, failed.command) == (1, "/bin/bash -lc 'python3 price_check.py'")
    assert failed.text.startswith("Traceback (most recent call last):\n")
    assert failed.text.endswith("AssertionError: total([1.10, 2.20]) is 3.3000000000000003, "
                                "expected 3.30\n")
    passed = decode_tool_output(outs[19])
    assert (passed.text, passed.exit_code, passed.duration_s) == ("price check passed\n", 0, 0.0)
    running = decode_tool_output(outs[23])  # still running: the session write_stdin names
    assert (running.text, running.exit_code, running.running, running.session_id,
            running.command) == ("", None, True, 90138,
                                 "/bin/bash -lc 'sleep 1 && python3 price_check.py'")
    collected = decode_tool_output(outs[27])  # the write_stdin output names the command too
    assert (collected.text, collected.exit_code, collected.command) == (
        "price check passed\n", 0, "/bin/bash -lc 'sleep 1 && python3 price_check.py'")


def test_a_command_over_several_lines_keeps_them() -> None:
    # captured from codex exec 0.118.0: exec_command {"cmd": "cat <<EOF\nline one\nEOF\nexit 4"}
    raw = ("Command: /bin/bash -lc 'cat <<EOF\nline one\nEOF\nexit 4'\nChunk ID: 952822\n"
           "Wall time: 0.0000 seconds\nProcess exited with code 4\nOriginal token count: 3\n"
           "Output:\nline one\n")
    out = decode_tool_output(raw)
    assert (out.text, out.exit_code) == ("line one\n", 4)
    assert out.command == "/bin/bash -lc 'cat <<EOF\nline one\nEOF\nexit 4'"


@pytest.mark.parametrize("raw", [
    "Command: make\nthe build printed this",  # no header after it
    "Command: echo\nWall time: soon\nOutput:\nx",  # a header line that is not one
])
def test_a_command_line_without_the_header_is_left_alone(raw: str) -> None:
    out = decode_tool_output(raw)
    assert (out.text, out.exit_code, out.command) == (raw, None, None)


# -- 0.146 code mode (fixtures/rollouts/codex-0.146-code-mode-exec.jsonl) -------------------------

def test_a_code_mode_cell_gives_the_result_it_printed() -> None:
    outs = outputs_of("codex-0.146-code-mode-exec.jsonl")
    failed = decode_output(outs[12])  # text(r) of an exec_command that exited 1
    assert failed.exit_code == 1 and failed.cell is not None
    assert failed.cell.status == "completed"
    assert failed.text.startswith("Traceback (most recent call last):\n")
    assert "chunk_id" not in failed.text and "Script completed" not in failed.text
    assert decode_output(outs[19])[:2] == ("price check passed\n", 0)
    patched = decode_output(outs[16])  # text(p) of an apply_patch: `{}`, no exit code
    assert (patched.text, patched.exit_code) == ("{}", None)
    yielded = decode_output(outs[22])  # a plain string: the cell runs on
    assert (yielded.text, yielded.exit_code, yielded.running) == ("", None, True)
    assert yielded.cell is not None and yielded.cell.cell_id == "4"
    waited = decode_output(outs[25])  # the `wait` that collected it
    assert (waited.text, waited.exit_code, waited.running) == ("price check passed\n", 0, False)
    # exec_command still running (session 1613), then write_stdin: one code, the last
    both = decode_output(outs[28])
    assert both.cell is not None
    assert [(r.exit_code, r.session_id) for r in both.cell.results] == [(None, 1613), (0, None)]
    assert (both.text, both.exit_code) == ("price check passed\n", 0)


def test_a_script_that_threw_has_no_exit_code() -> None:
    # captured from codex exec 0.146.0 --enable code_mode: the script threw on exit code 2
    out = decode_output([
        {"type": "input_text", "text": "Script failed\nWall time 0.1 seconds\nOutput:\n"},
        {"type": "input_text", "text": "Script error:\nError: failed with 2: boom\n\n"
                                       "    at exec_main.mjs:2:30"}])
    assert out.exit_code is None and out.cell is not None and out.cell.status == "failed"
    assert out.text == "Script error:\nError: failed with 2: boom\n\n    at exec_main.mjs:2:30"


def test_text_that_only_looks_like_a_cell_is_left_alone() -> None:
    for raw in ("Script completed\nall good", "Script completed\nWall time 1 second\nmore",
                [{"type": "input_text", "text": "Script done\nWall time 0.1 seconds\nOutput:\n"}]):
        out = decode_output(raw)
        assert out.cell is None and out.exit_code is None


def test_the_commands_a_script_ran_are_read_from_its_literals() -> None:
    calls = nested_calls(
        '// tools.exec_command({cmd: "in a comment"})\n'
        'const s = "tools.exec_command({cmd: \'in a string\'})";\n'
        'const r = await tools.exec_command({cmd: "pytest -q \\"tests/a b.py\\"", '
        'yield_time_ms: 250});\n'
        "await tools['exec_command']({'cmd': `make\\tcheck`, workdir: dir});\n"
        "await tools.exec_command({cmd: `echo ${name}`});\n"  # built at run time
        "await tools.write_stdin({session_id: r.session_id, chars: ''});\n"
        "await tools.write_stdin({session_id: 41, chars: ''});\n"
        'await tools.apply_patch("*** Begin Patch\\n*** Add File: a.txt\\n+hi\\n*** End Patch");\n'
        "for (const c of cmds) await tools.exec_command({cmd: c, ...opts});")
    assert calls == (
        NestedCall("exec_command", command='pytest -q "tests/a b.py"'),
        NestedCall("exec_command", command="make\tcheck"),
        NestedCall("exec_command"), NestedCall("write_stdin"),
        NestedCall("write_stdin", session_id=41),
        NestedCall("apply_patch", patch="*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"),
        NestedCall("exec_command"))


SCRIPT_CHARS = list("tools.exec_command({cmd:\"'`$\\u{}D83Dx1, })/*\n")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(SCRIPT_CHARS), max_size=80)
       .map(lambda t: "await tools.exec_command(" + t))
@example('tools.exec_command({cmd: "\\uD83D\\uDE00 \\uD83D"})')
@example("tools.exec_command({cmd: `${")
def test_any_script_text_reads_without_error(js: str) -> None:
    for call in nested_calls(js):
        for text in (call.command, call.patch):
            if text is not None:
                text.encode("utf-8")  # a JS surrogate pair is one character, a lone half "?"
    assert nested_calls('tools.exec_command({cmd: "\\uD83D\\uDE00 \\uD83D"})')[0].command \
        == "\U0001F600 \ufffd"


def test_a_cell_that_printed_several_results_names_each_code() -> None:
    """Two commands' results in one cell (the captured parts of lines 12 and 19): no single
    exit code for the cell, the transcript's title names both."""
    outs = outputs_of("codex-0.146-code-mode-exec.jsonl")
    both = decode_output([outs[12][0], outs[12][1], outs[19][1]])
    assert both.exit_code is None and both.cell is not None
    assert output_title(both.exit_code, both.running, both.cell) == "exit codes 1, 0"
    assert both.text.endswith("expected 3.30\nprice check passed\n")
    failed = decode_output([{"type": "input_text",
                             "text": "Script failed\nWall time 0.1 seconds\nOutput:\n"}])
    assert output_title(failed.exit_code, failed.running, failed.cell) == "script failed"
