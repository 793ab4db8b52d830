"""What a model call returns and how its output is checked; no dependency on `openai`.

Shared by the openai backend and everything that consumes model output (phase 1, the
phase-2 agent), so the rules for a valid reply live in one place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import MemdeckError
from ..redact import redact

MAX_CONTENT_CHARS = 1024 * 1024  # assistant text or tool arguments, per reply
OUTSIDE_WINDOW = 1 << 16  # how much of an outside text is redacted before it is cut to a line


# -- what a call returns, and how its output is checked ---------------------------------------
# docs/codex-format.md "Phase 1 output": phase 1's strict output schema, byte for byte Codex's.
STAGE_ONE_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"rollout_summary": {"type": "string"},
                   "rollout_slug": {"type": ["string", "null"]},
                   "raw_memory": {"type": "string"}},
    "required": ["rollout_summary", "rollout_slug", "raw_memory"],
    "additionalProperties": False,
}
# docs/codex-format.md "Phase 1 output": the V2 schema has no raw_memory and a slug that is
# always a string.
STAGE_ONE_OUTPUT_SCHEMA_V2: dict[str, Any] = {
    "type": "object",
    "properties": {"rollout_summary": {"type": "string"}, "rollout_slug": {"type": "string"}},
    "required": ["rollout_summary", "rollout_slug"],
    "additionalProperties": False,
}


class ModelCallError(MemdeckError):
    """A model call failed. `str()` is one line naming what happened and where, redacted:
    it quotes what the endpoint sent (an error body, a refusal, a key it made up), which is
    stored (the job's `last_error`, the call log) and printed.

    `kind`: timeout | connection | rate_limit | server | rejected | bad_reply | output | client.
    Token counts are filled in when the model answered (and so spent them) but the answer was
    unusable, so the call log stays honest.
    """

    def __init__(self, message: str, *, kind: str = "client", duration_ms: int = 0,
                 input_tokens: int = 0, output_tokens: int = 0, model: str | None = None) -> None:
        super().__init__(redact(message))
        self.kind = kind
        self.duration_ms = duration_ms
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.model = model


class ModelOutputError(ModelCallError):
    """The model answered, but not with what the contract asks (Codex: the job fails)."""

    def __init__(self, message: str, **kw: Any) -> None:
        super().__init__(message, **{"kind": "output", **kw})


@dataclass(frozen=True)
class ModelReply:
    text: str
    parsed: dict[str, Any]
    input_tokens: int  # 0 when the server reports no usage
    output_tokens: int
    duration_ms: int  # wall time including the client's retries
    model: str  # as the server names it


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]  # {} when `error` is set
    raw_arguments: str
    error: str | None = None  # why the call is unusable; send `tool_result(id, {"error": …})`


@dataclass(frozen=True)
class ToolTurn:
    text: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    input_tokens: int
    output_tokens: int
    duration_ms: int
    model: str

    def assistant_message(self) -> dict[str, Any]:
        """The assistant message to append to `messages` before the tool results."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            msg["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                "name": c.name, "arguments": c.raw_arguments}} for c in self.tool_calls]
        return msg


def tool_result(call_id: str, content: str | dict[str, Any]) -> dict[str, Any]:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def one_line(text: str, limit: int) -> str:
    """`text` flattened and cut to `limit` characters (not redacted: see `outside_text`)."""
    flat = " ".join(text[: limit * 4].split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def outside_text(text: str, limit: int) -> str:
    """Text that came from outside (a server's body, a model's words), redacted and then cut
    to one line: redacting first, so a cut never leaves the head of a secret unrecognised."""
    return one_line(redact(text[:OUTSIDE_WINDOW]), limit)


def _strict_loads(text: str) -> Any:
    """json.loads as serde_json reads it: no NaN/Infinity, no duplicate keys."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                raise ValueError(f"duplicate key {k!r}")
            out[k] = v
        return out

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=no_constant)


def _json_kind(v: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(v), "a number")


_STAGE_ONE_KEYS = ("rollout_summary", "rollout_slug", "raw_memory")


def parse_stage_one_output(text: str) -> dict[str, Any]:
    """Codex's V1 phase-1 contract (docs/codex-format.md "Phase 1 output"): exactly
    rollout_summary (str), rollout_slug (str | null | missing) and raw_memory (str); anything
    else raises ModelOutputError."""
    return _parse_stage_one(text, _STAGE_ONE_KEYS, ("rollout_summary", "raw_memory"), True)


def parse_stage_one_output_v2(text: str) -> dict[str, Any]:
    """The V2 contract (docs/codex-format.md "Phase 1 output"): exactly rollout_summary and
    rollout_slug, both strings."""
    return _parse_stage_one(text, ("rollout_summary", "rollout_slug"),
                            ("rollout_summary", "rollout_slug"), False)


def _parse_stage_one(text: str, keys: tuple[str, ...], required: tuple[str, ...],
                     null_slug: bool) -> dict[str, Any]:
    try:
        obj = _strict_loads(text)
    except (ValueError, RecursionError) as e:
        raise ModelOutputError(f"output is not valid JSON ({one_line(str(e), 80)})") from None
    if not isinstance(obj, dict):
        raise ModelOutputError(f"output is {_json_kind(obj)}, not an object")
    unknown = [k for k in obj if k not in keys]
    if unknown:
        raise ModelOutputError(f"unknown key {unknown[0]!r} (allowed: "
                               + ", ".join(keys) + ")")
    for key in required:
        if key not in obj:
            raise ModelOutputError(f"missing key {key!r}")
    for key in keys:
        v = obj.get(key)
        if key == "rollout_slug" and v is None and null_slug:
            continue
        problem = text_problem(v)
        if problem:
            raise ModelOutputError(f"{key} {problem}")
    return {k: obj.get(k) for k in keys}


def text_problem(value: object) -> str:
    """Why a value the model sent is not text memdeck can write ("" when it is): not a
    string, or a string that is not valid Unicode (an unpaired surrogate)."""
    if not isinstance(value, str):
        return f"must be a string, got {_json_kind(value)}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "holds an unpaired surrogate (invalid Unicode)"
    return ""


def parse_tool_calls(raw: list[Any]) -> tuple[ToolCall, ...]:
    calls = []
    for i, item in enumerate(raw):
        c: dict[str, Any] = item if isinstance(item, dict) else {}
        fn: dict[str, Any] = c["function"] if isinstance(c.get("function"), dict) else {}
        cid = c["id"] if isinstance(c.get("id"), str) else f"call_{i}"
        name = fn["name"] if isinstance(fn.get("name"), str) else ""
        value = fn.get("arguments")
        args = value if isinstance(value, str) else "" if value is None else json.dumps(value)
        error: str | None = None
        parsed: dict[str, Any] = {}
        if c.get("type", "function") != "function" or not name:
            error = "not a function call with a name"
        else:
            try:
                value = _strict_loads(args or "{}")
            except (ValueError, RecursionError) as e:
                error = f"arguments are not valid JSON ({one_line(str(e), 80)})"
            else:
                if isinstance(value, dict):
                    parsed = value
                else:
                    error = f"arguments must be a JSON object, got {_json_kind(value)}"
        calls.append(ToolCall(cid, name, parsed, args, error))
    return tuple(calls)


