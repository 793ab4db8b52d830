"""Which API key goes to which endpoint: a key is sent only to the host it was configured for.

A user who runs a local llama.cpp, Ollama, vLLM or LM Studio server for memdeck usually also
has `OPENAI_API_KEY` in their environment, for OpenAI. That key belongs to OpenAI's endpoint
(or to `OPENAI_BASE_URL`'s, when the environment names one: the two are the openai client's
own pair), never to whatever `memdeck.base_url` points at. The key for memdeck's endpoint is
memdeck's own: `memdeck.api_key` (in memdeck's config file), or `memdeck.api_key_env`, the
name of an environment variable that holds it (so the key itself stays out of any file).

An endpoint is its origin: scheme, host and port (`http://127.0.0.1:8080/v1` and
`http://127.0.0.1:8080/other` are one; `http://localhost:8080` and `http://127.0.0.1:8080`
are two, since a key is configured for a name, not for an address).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

OPENAI_URL = "https://api.openai.com/v1"


def origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of `url`, the default port made explicit; None when unparseable."""
    try:
        p = urlsplit(url.strip())
        port = p.port or {"https": 443, "http": 80}.get(p.scheme.lower())
        host = (p.hostname or "").lower()
    except ValueError:
        return None
    return (p.scheme.lower(), host, port) if host else None


@dataclass(frozen=True)
class EndpointKey:
    key: str | None  # None: no key for this endpoint (a local server needs none)
    source: str  # where the key came from, for messages: "memdeck.api_key", "$NAME", ""
    withheld: str = ""  # why a key in the environment was not sent, "" when none was


def key_for(url: str, *, my_base_url: str | None, my_key: str | None,
            my_key_env: str | None, env: Mapping[str, str]) -> EndpointKey:
    """The key to send to `url` (the endpoint memdeck will call).

    memdeck's own key (`api_key`, then the variable `api_key_env` names) goes with memdeck's
    endpoint. `OPENAI_API_KEY` goes only to its own endpoint: `OPENAI_BASE_URL` when set, else
    OpenAI's."""
    if my_key:
        return EndpointKey(my_key, "memdeck.api_key")
    if my_key_env:
        value = (env.get(my_key_env) or "").strip()
        if value:
            return EndpointKey(value, f"${my_key_env}")
    env_key = (env.get("OPENAI_API_KEY") or "").strip()
    if not env_key:
        return EndpointKey(None, "")
    home = (env.get("OPENAI_BASE_URL") or "").strip() or OPENAI_URL
    target = origin(url)
    if target is not None and target == origin(home):
        return EndpointKey(env_key, "$OPENAI_API_KEY")
    to = _host_text(target) if target else "an unparseable base_url"
    mine = " (memdeck.base_url)" if my_base_url else ""
    return EndpointKey(None, "", withheld=(
        f"OPENAI_API_KEY was not sent to {to}{mine}: it is the key for {_host_text(origin(home))};"
        " set memdeck.api_key, or memdeck.api_key_env to the variable holding this "
        "endpoint's key"))


def _host_text(o: tuple[str, str, int | None] | None) -> str:
    if o is None:
        return "an unparseable OPENAI_BASE_URL"
    scheme, host, port = o
    shown = f"[{host}]" if ":" in host else host
    default = {"https": 443, "http": 80}.get(scheme)
    return shown if port in (None, default) else f"{shown}:{port}"
