"""Small facts about rollout content that the index needs without the full record types:
how Codex stores a session's source, which user-message parts are injected fragments, and
the shape of a pre-envelope (legacy) rollout header."""

from __future__ import annotations

import json
from typing import Any


def source_label(source: Any) -> str:
    """`threads.source` as Codex stores it: bare for unit variants, compact JSON otherwise."""
    if isinstance(source, str):
        return source
    if source is None:
        return "unknown"
    return json.dumps(source, separators=(",", ":"), ensure_ascii=False)


def is_legacy_meta(obj: Any) -> bool:
    """Pre-envelope rollouts (before Aug 2025) start with a bare `{id, timestamp, …}` object."""
    return (
        isinstance(obj, dict) and "type" not in obj and "payload" not in obj
        and isinstance(obj.get("id"), str)
    )


def is_instructions_fragment(text: str) -> bool:
    """AGENTS.md and skill fragments, which phase 1 strips and which are never a preview."""
    t = text.strip()
    low = t.lower()
    return (low.startswith("# agents.md instructions") and low.endswith("</instructions>")) or (
        low.startswith("<skill>") and low.endswith("</skill>")
    )


def is_context_fragment(text: str) -> bool:
    """Harness context that is kept for phase 1 but is not what the user asked."""
    low = text.strip().lower()
    return (
        (low.startswith("<environment_context>") and low.endswith("</environment_context>"))
        or (low.startswith("<subagent_notification>")
            and low.endswith("</subagent_notification>"))
        or (low.startswith("<user_instructions>") and low.endswith("</user_instructions>"))
    )


def user_prompt_from_payload(payload: Any) -> str:
    """The user's own words in a `message` payload with role user ('' when there are none)."""
    if not isinstance(payload, dict) or payload.get("type") != "message":
        return ""
    if payload.get("role") != "user" or not isinstance(payload.get("content"), list):
        return ""
    parts = [
        c["text"] for c in payload["content"]
        if isinstance(c, dict) and c.get("type") == "input_text" and isinstance(c.get("text"), str)
        and not is_instructions_fragment(c["text"]) and not is_context_fragment(c["text"])
    ]
    return "\n".join(parts).strip()
