"""Small facts about rollout content that the index needs without the full record types:
how Codex stores a session's source, which user-message parts are injected fragments, and
the shape of a pre-envelope (legacy) rollout header."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, TypeGuard

# the only sources Codex's phase 1 claims (docs/codex-format.md "Phase 1 selection")
INTERACTIVE_SOURCES = ("cli", "vscode")
MISSING_SOURCE = "vscode"  # SessionMeta.source is `#[serde(default)]`: VSCode (0.34–0.36)


def stored_source(payload: dict[str, Any]) -> str:
    """`threads.source` as Codex stores it for this session_meta payload: bare for unit
    variants, compact JSON otherwise; a payload without the key reads as Codex's default."""
    if "source" not in payload:
        return MISSING_SOURCE
    source = payload["source"]
    if isinstance(source, str):
        return source
    if source is None:
        return "unknown"
    return json.dumps(source, separators=(",", ":"), ensure_ascii=False)


# what the user ran, by originator (the client that started the session)
ORIGINATOR_LABELS = {
    "codex-tui": "Codex TUI",
    "codex_tui": "Codex TUI",
    "codex_cli_rs": "CLI",
    "codex_vscode": "VS Code",
    "codex_exec": "exec",
    "codex_sdk_ts": "SDK",
    "codex_work_desktop": "Codex app",
    "codex_chatgpt_desktop": "Codex app",
    "Codex Desktop": "Codex app",
}
_SOURCE_WORDS = {"exec": "exec", "mcp": "MCP", "cli": "CLI", "vscode": "vscode",
                 "unknown": "unknown"}


@lru_cache(maxsize=512)
def source_label(source: str | None, originator: str | None) -> str:
    """What the user ran, in words: "Codex TUI", "VS Code", "exec", "CLI", "sub-agent: review",
    "MCP", "internal". `source` is the stored text (`stored_source`). The source decides for
    the non-interactive kinds; for cli/vscode the originator names the client; an unknown
    originator falls back to the source word. Never raw JSON."""
    if source is None:
        return "?"
    if source.startswith("{"):
        return _structured_label(source)
    if source in INTERACTIVE_SOURCES:
        label = ORIGINATOR_LABELS.get(originator or "")
        if label is not None and label != "exec":  # an exec originator with source vscode: odd
            return label
        if originator and "vscode" in originator.lower():
            return "VS Code"
    return _SOURCE_WORDS.get(source, source)


def _structured_label(source: str) -> str:
    try:
        obj = json.loads(source)
    except ValueError:
        return "unknown"
    if not isinstance(obj, dict) or len(obj) != 1:
        return "unknown"
    [(kind, value)] = obj.items()
    if kind == "subagent":
        name = _subagent_name(value)
        return f"sub-agent: {name}" if name else "sub-agent"
    if kind == "internal":
        return "internal"
    if kind == "custom":
        return value if isinstance(value, str) and value else "custom"
    return kind


def _subagent_name(value: Any) -> str:
    """`"review"`, `{"other": "x"}`, or `{"thread_spawn": {agent_nickname?, agent_role?, …}}`."""
    if isinstance(value, str):
        return value.replace("_", " ")
    if isinstance(value, dict):
        spawn = value.get("thread_spawn")
        if isinstance(spawn, dict):
            for key in ("agent_nickname", "agent_role", "agent_type"):
                if isinstance(spawn.get(key), str) and spawn[key]:
                    return spawn[key]
            return "spawned"
        other = value.get("other")
        if isinstance(other, str) and other:
            return other
    return ""


def is_legacy_meta(obj: object) -> TypeGuard[dict[str, Any]]:
    """Pre-envelope rollouts (before Aug 2025) start with a bare `{id, timestamp, …}` object."""
    return (
        isinstance(obj, dict) and "type" not in obj and "payload" not in obj
        and isinstance(obj.get("id"), str)
    )


def legacy_meta_payload(header: dict[str, Any]) -> dict[str, Any]:
    """A legacy rollout's bare header as a session_meta payload: such a header without
    `source` was written by the CLI (not the `vscode` default of an enveloped one)."""
    return {**header, "source": header.get("source", "cli")}


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


# The VS Code extension and the Desktop app put their context before the request and the
# request under this heading (docs/codex-format.md "Injected fragments").
_REQUEST_HEADING = re.compile(r"^[ \t]*## My request for Codex:", re.I | re.M)
_WRAPPER_HEADS = ("# context from my ide setup:", "# files mentioned by the user:")
# Codex's contextual user fragments (`<tag>` … `</tag>`): records and context the harness put in
# a user message, never what the user typed (docs/codex-format.md "Injected fragments").
RECORD_TAGS = ("user_shell_command", "turn_aborted", "skill", "user_instructions",
               "environment_context", "subagent_notification", "subagents", "plugins",
               "hook_prompt", "codex_internal_context")
# warnings older Codex wrote into the history as user text
_HARNESS_WARNINGS = (
    "warning: the maximum number of unified exec processes you can keep open is",
    "warning: your account was flagged for potentially high-risk cyber activity",
    "warning: apply_patch was requested via ",
)


def is_harness_record(text: str) -> bool:
    """A part that is wholly a harness fragment or record (AGENTS.md, `<user_shell_command>`,
    `<turn_aborted>`, `<skill>`, `<hook_prompt …>`, a harness warning, …), tag case ignored."""
    low = text.strip().lower()
    if low.startswith("# agents.md instructions") or low.startswith(_HARNESS_WARNINGS):
        return True
    return any(low.startswith(f"<{tag}") and low.endswith(f"</{tag}>") for tag in RECORD_TAGS)


def user_request(text: str) -> str:
    """The user's own words in one user text: '' for a harness record (`is_harness_record`);
    under the VS Code extension's and the Desktop app's wrappers (`# Context from my IDE
    setup:` / `# Files mentioned by the user:` … `## My request for Codex:`), only the
    request; any other text as it is. (Prompt templates and pasted material are told apart
    by `user_words.py`.)"""
    stripped = text.strip()
    low = stripped.lower()
    if is_harness_record(stripped):
        return ""
    m = _REQUEST_HEADING.search(stripped)
    if m:
        return stripped[m.end():].strip()
    if low.startswith(_WRAPPER_HEADS):
        return ""  # a wrapper with no request in it: context only
    return stripped


_MENTION = re.compile(r"^## (?P<name>[^\n:]+?): (?P<path>\S[^\n]*)$", re.M)


def mentioned_files(text: str) -> list[str]:
    """The names of the files the Desktop app lists under `# Files mentioned by the user:`
    (`## q3-churn-export.csv: /Users/…/q3-churn-export.csv` → `q3-churn-export.csv`): what
    the request refers to, context rather than the user's words."""
    stripped = text.strip()
    if not stripped.lower().startswith("# files mentioned by the user:"):
        return []
    m = _REQUEST_HEADING.search(stripped)
    head = stripped[: m.start()] if m else stripped
    return [x.group("name").strip() for x in _MENTION.finditer(head)]


_IMAGE_TAG = re.compile(r"</?image(?:\s[^<>]*)?>")


def is_image_tag(text: str) -> bool:
    """The `<image name=[Image #1] path="…">` / `</image>` parts Codex puts around an
    attached image (0.169): a wrapper, not the user's words."""
    return _IMAGE_TAG.fullmatch(text.strip()) is not None


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
        and not is_image_tag(c["text"])
    ]
    return "\n".join(parts).strip()
