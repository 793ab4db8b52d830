"""What the fake Responses server records and answers (see fake_responses.py).

`Request` is one recorded request (with `kind`: turn / title / phase1 / phase2 / other);
`Reply` is one scripted answer, built with `text`, `call`, `custom_call`, `json_text`,
`reply`, `http_error`, `phase2_write`; `sse_events` turns a reply into the SSE events Codex
0.171 reads.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

PHASE1_SCHEMA_NAME = "codex_output_schema"
CONSOLIDATION_SUBAGENT = "memory_consolidation"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float
    kind: str

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def input(self) -> list[dict[str, Any]]:
        items = self.body.get("input") if isinstance(self.body, dict) else None
        return items if isinstance(items, list) else []

    def schema(self) -> dict[str, Any] | None:
        """The json_schema Codex asked for in `text.format`, if any."""
        fmt = (self.body.get("text") or {}).get("format") if isinstance(self.body, dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return fmt.get("schema")
        return None

    def input_texts(self, role: str | None = None) -> list[str]:
        """The text of every message input item (optionally of one role), in order."""
        out = []
        for item in self.input:
            if item.get("type", "message") != "message" or (role and item.get("role") != role):
                continue
            content = item.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out.extend(p.get("text", "") for p in content if isinstance(p, dict))
        return out

    def all_text(self) -> str:
        """Every string in the body, joined: for `assert "…" in req.all_text()`."""
        return "\n".join(_strings(self.body))


@dataclass(frozen=True)
class Reply:
    """What one request gets. `items`: Responses-API output items; `status` != 200: an error."""

    items: tuple[dict[str, Any], ...] = ()
    delay: float = 0.0
    status: int = 200
    error: str = ""
    usage: tuple[int, int] = (120, 12)  # input_tokens, output_tokens


_ids = itertools.count(1)

# Artifacts Codex 0.171's phase-2 validation accepts (measured): V2 wants `v1` and the four
# headings in memory_summary.md; V1 also wants MEMORY.md.
VALID_SUMMARY = ("v1\n## User Profile\n- fake profile\n\n## User preferences\n- fake preference\n"
                 "\n## General Tips\n- fake tip\n\n## What's in Memory\n- fake entry\n")
VALID_MEMORY_MD = "# Task Group: fake\napplies_to: cwd=/fake\n\n- fake memory\n"


def valid_phase2_files(version: str) -> dict[str, str]:
    """Files for `FakeResponses.phase2_files` that make phase 2 end `done` on a fresh root."""
    files = {"memory_summary.md": VALID_SUMMARY}
    if version == "v1":
        files["MEMORY.md"] = VALID_MEMORY_MD
    return files


def message_item(text_: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": f"msg_{next(_ids)}",
            "status": "completed",
            "content": [{"type": "output_text", "text": text_, "annotations": []}]}


def call_item(name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    n = next(_ids)
    return {"type": "function_call", "id": f"fc_{n}", "call_id": call_id or f"call_{n}",
            "name": name, "arguments": args, "status": "completed"}


def custom_call_item(name: str, input_: str, call_id: str | None = None) -> dict[str, Any]:
    n = next(_ids)
    return {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": call_id or f"call_{n}",
            "name": name, "input": input_, "status": "completed"}


def add_files_patch(files: dict[str, str]) -> str:
    """An apply_patch text adding each file (path relative to the agent's cwd)."""
    out = ["*** Begin Patch"]
    for path, content in files.items():
        out.append(f"*** Add File: {path}")
        out += ["+" + line for line in content.splitlines()]
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


def reply(*items: dict[str, Any], **kw: Any) -> Reply:
    return Reply(items=tuple(items), **kw)


def text(s: str, **kw: Any) -> Reply:
    return Reply(items=(message_item(s),), **kw)


def json_text(obj: Any, **kw: Any) -> Reply:
    return text(obj if isinstance(obj, str) else json.dumps(obj), **kw)


def call(name: str, arguments: Any, **kw: Any) -> Reply:
    """A tool call, e.g. call("exec_command", {"cmd": "echo hi"})."""
    return Reply(items=(call_item(name, arguments),), **kw)


def custom_call(name: str, input_: str, **kw: Any) -> Reply:
    """A freeform tool call, e.g. custom_call("exec", "await tools.apply_patch(...)")."""
    return Reply(items=(custom_call_item(name, input_),), **kw)


def phase2_write(files: dict[str, str], **kw: Any) -> Reply:
    """What makes Codex's consolidation agent write files: its code-mode `exec` tool running
    `await tools.apply_patch(<Add File patch>)` in the memory root (new files only)."""
    js = f"await tools.apply_patch({json.dumps(add_files_patch(files))});"
    return custom_call("exec", js, **kw)


def http_error(status: int, message: str = "fake_responses: scripted error", **kw: Any) -> Reply:
    return Reply(status=status, error=message, **kw)


def classify(path: str, headers: dict[str, str], body: Any) -> str:
    if not path.split("?")[0].rstrip("/").endswith("/responses"):
        return "other"
    if headers.get("x-openai-subagent") == CONSOLIDATION_SUBAGENT:
        return "phase2"
    fmt = (body.get("text") or {}).get("format") if isinstance(body, dict) else None
    if isinstance(fmt, dict) and fmt.get("name") == PHASE1_SCHEMA_NAME:
        props = (fmt.get("schema") or {}).get("properties") or {}
        if "rollout_summary" in props:
            return "phase1"
        if "title" in props:
            return "title"
    return "turn"


def schema_instance(schema: dict[str, Any] | None) -> Any:
    """A minimal value valid for a simple JSON schema (objects, strings, numbers, enums)."""
    schema = schema or {}
    if "enum" in schema:
        return schema["enum"][0]
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    if t == "object":
        return {k: schema_instance(v) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return 0
    if t == "boolean":
        return False
    if t == "null":
        return None
    return "fake"


def phase1_answer(schema: dict[str, Any] | None, summary: str = "fake summary",
                  slug: str | None = "fake-slug",
                  raw_memory: str = "fake raw memory") -> dict[str, Any]:
    """Valid phase-1 JSON for the schema Codex sent (only its properties)."""
    props = (schema or {}).get("properties") or {
        "raw_memory": {}, "rollout_summary": {}, "rollout_slug": {}}
    values = {"raw_memory": raw_memory, "rollout_summary": summary, "rollout_slug": slug}
    return {k: values.get(k, "") for k in props}


def _strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def sse_events(rep: Reply, response_id: str, model: str) -> Iterator[dict[str, Any]]:
    """The event sequence for one successful reply, in the order Codex expects."""
    base = {"id": response_id, "object": "response", "created_at": int(time.time()),
            "model": model, "status": "in_progress", "output": []}
    yield {"type": "response.created", "response": base}
    for idx, item in enumerate(rep.items):
        if item.get("type") == "message":
            added = dict(item, status="in_progress", content=[])
            yield {"type": "response.output_item.added", "output_index": idx, "item": added}
            for ci, part in enumerate(item.get("content") or []):
                t = part.get("text", "")
                yield {"type": "response.output_text.delta", "item_id": item["id"],
                       "output_index": idx, "content_index": ci, "delta": t}
                yield {"type": "response.output_text.done", "item_id": item["id"],
                       "output_index": idx, "content_index": ci, "text": t}
        else:
            yield {"type": "response.output_item.added", "output_index": idx, "item": item}
        yield {"type": "response.output_item.done", "output_index": idx, "item": item}
    inp, out = rep.usage
    done = dict(base, status="completed", output=list(rep.items), usage={
        "input_tokens": inp, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inp + out})
    yield {"type": "response.completed", "response": done}
