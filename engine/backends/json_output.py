"""How a JSON reply is asked for: Codex's strict JSON schema, or JSON mode for the servers
without one.

OpenAI, vLLM, Ollama and LM Studio take `response_format: json_schema` (strict); llama.cpp's
Python server (`llama-cpp-python`) and older proxies refuse it, some with HTTP 400, some with
500, naming `response_format`. Those take `json_object`, and llama-cpp-python turns the
`schema` given with it into a grammar, so the reply still has the schema's shape; a server
that ignores the schema still gets it in the system prompt. In JSON mode a reply that breaks
the contract is sent back once with what was wrong; a second bad reply fails the job with the
reason, as a strict-schema reply that breaks it does at once (Codex's rule).

`memdeck.output_mode`: `auto` (strict first, JSON mode for the rest of the run once the
endpoint refuses it), `json_schema` or `json_object`.
"""

from __future__ import annotations

import json
from typing import Any

from .replies import ModelCallError

MODES = ("auto", "json_schema", "json_object")


def response_format(mode: str, schema: dict[str, Any], name: str) -> dict[str, Any]:
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema,
                                                   "strict": True}}


def with_schema_instruction(system: str, schema: dict[str, Any]) -> str:
    """The system prompt for JSON mode: the contract a strict schema would have enforced."""
    return (f"{system}\n\nReply with one JSON object and nothing else. It must match this "
            f"JSON schema exactly (every required field present, no others):\n"
            f"{json.dumps(schema, ensure_ascii=False)}")


def correction(error: str) -> str:
    """The user message that sends a bad JSON-mode reply back, once."""
    return (f"That reply is not usable: {error}. Reply again with only the JSON object, "
            "matching the schema.")


def refuses_json_schema(e: ModelCallError) -> bool:
    """The endpoint refused the request because of its `response_format` (not the model, the
    key or the network)."""
    text = str(e).lower()
    return e.kind in ("rejected", "server") and (
        "response_format" in text or "json_schema" in text or "response format" in text)


def lenient_json(text: str) -> str:
    """`text` re-serialised when it is JSON only but for control characters inside strings
    (a raw line break or tab, which small local models write and JSON forbids); else as is,
    for the contract's own check to name what is wrong."""
    try:
        json.loads(text)
        return text
    except ValueError:
        pass
    try:
        return json.dumps(json.loads(text, strict=False), ensure_ascii=False)
    except (ValueError, RecursionError):
        return text
