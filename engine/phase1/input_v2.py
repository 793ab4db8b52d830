"""What V2 phase 1 sends to the model for one rollout (docs/codex-format.md "Phase 1 input, v2").

The items V1 keeps (input_v1.kept_items) become labelled rows, `[<label>]\\n<item JSON>\\n`,
one per item, each redacted and capped. When the rows do not fit the byte budget, the tiers
are filled in priority order (the user's words first, tool noise last), newest rows first
within a tier; the chosen rows keep their original order and each run of left-out rows
becomes one `[... response items omitted ...]` line (when those lines push the rows over the
budget, the least important chosen row gives way). The rendered prompt is then cut into
pieces of at most 8,900 bytes, each sent as its own user message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..codex.command_outcomes import event_exit_codes
from ..codex.fragments import is_context_fragment
from ..codex.rollout import Rollout
from ..redact import redact
from .input_v1 import DEFAULT_ROLLOUT_TOKEN_LIMIT, Phase1Input, kept_items, truncate_bytes

ROW_RESERVE = 96
MAX_ROW_BYTES = 10_000 - ROW_RESERVE
TOOL_OUTPUT_BYTES = 2_000 * 4 - ROW_RESERVE
CHUNK_BYTES = 8_900
OMITTED = "[... response items omitted ...]\n"
TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output", "tool_search_output")
IMAGE_PARTS = ("input_image", "output_image", "image")
AUDIO_PARTS = ("input_audio", "output_audio", "audio")
ASK_USER = "request_user_input"

# (tier, label), in the order the budget is filled
HUMAN, FINAL, OTHER_AGENT, COMMENTARY, CONTEXT, TOOL = range(6)
LABELS = ("human user", "assistant final", "other agent", "assistant commentary",
          "harness context", "tool")


@dataclass(frozen=True)
class Row:
    index: int  # position among the kept items: the original order
    tier: int
    text: str  # `[label]\n<json>\n`, redacted and capped

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


def _sanitize(item: dict[str, Any]) -> dict[str, Any]:
    """Encrypted blobs and bookkeeping go; images and audio become a short text."""
    out = {k: v for k, v in item.items()
           if k not in ("encrypted_content", "internal_chat_message_metadata_passthrough")}
    if out.get("type") == "message" and out.get("role") == "user":
        out.pop("status", None)
    for key in ("content", "output"):
        if isinstance(out.get(key), list):
            out[key] = [_media_part(p) for p in out[key]]
    return out


def _media_part(part: Any) -> Any:
    if not isinstance(part, dict):
        return part
    kind = part.get("type")
    if kind in IMAGE_PARTS:
        return {"type": "input_text", "text": "[image omitted]"}
    if kind in AUDIO_PARTS:
        return {"type": "input_text", "text": "[audio omitted]"}
    return part


def _texts(item: dict[str, Any]) -> list[str]:
    return [p["text"] for p in item.get("content") or ()
            if isinstance(p, dict) and isinstance(p.get("text"), str)]


def tier_of(item: dict[str, Any], raw: dict[str, Any] | None = None) -> int:
    """Which tier a kept item falls in. `raw` is the payload as stored (its metadata)."""
    t = item.get("type")
    if t == "agent_message":
        return OTHER_AGENT
    if t != "message":
        return TOOL
    role = item.get("role")
    if role == "assistant":
        return COMMENTARY if item.get("phase") == "commentary" else FINAL
    if role != "user":
        return TOOL
    texts = [x.strip() for x in _texts(item) if x.strip()]
    if texts and all(x.lower().startswith("<subagent_notification>") for x in texts):
        return OTHER_AGENT
    kinds = ((raw or item).get("internal_chat_message_metadata_passthrough") or {}).get(
        "content_item_kinds")
    if isinstance(kinds, list) and kinds and all(
            isinstance(k, str) and not k.startswith("user.") for k in kinds):
        return CONTEXT
    if not texts or all(is_context_fragment(x) for x in texts):
        return CONTEXT
    return HUMAN


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _cap_output(item: dict[str, Any]) -> dict[str, Any]:
    out = item.get("output")
    if isinstance(out, str):
        return {**item, "output": truncate_bytes(out, TOOL_OUTPUT_BYTES)[0]}
    if isinstance(out, list):
        text = _json(out)
        if len(text.encode("utf-8")) > TOOL_OUTPUT_BYTES:
            return {**item, "output": truncate_bytes(text, TOOL_OUTPUT_BYTES)[0]}
    return item


def _row(index: int, tier: int, body: str) -> Row:
    body = redact(body)
    text = f"[{LABELS[tier]}]\n{body}\n"
    if len(text.encode("utf-8")) > MAX_ROW_BYTES:
        head = len(f"[{LABELS[tier]}]\n\n".encode())
        text = f"[{LABELS[tier]}]\n{truncate_bytes(body, MAX_ROW_BYTES - head - 32)[0]}\n"
    return Row(index, tier, text)


def build_rows(items: list[dict[str, Any]]) -> list[Row]:
    """One row per kept item; an answered `request_user_input` call and its output become
    one human row (the question and the reply)."""
    asked = {it.get("call_id"): it for it in items
             if it.get("type") == "function_call" and it.get("name") == ASK_USER}
    answered = {it.get("call_id") for it in items
                if it.get("type") == "function_call_output" and it.get("call_id") in asked
                and _answer(it)}
    rows = []
    for i, raw in enumerate(items):
        item = _sanitize(raw)
        t = item.get("type")
        if t == "function_call" and item.get("call_id") in answered:
            continue  # shown with its answer
        if t == "function_call_output" and item.get("call_id") in answered:
            call = asked[item.get("call_id")]
            body = (f"Assistant question: {call.get('arguments') or ''}\n"
                    f"Human reply: {_json(item.get('output'))}")
            rows.append(_row(i, HUMAN, body))
            continue
        if t in TOOL_OUTPUTS:
            item = _cap_output(item)
        rows.append(_row(i, tier_of(item, raw), _json(item)))
    return rows


def _answer(item: dict[str, Any]) -> bool:
    out = item.get("output")
    if isinstance(out, str):
        return bool(out.strip())
    return bool(out)


def select_rows(rows: list[Row], budget: int) -> tuple[str, int]:
    """(rendered rows, how many were left out). When the gap markers push the chosen rows
    over the budget, the last row chosen (the least important) gives way, and so on; empty
    only when not even the most important row fits."""
    total = sum(r.size for r in rows)
    if total <= budget:
        return "".join(r.text for r in rows), 0
    chosen: list[int] = []
    used = 0
    for tier in range(len(LABELS)):
        for r in sorted((r for r in rows if r.tier == tier), key=lambda r: -r.index):
            if used + r.size <= budget:
                chosen.append(r.index)
                used += r.size
    while chosen:
        text = _render(rows, set(chosen))
        if len(text.encode("utf-8")) <= budget:
            return text, len(rows) - len(chosen)
        chosen.pop()
    return "", len(rows)


def _render(rows: list[Row], chosen: set[int]) -> str:
    out: list[str] = []
    gap = False
    for r in rows:
        if r.index in chosen:
            out.append(r.text)
            gap = False
        elif not gap:
            out.append(OMITTED)
            gap = True
    return "".join(out)


def build_input_v2(rollout: Rollout,
                   token_limit: int = DEFAULT_ROLLOUT_TOKEN_LIMIT) -> Phase1Input:
    items = kept_items(rollout)
    text, omitted = select_rows(build_rows(items), 4 * max(1, token_limit))
    return Phase1Input(items, text, 0, "v2", omitted, event_exit_codes(rollout.lines))


def split_chunks(text: str, limit: int = CHUNK_BYTES) -> list[str]:
    """Pieces of at most `limit` UTF-8 bytes, cut anywhere but inside a character (Codex
    0.169 cuts mid-line too, docs/codex-format.md "Phase 1 input, v2")."""
    data = text.encode("utf-8")
    out = []
    start = 0
    while start < len(data):
        end = min(start + limit, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end -= 1  # never split a character
        out.append(data[start:end].decode("utf-8"))
        start = end
    return out or [""]
