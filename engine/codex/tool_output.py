"""What a shell or patch tool returned, as text plus exit code
(docs/codex-format.md "Tool outputs").

Codex has stored tool output in three shapes over the years, all as the string `output` of a
`function_call_output` / `custom_tool_call_output`:

* 0.169 (unified exec): a header, then the output —
  `Chunk ID: 5811ae` / `Wall time: 0.0000 seconds` / `Process exited with code 1` /
  `Original token count: 2` / `Output:` / `tui-out`. A command still running says
  `Process running with session ID 42` instead of an exit code; a later `write_stdin` call
  with that `session_id` returns the rest, with the exit code once it has finished.
* the freeform shell format of the 0.4x–0.1xx `shell_command` tool: `Exit code: 1` /
  `Wall time: 0.2 seconds` / `Total output lines: 3` / `Output:` / ….
* 0.34–0.58 shell and `apply_patch` up to about 0.126: a JSON document in the string,
  `{"output": "...", "metadata": {"exit_code": 1, "duration_seconds": 0.4}}`.

Anything else is returned unchanged with no exit code. Only the transcript reader calls this;
the index scanner never decodes outputs.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

_EXIT = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)\s*$")
_RUNNING = re.compile(r"Process running with session ID\s*(\d+)\s*$")
_WALL = re.compile(r"Wall time:\s*([0-9.]+)\s*seconds?\s*$")
_HEADER_PREFIXES = ("Chunk ID:", "Wall time:", "Process exited with code", "Exit code:",
                    "Process running with session ID", "Original token count:",
                    "Total output lines:")
_MAX_HEADER_LINES = 8
_JSON_KEYS = frozenset({"output", "metadata"})


class DecodedOutput(NamedTuple):
    text: str  # what the tool printed, header or JSON envelope removed
    exit_code: int | None
    duration_s: float | None
    running: bool = False  # a unified-exec command still running when this chunk was taken
    session_id: int | None = None  # …and the session a later `write_stdin` call names


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
    return DecodedOutput(text, None, None)


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
