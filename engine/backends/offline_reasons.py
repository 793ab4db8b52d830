"""Why the offline backends kept nothing from a session, in one line (issue 9, "Bad input").

An empty memory has two honest explanations: the session was read and held nothing durable,
or its records were not in a form the extractor reads, so it could not tell. The second must
say so rather than pass for the first, and never invent content. The shapes read are those of
docs/codex-format.md "Rollout files": phase 1's input keeps only the response items Codex keeps
(`phase1/input_v1.py`), and a user message is read from content parts carrying a `text` string.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

NOTHING_DURABLE = "nothing durable to remember"


def _readable_text(item: dict[str, Any]) -> bool:
    content = item.get("content")
    if not isinstance(content, list):
        return False
    return any(isinstance(c, dict) and isinstance(c.get("text"), str) and c["text"].strip()
               for c in content)


def _kinds(items: list[dict[str, Any]]) -> str:
    count = Counter(str(it.get("type", "?")) if isinstance(it, dict) else type(it).__name__
                    for it in items)
    return ", ".join(f"{kind} ×{n}" for kind, n in count.most_common(4))


def empty_reason(items: list[dict[str, Any]]) -> str:
    """Whether `items` (phase 1's input) are in a form the offline extractor reads: when
    they are not, the one-line reason it keeps nothing; when they are, `NOTHING_DURABLE`
    (the reason to give should the extractor then find nothing)."""
    if not items:
        return ("no memory: nothing in the session is a message or tool call in a form "
                "phase 1 reads (Codex's response items)")
    users = [it for it in items if isinstance(it, dict) and it.get("type") == "message"
             and it.get("role") == "user"]
    if not users:
        return (f"no memory: no user message among its {len(items)} items "
                f"({_kinds(items)}), so nothing the user said to remember")
    if not any(_readable_text(it) for it in users):
        shapes = Counter(type(it.get("content")).__name__ for it in users)
        return (f"no memory: its {len(users)} user message(s) hold no text in a form memdeck "
                f"reads (content: {', '.join(shapes)}; text parts expected)")
    return NOTHING_DURABLE
