"""What phase 1 sends to the model for one rollout (docs/codex-format.md "Phase 1 input").

Kept: response items that carry the work (user and assistant messages, tool calls and their
outputs, web searches), inter-agent messages as `agent_message` items. Dropped: developer
messages, reasoning, compaction, events, turn context, session metadata. AGENTS.md and skill
fragments are cut out of user messages (environment context stays). The kept items are
serialised as one compact JSON array, in the field order they were written, redacted, and
cut to the token budget by keeping its head and tail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..codex.command_outcomes import event_exit_codes
from ..codex.fragments import is_instructions_fragment
from ..codex.rollout import InterAgentCommunication, Rollout
from ..redact import redact

KEPT_RESPONSE_ITEMS = frozenset({
    "message", "agent_message", "local_shell_call", "function_call", "tool_search_call",
    "function_call_output", "tool_search_output", "custom_tool_call",
    "custom_tool_call_output", "web_search_call",
})
DEFAULT_ROLLOUT_TOKEN_LIMIT = 150_000


@dataclass(frozen=True)
class Phase1Input:
    items: list[dict[str, Any]]  # the kept items (payloads), fragments stripped
    text: str  # serialised, redacted, truncated (v2: the tiered rows, see input_v2.py)
    truncated_tokens: int  # v2: 0 (rows are left out whole: see `omitted_items`)
    version: str = "v1"
    omitted_items: int = 0  # v2: rows left out to fit the budget
    # call_id → exit code from the session's events (exec_command_end, item_completed
    # CommandExecution): not sent to a model; the offline backends read outcomes from it
    exit_codes: dict[str, int] = field(default_factory=dict)


def kept_items(rollout: Rollout) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in rollout.lines:
        if line.type == "response_item":
            item = _keep_response_item(line.item.raw)
            if item is not None:
                out.append(item)
        elif line.type == "inter_agent_communication":
            it = line.item
            if isinstance(it, InterAgentCommunication):
                out.append({"type": "agent_message", "author": it.author,
                            "recipient": it.recipient,
                            "content": [{"type": "input_text", "text": it.content or ""}]})
    return out


def _keep_response_item(p: dict[str, Any]) -> dict[str, Any] | None:
    t = p.get("type")
    if t not in KEPT_RESPONSE_ITEMS:
        return None
    if t != "message":
        return p
    role = p.get("role")
    if role == "developer":
        return None
    if role != "user" or not isinstance(p.get("content"), list):
        return p
    content = [
        c for c in p["content"]
        if not (isinstance(c, dict) and c.get("type") == "input_text"
                and isinstance(c.get("text"), str) and is_instructions_fragment(c["text"]))
    ]
    if not content:
        return None
    return {**p, "content": content}


def truncate_middle(text: str, max_tokens: int) -> tuple[str, int]:
    """Keep the head and tail halves of a byte budget of 4 bytes a token, on character
    boundaries, with Codex's marker in between. Returns (text, tokens removed)."""
    return truncate_bytes(text, max(1, max_tokens) * 4)


def truncate_bytes(text: str, budget: int) -> tuple[str, int]:
    """`truncate_middle` for a budget in bytes."""
    data = text.encode("utf-8")
    if len(data) <= budget:
        return text, 0
    half = budget // 2
    head = data[:half].decode("utf-8", errors="ignore")
    tail = data[len(data) - half:].decode("utf-8", errors="ignore")
    removed = len(data) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    tokens = -(-removed // 4)
    return f"{head}…{tokens} tokens truncated…{tail}", tokens


def build_input(rollout: Rollout, token_limit: int = DEFAULT_ROLLOUT_TOKEN_LIMIT) -> Phase1Input:
    items = kept_items(rollout)
    text = redact(json.dumps(items, ensure_ascii=False, separators=(",", ":")))
    text, cut = truncate_middle(text, token_limit)
    return Phase1Input(items, text, cut, exit_codes=event_exit_codes(rollout.lines))
