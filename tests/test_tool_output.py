"""Tool outputs decoded to text and exit code (engine/codex/tool_output.py), in each shape Codex
has written, and left alone in any other (docs/codex-format.md "Tool outputs").
The shapes shared with the reader are in tests/test_reader_codex_versions.py."""

from __future__ import annotations

import json

import pytest

from memdeck.engine.codex.tool_output import decode_tool_output


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
