"""Fast JSON validation and strict decoding for rollout lines (why a line is bad, in words, is
`line_problems`).

simdjson validates (UTF-8 included) at over 1 GB/s without building Python objects, which is
what lets a cold index of a gigabyte of rollouts stay within a small multiple of `grep`. When
the extension is missing memdeck falls back to the standard library, slower but identical in
what it accepts (strict RFC 8259: no NaN, no trailing garbage).
"""

from __future__ import annotations

import json
import threading
from typing import Any, Literal

BOM = b"\xef\xbb\xbf"

# What `line_type` makes of a line: the envelope's `type` string; None for a JSON object
# without one (or a value that is not an object); False when the line is not valid JSON.
LineType = str | None | Literal[False]


def is_blank(line: bytes) -> bool:
    """Codex skips lines that are empty once trimmed (Rust's `trim`: any ASCII whitespace)."""
    return not line.strip()

try:  # pragma: no cover - exercised by whichever is installed
    import simdjson as _simdjson

    _OBJECT = _simdjson.Object
    _ARRAY = _simdjson.Array
    _local = threading.local()  # a simdjson Parser must not be shared between threads

    def _parser() -> _simdjson.Parser:
        """This thread's parser, made on first use."""
        parser: _simdjson.Parser | None = getattr(_local, "parser", None)
        if parser is None:
            parser = _local.parser = _simdjson.Parser()
        return parser

    def line_type(line: bytes) -> LineType:
        """The envelope's `type` string; None for a JSON object without one; False when invalid."""
        if line[:3] == BOM:  # simdjson skips a byte-order mark; Codex's parser does not
            return False
        try:
            doc = _parser().parse(line)
        except Exception:
            return False
        try:
            if not isinstance(doc, _OBJECT):
                return None
            t = doc.get("type")
            return t if isinstance(t, str) else None
        finally:
            del doc

    def chunk_types(data: bytes) -> list[str] | None:
        """The envelope type of every line of `data`, or None when any line needs a closer look.

        The lines are validated together as one JSON array: valid, exactly one element per
        line, each an object with a string `type`. Anything else (a bad or blank line, a line
        holding two values, two broken lines that would join into one value) returns None
        and the caller checks line by line. Lines are joined with `\n,`: the newline kept in
        place makes a line break inside a string invalid JSON, and the line count comes free
        from the length difference, with no extra pass over the bytes.
        """
        parser = _parser()
        try:
            joined = data.replace(b"\n", b"\n,")
            n_lines = len(joined) - len(data) + 1
            doc = parser.parse(b"".join((b"[", joined, b"]")))
        except Exception:
            return None
        try:
            if not isinstance(doc, _ARRAY) or len(doc) != n_lines:
                return None
            # an element that is not an object, or has no string `type`, is left out
            types = [t for el in doc if isinstance(el, _OBJECT)
                     and isinstance(t := el.get("type"), str)]
            return types if len(types) == n_lines else None
        finally:
            del doc  # every proxy must be gone before the parser is reused

    BACKEND = "simdjson"
except ImportError:  # pragma: no cover
    def chunk_types(data: bytes) -> list[str] | None:
        return None

    def line_type(line: bytes) -> LineType:
        try:
            obj = json.loads(line, parse_constant=reject_constant)
        except (ValueError, RecursionError):
            return False
        if not isinstance(obj, dict):
            return None
        t = obj.get("type")
        return t if isinstance(t, str) else None

    BACKEND = "json"


def reject_constant(name: str) -> Any:
    """`parse_constant` for the standard library's json: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


try:
    import orjson as _orjson

    def loads(line: bytes | str) -> Any:
        """Strict decode into Python objects (RFC 8259: no NaN, no trailing data)."""
        try:
            return _orjson.loads(line)
        except _orjson.JSONDecodeError as e:
            raise ValueError(str(e)) from None
except ImportError:  # pragma: no cover
    def loads(line: bytes | str) -> Any:
        return json.loads(line, parse_constant=reject_constant)
