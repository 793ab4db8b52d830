"""How much of a session fits the model: the input budget of phase 1.

Codex sends at most 150,000 tokens of a rollout (its model has room for far more). A local
model has 4,096 to 131,072 tokens of context for prompt and reply together, so memdeck asks
the server: vLLM says `max_model_len` in `/v1/models`, LM Studio `max_context_length`,
llama.cpp's own server `meta.n_ctx_train` (and `/props` its `n_ctx`). llama-cpp-python and
Ollama's OpenAI endpoint say nothing; then `memdeck.input_budget` is the way to say it, and
without it Codex's figure stands. From a context length the budget keeps room for the system
prompt and the reply (`budget_for`)."""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

PROMPT_TOKENS = 1_024  # Codex's stage-one prompts are 2.6-3 KB, wrapped: under 1,024 tokens
REPLY_TOKENS = 4_096  # room for the raw memory and the summary (at most a quarter of context)
LENGTH_FIELDS = ("max_model_len", "max_context_length", "context_length", "n_ctx",
                 "n_ctx_train", "context_window")


def budget_for(context: int) -> int:
    """The rollout tokens that fit a model of `context` tokens with prompt and reply."""
    return max(256, context - PROMPT_TOKENS - min(REPLY_TOKENS, context // 4))


def context_length(client: openai.OpenAI, model: str) -> int | None:
    """The context length the server states for `model` (or for its only model), None when
    it states none or cannot be asked."""
    try:
        data = json.loads(client.get("/models", cast_to=bytes))
    except Exception as e:  # noqa: BLE001 - a hint only: the call itself reports real errors
        log.debug("no /models from the endpoint: %s", e)
        return None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    models = [m for m in entries if isinstance(m, dict)]
    chosen = [m for m in models if m.get("id") == model] or (models if len(models) == 1 else [])
    for m in chosen:
        found = _length_in(m) or _length_in(m.get("meta"))
        if found:
            return found
    return None


def _length_in(entry: Any) -> int | None:
    if not isinstance(entry, dict):
        return None
    for name in LENGTH_FIELDS:
        value = entry.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


_LIMIT = re.compile(r"(?:maximum context length is|context (?:size|length|window) of"
                    r"|n_ctx\s*[=:]\s*)\s*(\d+)", re.I)
_ASKED = re.compile(r"(?:requested|you (?:sent|asked for)|n_prompt_tokens\s*[=:]\s*)\s*(\d+)",
                    re.I)


def stated_overflow(message: str) -> tuple[int, int | None] | None:
    """(context, requested tokens) from a server's refusal of a request over its context —
    OpenAI, vLLM and llama-cpp-python say "maximum context length is N tokens. However, you
    requested M tokens", llama.cpp's server "n_prompt_tokens = M ... n_ctx = N" — or None
    when the message states no context length."""
    limit = _LIMIT.search(message)
    if not limit:
        return None
    asked = _ASKED.search(message)
    return int(limit.group(1)), int(asked.group(1)) if asked else None
