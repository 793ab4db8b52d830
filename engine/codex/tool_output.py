"""What a shell or patch tool returned, as text plus exit code
(docs/codex-format.md "Tool outputs").

Codex has stored tool output in these shapes over the years, as the `output` of a
`function_call_output` / `custom_tool_call_output`:

* 0.169 (unified exec): a header, then the output —
  `Chunk ID: 5811ae` / `Wall time: 0.0000 seconds` / `Process exited with code 1` /
  `Original token count: 2` / `Output:` / `tui-out`. A command still running says
  `Process running with session ID 42` instead of an exit code; a later `write_stdin` call
  with that `session_id` returns the rest, with the exit code once it has finished.
* 0.115–0.118 (measured; a user's Codex Desktop sessions of 0.107–0.128 too): the same header
  after a first line `Command: /bin/bash -lc 'pytest -q'`, the shell's argv quoted as a shell
  would, so it can run over several lines (a heredoc); `write_stdin` outputs carry it too.
* code mode (0.146's `code_mode` feature): a list of text parts, `Script completed` /
  `Wall time 0.1 seconds` / `Output:`, then what the script printed, a printed command result
  as its JSON (`codex/code_mode.py`, `decode_output`).
* the freeform shell format of the 0.4x–0.1xx `shell_command` tool: `Exit code: 1` /
  `Wall time: 0.2 seconds` / `Total output lines: 3` / `Output:` / ….
* 0.34–0.58 shell and `apply_patch` up to about 0.126: a JSON document in the string,
  `{"output": "...", "metadata": {"exit_code": 1, "duration_seconds": 0.4}}`.

Anything else is returned unchanged with no exit code. Only the transcript reader and the
command outcomes call this; the index scanner never decodes outputs.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from .code_mode import Cell, decode_cell

_EXIT = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)\s*$")
_RUNNING = re.compile(r"Process running with session ID\s*(\d+)\s*$")
_WALL = re.compile(r"Wall time:\s*([0-9.]+)\s*seconds?\s*$")
_HEADER_PREFIXES = ("Chunk ID:", "Wall time:", "Process exited with code", "Exit code:",
                    "Process running with session ID", "Original token count:",
                    "Total output lines:")
_MAX_HEADER_LINES = 8
_JSON_KEYS = frozenset({"output", "metadata"})
_COMMAND = "Command: "
_AFTER_COMMAND = ("\nChunk ID: ", "\nWall time: ")  # the line after the command, 0.115-0.118


class DecodedOutput(NamedTuple):
    text: str  # what the tool printed, header or JSON envelope removed
    exit_code: int | None
    duration_s: float | None
    running: bool = False  # a unified-exec command (or code cell) still running
    session_id: int | None = None  # …and the session a later `write_stdin` call names
    command: str | None = None  # 0.115-0.118: the `Command:` line, the shell's argv
    cell: Cell | None = None  # code mode: the script's status and each result it printed


def output_text(output: Any) -> str:
    """Tool output is a plain string or an array of content parts."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        parts = []
        for part in output:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif part.get("type") in ("input_image", "image"):
                    parts.append("[image]")
        return "\n".join(parts)
    if isinstance(output, dict):  # very old shape: {"content": …}
        return output_text(output.get("content"))
    return ""


def decode_output(output: Any) -> DecodedOutput:
    """`decode_tool_output` for an item's `output` as Codex stored it (a string or a list of
    parts), code mode's cells included."""
    cell = decode_cell(output)
    if cell is None:
        return decode_tool_output(output_text(output))
    codes = [r.exit_code for r in cell.results if r.exit_code is not None]
    return DecodedOutput(cell.text, codes[0] if len(codes) == 1 else None, cell.wall_s,
                         cell.status == "running", cell=cell)


def decode_tool_output(text: str) -> DecodedOutput:
    """Text and exit code of one tool output; anything not in a known shape comes back
    unchanged with no exit code (never a guessed one)."""
    if text.lstrip().startswith("{"):
        decoded = _json_envelope(text)
        if decoded is not None:
            return decoded
    if text.startswith(_HEADER_PREFIXES):
        decoded = _header(text)
        if decoded is not None:
            return decoded
    if text.startswith(_COMMAND):
        decoded = _command_header(text)
        if decoded is not None:
            return decoded
    return DecodedOutput(text, None, None)


def _command_header(text: str) -> DecodedOutput | None:
    """`Command: <argv>` then the unified-exec header. The argv may span lines, so the header
    is the first place after it that reads as a whole one."""
    pos = len(_COMMAND)
    while True:
        at = min((i for i in (text.find(s, pos) for s in _AFTER_COMMAND) if i >= 0),
                 default=-1)
        if at < 0:
            return None
        decoded = _header(text[at + 1:])
        # as written: a wall time, and an exit code or a running session, always
        if decoded is not None and decoded.duration_s is not None and (
                decoded.exit_code is not None or decoded.running):
            return decoded._replace(command=text[len(_COMMAND):at].rstrip("\r"))
        pos = at + 1


def _json_envelope(text: str) -> DecodedOutput | None:
    try:
        obj: Any = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("output"), str):
        return None
    if not set(obj) <= _JSON_KEYS:
        return None
    meta = obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        return None
    meta = meta or {}
    code = meta.get("exit_code")
    dur = meta.get("duration_seconds")
    return DecodedOutput(
        obj["output"],
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        float(dur) if isinstance(dur, (int, float)) and not isinstance(dur, bool) else None,
    )


def _header(text: str) -> DecodedOutput | None:
    """A block of known header lines, ended by `Output:` (or, in short forms, by the first
    line that is not a header line once an exit code has been seen)."""
    code: int | None = None
    dur: float | None = None
    running = False
    session: int | None = None
    pos = 0
    for _ in range(_MAX_HEADER_LINES):
        end = text.find("\n", pos)
        line = text[pos:] if end < 0 else text[pos:end]
        nxt = len(text) if end < 0 else end + 1
        stripped = line.rstrip("\r")
        if stripped == "Output:":
            return DecodedOutput(text[nxt:], code, dur, running, session)
        if not stripped.startswith(_HEADER_PREFIXES):
            break
        m = _EXIT.match(stripped)
        if m:
            code = int(m.group(1))
        elif stripped.startswith("Process running with session ID"):
            running = True
            r = _RUNNING.match(stripped)
            session = int(r.group(1)) if r else None
        else:
            w = _WALL.match(stripped)
            if w:
                try:
                    dur = float(w.group(1))
                except ValueError:
                    pass
        pos = nxt
        if end < 0:
            break
    if code is not None:  # "Process exited with code 2\n<output>" with no Output: line
        return DecodedOutput(text[pos:], code, dur, running, session)
    return None
