"""What is wrong with a rollout line, or with a whole rollout file, in the words memdeck shows.

The index scanner (`index/scan.py`) and the full reader (`codex/rollout.py`) judge the same
bytes by the same rules. Both take the kind and the wording of every finding from here, so the
session listing and the transcript describe a bad line, or an unusable file, in the same words.

A line problem is a `kind` (a stable word the tests and the JSON output use) and a `message`
for a person. A file problem is one sentence saying why the file as a whole cannot be used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .jsonfast import BOM, reject_constant

# -- kinds of bad line -------------------------------------------------------------------------
INVALID_JSON = "invalid_json"
INVALID_UTF8 = "invalid_utf8"
NUL_BYTES = "nul_bytes"
TOO_LONG = "too_long"
NOT_AN_OBJECT = "not_an_object"
NO_TYPE = "no_type"

# -- why a whole file cannot be used -----------------------------------------------------------
BINARY_FILE = "binary data (NUL bytes), not a rollout"
EMPTY_FILE = "empty file"
FIRST_LINE_PENDING = "nothing complete yet: the first line is still being written"
NO_SESSION_META = "no session_meta line: not a Codex rollout"
# readable, but listed as unusable: Codex's memory pipeline reads only enveloped rollouts
LEGACY_FORMAT = "legacy rollout format (before Aug 2025): Codex cannot use it for memories"


@dataclass(frozen=True)
class LineProblem:
    line_no: int
    kind: str  # one of the kinds above
    message: str

    def __str__(self) -> str:
        return f"line {self.line_no}: {self.message}"


def too_long(size: int, max_line: int) -> tuple[str, str]:
    """(kind, message) for a line of `size` bytes skipped for being over `max_line`."""
    return TOO_LONG, f"{size / 1e6:.1f} MB line skipped (limit {max_line // (1 << 20)} MiB)"


def not_an_object(value: object) -> tuple[str, str]:
    """(kind, message) for a line holding valid JSON that is not an object."""
    return NOT_AN_OBJECT, f"a JSON {type(value).__name__}, not a rollout record"


def no_type() -> tuple[str, str]:
    """(kind, message) for a JSON object without a string `type`."""
    return NO_TYPE, "no `type`: not a rollout record"


def describe_bad_line(line: bytes) -> tuple[str, str]:
    """(kind, message) for a line the validator (`jsonfast.line_type`) refused."""
    if line[:3] == BOM:
        return INVALID_JSON, "invalid JSON: starts with a byte-order mark"
    nul = line.find(b"\x00")
    if nul >= 0:
        return NUL_BYTES, f"NUL byte at column {nul + 1}"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return INVALID_UTF8, f"invalid UTF-8 at byte {e.start + 1}"
    try:
        obj = json.loads(text, parse_constant=reject_constant)  # its messages say where
    except RecursionError:
        return INVALID_JSON, "JSON nested too deeply"
    except ValueError as e:
        msg = getattr(e, "msg", str(e))
        col = getattr(e, "colno", None)
        return INVALID_JSON, f"invalid JSON: {msg}" + (f" (column {col})" if col else "")
    if not isinstance(obj, dict):
        return not_an_object(obj)
    # simdjson refused what json accepted: depth or number limits
    return INVALID_JSON, "invalid JSON (rejected by the strict parser)"


def file_problem(stream_error: str | None, has_thread: bool, has_content: bool,
                 pending_bytes: int) -> str | None:
    """Why the file as a whole cannot be used, or None when it can.

    `stream_error`: a read or decompression error that stopped the stream; `has_thread`: a
    session_meta line with an id was read; `has_content`: a non-blank line was read;
    `pending_bytes`: the size of an unterminated last line."""
    if stream_error:
        return stream_error
    if has_thread:
        return None
    if not has_content:
        return FIRST_LINE_PENDING if pending_bytes else EMPTY_FILE
    return NO_SESSION_META
