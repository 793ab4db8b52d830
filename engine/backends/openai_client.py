"""The `openai` backend: the official client, Chat Completions, any OpenAI-compatible endpoint.

`openai` costs ~1.3 s to import, so it is imported inside the functions that need it; importing
this module stays cheap (a test proves it). `build_client` is the only place a client is made.

Retries are the client's own: it retries timeouts, dropped connections, 408/409/429 and 5xx up
to `max_retries` times with exponential backoff (0.5 s doubling, capped at 8 s, jittered) and
waits exactly `Retry-After` / `retry-after-ms` when the server sends one of at most 120 s (a
longer one is not retried). tests/test_llm_backend.py checks this against a local server.

The client's parsing is bypassed: the raw body is read as plain JSON here, so a proxy's HTML
page or a non-completion JSON body becomes one clear line instead of a half-built pydantic
object, and no openai object ever leaves this module. The body is size-capped as it arrives
(capped_http.py): a reply over `MAX_BODY_BYTES` is refused by its Content-Length or cut
off at the cap, so a 200 MB reply never sits in memory. Everything quoted from the endpoint
goes through `outside_text` (redacted, then cut), and `ModelCallError` redacts its message.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..codex.settings import MEMDECK_KEYS, MemoriesConfig, coerce_stored
from ..errors import ConfigError
from .capped_http import MAX_BODY_BYTES, MAX_ERROR_BODY_BYTES, cap_errors, capped_http_client
from .endpoint_key import OPENAI_URL, key_for
from .json_output import (
    correction,
    lenient_json,
    refuses_json_schema,
    response_format,
    with_schema_instruction,
)
from .replies import (  # re-exported: the backend's public API
    MAX_CONTENT_CHARS,
    STAGE_ONE_OUTPUT_SCHEMA,
    ModelCallError,
    ModelOutputError,
    ModelReply,
    ToolCall,
    ToolTurn,
    outside_text,
    parse_stage_one_output,
    parse_tool_calls,
    tool_result,
)

if TYPE_CHECKING:
    import openai

__all__ = [
    "DEFAULT_BASE_URL", "DEFAULT_CONSOLIDATION_MODEL", "DEFAULT_EXTRACT_MODEL",
    "MAX_BODY_BYTES", "MAX_CONTENT_CHARS", "MAX_ERROR_BODY_BYTES", "STAGE_ONE_OUTPUT_SCHEMA",
    "BackendConfig",
    "ModelCallError", "ModelOutputError", "ModelReply", "OpenAIBackend", "ToolCall", "ToolTurn",
    "build_client", "chat_with_tools", "choose_backend", "extract_json",
    "parse_stage_one_output", "resolve_backend_config", "tool_result",
]

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = OPENAI_URL  # the openai client's own default
# The models Codex 0.169 asks for when `[memories]` names none (docs/codex-compat.md "Requests").
DEFAULT_EXTRACT_MODEL = "gpt-6-luna"
DEFAULT_CONSOLIDATION_MODEL = "gpt-6.1-terra"
# An endpoint without auth (a local llama.cpp / vLLM / Ollama) still needs some bearer value.
NO_KEY = "no-key"


@dataclass(frozen=True)
class BackendConfig:
    base_url: str | None  # None: the client's default (api.openai.com)
    api_key: str | None = field(repr=False)  # never printed or logged
    extract_model: str
    consolidation_model: str
    timeout: float  # seconds per attempt (connect, read and write each)
    max_retries: int
    key_source: str = ""  # where api_key came from ("memdeck.api_key", "$NAME"), for messages
    key_withheld: str = ""  # why a key in the environment was not sent (endpoint_key.py)
    output_mode: str = "auto"  # auto | json_schema | json_object (json_output.py)
    tools_mode: str = "auto"  # auto | on | off: phase 2's tool calling (phase2_files_json.py)
    input_budget: int | None = None  # tokens; None: what the server's context holds
    output_budget: int | None = None  # a reply's max_tokens; None: the server's own limit

    @property
    def url(self) -> str:
        return self.base_url or DEFAULT_BASE_URL

    @property
    def endpoint(self) -> str:
        """The URL for messages and logs: no user:password@, no query (Azure puts keys there)."""
        from urllib.parse import urlsplit, urlunsplit

        try:
            p = urlsplit(self.url)
            host = p.hostname or ""
            netloc = (f"[{host}]" if ":" in host else host) + (f":{p.port}" if p.port else "")
            return urlunsplit((p.scheme, netloc, p.path, "", "")).rstrip("/")
        except ValueError:
            return "(an unparseable base_url)"


def _nonempty(value: object) -> str | None:
    return (value.strip() or None) if isinstance(value, str) else None


def resolve_backend_config(memdeck_settings: Mapping[str, Any],
                           memories_config: MemoriesConfig | None,
                           env: Mapping[str, str] = os.environ) -> BackendConfig:
    """Precedence (docs/architecture.md "Model backends").

    base_url: memdeck's `base_url` > `OPENAI_BASE_URL` > the client default.
    api_key: memdeck's `api_key` > the variable memdeck's `api_key_env` names >
    `OPENAI_API_KEY`, the last only when the endpoint is its own (`OPENAI_BASE_URL`'s, else
    OpenAI's): a key is never sent to a host it was not configured for (endpoint_key.py).
    models: `[memories] extract_model` / `consolidation_model` > memdeck's setting > Codex's
    provider default.
    """

    def mine(name: str) -> Any:
        return coerce_stored(MEMDECK_KEYS[name], memdeck_settings.get(name))

    mem = memories_config
    my_url = _nonempty(mine("base_url"))
    base_url = my_url or _nonempty(env.get("OPENAI_BASE_URL"))
    key = key_for(base_url or DEFAULT_BASE_URL, my_base_url=my_url, my_key=_nonempty(
        mine("api_key")), my_key_env=_nonempty(mine("api_key_env")), env=env)
    return BackendConfig(
        base_url=base_url,
        api_key=key.key,
        key_source=key.source,
        key_withheld=key.withheld,
        extract_model=(mem and mem.extract_model) or _nonempty(mine("extract_model"))
        or DEFAULT_EXTRACT_MODEL,
        consolidation_model=(mem and mem.consolidation_model)
        or _nonempty(mine("consolidation_model")) or DEFAULT_CONSOLIDATION_MODEL,
        timeout=float(mine("request_timeout")),
        max_retries=int(mine("max_retries")),
        output_mode=str(mine("output_mode")),
        tools_mode=str(mine("tools")),
        input_budget=mine("input_budget") or None,
        output_budget=mine("output_budget") or None,
    )


def choose_backend(setting: str | None, cfg: BackendConfig) -> str:
    """"openai" | "offline"; "auto" is openai when an endpoint or a key is configured."""
    choice = setting or "auto"
    if choice in ("openai", "offline"):
        return choice
    if choice == "auto":
        return "openai" if (cfg.base_url or cfg.api_key) else "offline"
    raise ConfigError(f'memdeck.backend must be "auto", "openai" or "offline"; got {setting!r}')


def build_client(cfg: BackendConfig) -> openai.OpenAI:
    """The one place an `openai.OpenAI` is built: explicit endpoint, key, timeout, retries."""
    import openai

    key = cfg.api_key
    if key is None:
        if cfg.base_url is None:
            raise ConfigError("the openai backend needs a key: set OPENAI_API_KEY or "
                              "`memdeck config set memdeck.api_key …` (or a memdeck.base_url)")
        if cfg.key_withheld:
            log.info("%s", cfg.key_withheld)
        key = NO_KEY
    return openai.OpenAI(
        api_key=key, base_url=cfg.url, max_retries=cfg.max_retries,
        timeout=openai.Timeout(cfg.timeout, connect=min(cfg.timeout, 10.0)),
        http_client=capped_http_client(),
    )


def extract_json(client: openai.OpenAI, cfg: BackendConfig, *, system: str,
                 user: str | list[str], schema: dict[str, Any], schema_name: str,
                 parse: Callable[[str], dict[str, Any]] = parse_stage_one_output,
                 reasoning_effort: str | None = None,
                 mode: str = "json_schema") -> ModelReply:
    """One JSON completion with `cfg.extract_model`, checked by `parse`: under Codex's strict
    schema (`mode` json_schema), or in JSON mode (json_object: json_output.py), where a reply
    that breaks the contract is sent back once with the reason. `user` is one message, or
    several in order (V2 phase 1 sends its input in pieces)."""
    users = [user] if isinstance(user, str) else list(user)
    json_mode = mode == "json_object"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": with_schema_instruction(system, schema) if json_mode
         else system}, *({"role": "user", "content": u} for u in users)]
    body: dict[str, Any] = {"model": cfg.extract_model, "messages": messages,
                            "response_format": response_format(mode, schema, schema_name)}
    if cfg.output_budget:
        body["max_tokens"] = cfg.output_budget
    if reasoning_effort:
        body["reasoning_effort"] = reasoning_effort
    spent = (0, 0, 0)
    for attempt in (1, 2):
        turn = _complete(client, cfg, body)
        spent = (spent[0] + turn.input_tokens, spent[1] + turn.output_tokens,
                 spent[2] + turn.duration_ms)
        where = f"model {turn.model} at {cfg.endpoint}"
        usage = {"input_tokens": spent[0], "output_tokens": spent[1], "duration_ms": spent[2],
                 "model": turn.model}
        if turn.refusal:
            raise ModelOutputError(f"{where} refused: {outside_text(turn.refusal, 200)}",
                                   **usage)
        text = turn.content or ""
        if json_mode:  # small local models put raw line breaks in strings: read them as \n
            text = lenient_json(text)
        try:
            parsed = parse(text)
        except ModelOutputError as e:
            cut = " (the reply was cut off at the token limit)" if turn.finish == "length" else ""
            if json_mode and attempt == 1:  # JSON mode: once more, told what was wrong
                body = {**body, "messages": [*messages, {"role": "assistant", "content": text},
                                             {"role": "user", "content": correction(f"{e}{cut}")}]}
                continue
            again = " twice in JSON mode" if json_mode else ""
            raise ModelOutputError(f"{where} broke the {schema_name} schema{again}: {e}{cut}",
                                   **usage) from None
        return ModelReply(text, parsed, spent[0], spent[1], spent[2], turn.model)
    raise AssertionError("unreachable")  # the loop returns or raises


def chat_with_tools(client: openai.OpenAI, cfg: BackendConfig, *,
                    messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                    reasoning_effort: str | None = None) -> ToolTurn:
    """One agent step with `cfg.consolidation_model`: the reply text and its tool calls."""
    body: dict[str, Any] = {"model": cfg.consolidation_model, "messages": messages,
                            "tools": tools}
    if cfg.output_budget:
        body["max_tokens"] = cfg.output_budget
    if reasoning_effort:
        body["reasoning_effort"] = reasoning_effort
    turn = _complete(client, cfg, body)
    return ToolTurn(turn.content, parse_tool_calls(turn.tool_calls), turn.finish,
                    turn.input_tokens, turn.output_tokens, turn.duration_ms, turn.model)


PROBE_WAIT = 3.0  # seconds a session waits for the first strict request's answer


class OpenAIBackend:
    """A config plus its lazily built client; share one across threads (the client is safe)."""

    name = "openai"

    def __init__(self, cfg: BackendConfig, client: openai.OpenAI | None = None) -> None:
        self.cfg = cfg
        self.model = cfg.extract_model
        self._client = client
        self._lock = threading.Lock()
        # auto: strict schema until the endpoint refuses it, then JSON mode (json_output.py)
        self.output_mode = "json_schema" if cfg.output_mode == "auto" else cfg.output_mode
        self._context: int | None = None  # the server's stated context length, asked once
        self._context_asked = False
        self._schema_taken = False  # the endpoint answered a strict-schema request
        self._probing = False  # the first strict request is out (or was)
        self._probed = threading.Event()  # … and has its answer

    @property
    def client(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                self._client = build_client(self.cfg)
            return self._client

    def context_length(self) -> int | None:
        """The extract model's context length as the server states it (asked once)."""
        from .server_context import context_length

        if not self._context_asked:
            self._context = context_length(self.client, self.cfg.extract_model)
            self._context_asked = True
        return self._context

    def extract_json(self, *, system: str, user: str | list[str], schema: dict[str, Any],
                     schema_name: str,
                     parse: Callable[[str], dict[str, Any]] = parse_stage_one_output,
                     reasoning_effort: str | None = None) -> ModelReply:
        kw: dict[str, Any] = {"system": system, "user": user, "schema": schema,
                              "schema_name": schema_name, "parse": parse,
                              "reasoning_effort": reasoning_effort}
        if self.cfg.output_mode != "auto" or self.output_mode != "json_schema" \
                or self._schema_taken:
            return extract_json(self.client, self.cfg, mode=self.output_mode, **kw)
        # one strict request finds out; the sessions extracted beside it wait a moment for
        # the answer (a refusal comes at once), so switching to JSON mode costs one request
        # per run, not one per worker, and a slow endpoint that takes the schema is not
        # made to serve them one by one
        with self._lock:
            first = not self._probing
            self._probing = True
        if not first:
            self._probed.wait(PROBE_WAIT)
            if self.output_mode == "json_schema" and not self._schema_taken:
                return self._probe_schema(kw)  # still unknown: find out beside it
            return extract_json(self.client, self.cfg, mode=self.output_mode, **kw)
        try:
            return self._probe_schema(kw)
        finally:
            self._probed.set()

    def _probe_schema(self, kw: dict[str, Any]) -> ModelReply:
        mode = self.output_mode
        try:  # the first strict request goes without retries: a refusal is not transient
            reply = extract_json(self.client.with_options(max_retries=0), self.cfg,
                                 mode=mode, **kw)
            self._schema_taken = True
            return reply
        except ModelCallError as e:
            if not refuses_json_schema(e):
                if e.kind in ("output", "rejected", "bad_reply", "client"):
                    raise
                return extract_json(self.client, self.cfg, mode=mode, **kw)  # with retries
        with self._lock:
            if self.output_mode == "json_schema":
                log.info("%s does not take a strict JSON schema: JSON mode from now on",
                         self.cfg.endpoint)
                self.output_mode = "json_object"
        return extract_json(self.client, self.cfg, mode="json_object", **kw)

    def chat_with_tools(self, *, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                        reasoning_effort: str | None = None) -> ToolTurn:
        return chat_with_tools(self.client, self.cfg, messages=messages, tools=tools,
                               reasoning_effort=reasoning_effort)


# -- the HTTP call and what can go wrong with it ---------------------------------------------
@dataclass(frozen=True)
class _Turn:
    content: str | None
    refusal: str | None
    tool_calls: list[Any]
    finish: str | None
    input_tokens: int
    output_tokens: int
    duration_ms: int
    model: str


# how servers say a request is over the model's context (llama.cpp, vLLM, Ollama, LM Studio)
_OVER_CONTEXT = ("context length", "context window", "context_length", "too many tokens",
                 "exceeds the context", "exceed context")


def _complete(client: openai.OpenAI, cfg: BackendConfig, body: dict[str, Any]) -> _Turn:
    import openai

    ep = cfg.endpoint
    started = time.monotonic()
    try:
        # The client's low-level post: its auth, timeouts, retries and Retry-After, without
        # the typed-params transform (about 5 ms of CPU per call, paid under the GIL by
        # every worker); the reply is read and checked here either way.
        data = client.post("/chat/completions", body=body, cast_to=bytes)
    except openai.OpenAIError as e:
        ms = int((time.monotonic() - started) * 1000)
        cap = f"the {MAX_BODY_BYTES // 2**20} MB reply cap"
        too_large, unreadable = cap_errors()
        if isinstance(e, too_large):
            if e.size is not None:
                raise ModelOutputError(f"model endpoint {ep} sent a {e.size / 1e6:.1f} MB reply "
                                       f"(limit {MAX_BODY_BYTES // 2**20} MB): over {cap}, "
                                       "not read", duration_ms=ms) from None
            raise ModelOutputError(f"model endpoint {ep} sent a reply larger than {cap}; "
                                   "memdeck stopped reading it there", duration_ms=ms) from None
        if isinstance(e, unreadable):
            raise ModelCallError(f"model endpoint {ep} sent a reply in content-encoding "
                                 f"{outside_text(e.coding, 40)!r}, which memdeck does not read",
                                 kind="bad_reply", duration_ms=ms) from None
        raise _describe(e, cfg, ms) from None
    ms = int((time.monotonic() - started) * 1000)
    log.debug("POST %s/chat/completions: %d bytes in %d ms", ep, len(data), ms)
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        raise ModelCallError(f"model endpoint {ep} sent a reply that is not JSON "
                             f"({outside_text(data[:4096].decode('utf-8', 'replace'), 60)!r})",
                             kind="bad_reply", duration_ms=ms) from None
    try:
        choice = obj["choices"][0]
        msg = choice["message"]
        assert isinstance(msg, dict)
    except (KeyError, IndexError, TypeError, AssertionError):
        err = obj.get("error") if isinstance(obj, dict) else None
        what = (f"an error with HTTP 200: {outside_text(str(err.get('message')), 160)}"
                if isinstance(err, dict) else "JSON that is not a chat completion "
                "(no choices[0].message)")
        raise ModelCallError(f"model endpoint {ep} sent {what}", kind="bad_reply",
                             duration_ms=ms) from None
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
    tin, tout = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
    model = obj.get("model") if isinstance(obj.get("model"), str) else body["model"]
    content, calls = msg.get("content"), msg.get("tool_calls") or []
    if content is not None and not isinstance(content, str):
        raise ModelCallError(f"model endpoint {ep} sent message content that is not a string",
                             kind="bad_reply", duration_ms=ms)
    size = len(content or "") + sum(len(json.dumps(c)) for c in calls if isinstance(c, dict))
    if size > MAX_CONTENT_CHARS:
        raise ModelOutputError(f"model {model} at {ep} sent {size / 1e6:.1f} M characters "
                               f"(limit {MAX_CONTENT_CHARS // 2**20} M)", input_tokens=tin,
                               output_tokens=tout, duration_ms=ms, model=model)
    refusal = msg.get("refusal")
    return _Turn(content, refusal if isinstance(refusal, str) and refusal else None,
                 calls if isinstance(calls, list) else [], choice.get("finish_reason"),
                 tin, tout, ms, model)


def _int(v: object) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


def _retries(e: Exception) -> int:
    resp = getattr(e, "response", None)
    req = resp.request if resp is not None else getattr(e, "request", None)
    try:
        return int(req.headers.get("x-stainless-retry-count", "0"))  # type: ignore[union-attr]
    except (AttributeError, ValueError, RuntimeError):
        return 0


def _describe(e: Exception, cfg: BackendConfig, ms: int) -> ModelCallError:
    """One line naming what happened and where."""
    import openai

    ep, n = cfg.endpoint, _retries(e)
    tries = f"{n} {'retry' if n == 1 else 'retries'}"
    if isinstance(e, openai.APITimeoutError):
        if type(e.__cause__).__name__ == "ConnectTimeout":
            return ModelCallError(f"model endpoint {ep} did not accept a connection within "
                                  f"{min(cfg.timeout, 10.0):g} s ({tries})", kind="timeout",
                                  duration_ms=ms)
        return ModelCallError(f"model endpoint {ep} timed out after {cfg.timeout:g} s ({tries})",
                              kind="timeout", duration_ms=ms)
    if isinstance(e, openai.APIConnectionError):
        cause = e.__cause__
        text = str(cause) if cause else str(e)
        if "refused" in text.lower():
            what = "refused the connection"
        elif type(cause).__name__ == "RemoteProtocolError":
            what = "closed the connection mid-response"
        else:
            what = f"could not be reached ({outside_text(text, 120)})"
        return ModelCallError(f"model endpoint {ep} {what} ({tries})", kind="connection",
                              duration_ms=ms)
    if isinstance(e, openai.APIStatusError):
        code = e.status_code
        body = e.body
        detail = body.get("message") if isinstance(body, dict) else None
        detail = outside_text(str(detail or e.response.text or e.message), 160)
        if code == 429:
            wait = e.response.headers.get("retry-after")
            asks = f"; it asks to wait {wait} s" if wait and n < cfg.max_retries else ""
            return ModelCallError(f"model endpoint {ep} is rate-limiting (HTTP 429) after "
                                  f"{tries}{asks}: {detail}", kind="rate_limit", duration_ms=ms)
        if code >= 500:
            return ModelCallError(f"model endpoint {ep} failed with HTTP {code} after {tries}: "
                                  f"{detail}", kind="server", duration_ms=ms)
        hint = {401: " (check the API key)", 403: " (check the API key's permissions)",
                404: " (check memdeck.base_url and the model name)"}.get(code, "")
        if code in (401, 403) and cfg.key_withheld:
            hint = f" ({cfg.key_withheld})"
        elif code in (400, 413) and any(w in detail.lower() for w in _OVER_CONTEXT):
            hint = (" (the session is longer than the model's context: set "
                    "memdeck.input_budget below it)")
        return ModelCallError(f"model endpoint {ep} rejected the request with HTTP {code}"
                              f"{hint}: {detail}", kind="rejected", duration_ms=ms)
    return ModelCallError(f"model endpoint {ep} failed: {outside_text(str(e), 200)}",
                          kind="client", duration_ms=ms)
