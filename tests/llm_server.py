"""A scripted OpenAI-compatible HTTP server for tests (stdlib only, 127.0.0.1 only).

Tests push replies (`server.push(json_reply({...}), rate_limited(1), ...)`) or set
`server.handler = lambda request_json: reply`. Each POST /v1/chat/completions takes the next
reply; with nothing scripted the server answers 500 with `x-should-retry: false` and counts it
in `server.unscripted`, so a missing reply fails loudly instead of hanging. Every request is
recorded (`server.requests`), `server.latency` delays every reply, and `server.max_in_flight`
tells how many requests were being served at once. `streamed_reply` sends a huge completion
chunk by chunk (`server.streamed_bytes` tells how much of it went out before the client hung
up); `status_reply` and `refusal_reply` carry whatever text a test wants echoed back.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from loopback_http import HOST, LoopbackServer


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `kind`: "chat" | "status" | "raw" | "drop" | "stream"."""

    kind: str
    status: int = 200
    message: dict[str, Any] | None = None  # the assistant message for "chat"
    finish_reason: str = "stop"
    body: bytes = b""  # for "status" and "raw"
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0  # seconds to wait before answering (on top of server latency)
    usage: tuple[int, int] = (11, 7)  # prompt_tokens, completion_tokens
    model: str | None = None  # default: echo the requested model
    stream_size: int = 0  # "stream": this many characters of content, sent chunked
    stream_chunk: int = 64 * 1024
    stream_interval: float = 0.0  # seconds between chunks


def json_reply(obj: Any, **kw: Any) -> Reply:
    """An assistant message whose content is `obj` serialised as JSON (a str is sent as is)."""
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return Reply("chat", message={"role": "assistant", "content": text}, **kw)


def tool_call_reply(*calls: tuple[str, Any], content: str | None = None, **kw: Any) -> Reply:
    """Tool calls as (name, arguments); a str argument is sent verbatim (e.g. broken JSON)."""
    tool_calls = [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": name, "arguments": a if isinstance(a, str) else json.dumps(a)}}
        for i, (name, a) in enumerate(calls, 1)
    ]
    msg = {"role": "assistant", "content": content, "tool_calls": tool_calls}
    return Reply("chat", message=msg, finish_reason="tool_calls", **kw)


def status_reply(status: int, message: str = "scripted error", *,
                 headers: dict[str, str] | None = None, **kw: Any) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "server_error", "code": None}})
    return Reply("status", status=status, body=body.encode(),
                 headers=tuple((headers or {}).items()), **kw)


def rate_limited(retry_after: float, **kw: Any) -> Reply:
    return status_reply(429, "Rate limit reached", headers={"Retry-After": f"{retry_after:g}"},
                        **kw)


def server_error(**kw: Any) -> Reply:
    return status_reply(500, "The server had an error while processing your request", **kw)


def slow_reply(seconds: float, then: Reply | None = None) -> Reply:
    """Wait `seconds` (longer than the client's timeout) before answering."""
    base = then or json_reply({"rollout_summary": "late", "rollout_slug": None,
                               "raw_memory": "late"})
    return replace(base, delay=seconds)


def raw_reply(body: bytes | str, content_type: str = "application/json",
              status: int = 200) -> Reply:
    """A body sent verbatim: not JSON, not a completion, whatever a broken proxy sends."""
    data = body.encode() if isinstance(body, str) else body
    return Reply("raw", status=status, body=data, content_type=content_type)


def enormous_reply(size: int = 5 * 1024 * 1024) -> Reply:
    """A well-formed completion whose content is `size` characters long."""
    return Reply("chat", message={"role": "assistant", "content": "x" * size})


def refusal_reply(text: str, **kw: Any) -> Reply:
    """The model declines: `refusal` set, no content (what a safety system sends)."""
    return Reply("chat", message={"role": "assistant", "content": None, "refusal": text}, **kw)


def streamed_reply(size: int, *, chunk: int = 64 * 1024, interval: float = 0.0) -> Reply:
    """A completion whose content is `size` characters, sent with chunked transfer encoding
    (no Content-Length, so the client cannot refuse it up front) `chunk` bytes at a time,
    `interval` seconds apart; the server stops writing when the client hangs up."""
    return Reply("stream", stream_size=size, stream_chunk=chunk, stream_interval=interval)


def dropped_connection() -> Reply:
    """Headers and half the promised body, then the socket is closed."""
    return Reply("drop")


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or None
    at: float  # time.monotonic() when the request was read


@dataclass
class LLMServer:
    latency: float = 0.0
    handler: Callable[[Any], Reply] | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    unscripted: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    streamed_bytes: int = 0  # content bytes written by "stream" replies (until the client left)
    # what GET /v1/models lists (a test sets e.g. vLLM's {"max_model_len": 8192} on it)
    models: list[dict[str, Any]] = field(default_factory=lambda: [
        {"id": "test-model", "object": "model", "created": 0, "owned_by": "test"}])
    _queue: deque[Reply] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _serving: LoopbackServer = field(
        default_factory=lambda: LoopbackServer("llm-server", join_handlers=True))

    @property
    def _stop(self) -> threading.Event:
        return self._serving.stopping

    @property
    def port(self) -> int:
        return self._serving.port

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0
            self.unscripted = 0

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> LLMServer:
        self._serving.start(_make_handler(self))
        return self

    def stop(self) -> None:
        self._serving.stop()  # wakes sleeping handlers, ends idle keep-alive connections

    # -- serving ------------------------------------------------------------------------
    def _next_reply(self, body: Any) -> Reply | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.handler is not None:
            return self.handler(body)
        return None

    # in_flight counts the model calls (POST): a GET /v1/models (memdeck asks it for the
    # context length) is not one
    def _enter(self, rec: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(rec)
            if rec.method == "POST":
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self, method: str = "POST") -> None:
        if method != "POST":
            return
        with self._lock:
            self.in_flight -= 1


def _completion(reply: Reply, body: Any) -> bytes:
    model = reply.model or (body.get("model") if isinstance(body, dict) else None) or "test"
    p, c = reply.usage
    return json.dumps({
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": reply.message, "finish_reason": reply.finish_reason,
                     "logprobs": None}],
        "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
    }).encode()


def _make_handler(server: LLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(server._serving.handler_base()):  # type: ignore[misc]

        def _send(self, status: int, body: bytes, content_type: str = "application/json",
                  headers: tuple[tuple[str, str], ...] = ()) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _record(self) -> Any:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            hdrs = {k.lower(): v for k, v in self.headers.items()}
            server._enter(RecordedRequest(self.command, self.path, hdrs, body, time.monotonic()))
            return body

        def do_GET(self) -> None:  # noqa: N802
            self._record()
            try:
                if self.path.rstrip("/") == "/v1/models":
                    data = {"object": "list", "data": server.models}
                    self._send(200, json.dumps(data).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')
            except OSError:
                self.close_connection = True
            finally:
                server._leave("GET")

        def do_POST(self) -> None:  # noqa: N802
            body = self._record()
            try:
                self._answer(body)
            except OSError:  # the client gave up (timeout) and closed its end
                self.close_connection = True
            finally:
                server._leave()

        def _answer(self, body: Any) -> None:
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            reply = server._next_reply(body)
            wait = server.latency + (reply.delay if reply else 0.0)
            if wait and server._stop.wait(wait):
                self.close_connection = True
                return
            if reply is None:
                with server._lock:
                    server.unscripted += 1
                self._send(500, b'{"error": {"message": "llm_server: no scripted reply"}}',
                           headers=(("x-should-retry", "false"),))
            elif reply.kind == "chat":
                self._send(200, _completion(reply, body), headers=reply.headers)
            elif reply.kind in ("status", "raw"):
                self._send(reply.status, reply.body, reply.content_type, reply.headers)
            elif reply.kind == "stream":
                self._stream(reply, body)
            elif reply.kind == "drop":
                full = _completion(json_reply({"rollout_summary": "cut"}), body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(full)))
                self.end_headers()
                self.wfile.write(full[: len(full) // 2])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
            else:
                raise AssertionError(f"unknown reply kind {reply.kind!r}")

        def _stream(self, reply: Reply, body: Any) -> None:
            marker = "\u0000CONTENT\u0000"
            whole = _completion(replace(reply, message={"role": "assistant", "content": marker}),
                                body).decode()
            head, tail = whole.split(json.dumps(marker)[1:-1])
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def put(data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

            put(head.encode())
            block = b"x" * reply.stream_chunk
            left = reply.stream_size
            while left > 0:
                if reply.stream_interval and server._stop.wait(reply.stream_interval):
                    self.close_connection = True
                    return
                put(block[: min(left, len(block))])
                with server._lock:
                    server.streamed_bytes += min(left, len(block))
                left -= len(block)
            put(tail.encode())
            self.wfile.write(b"0\r\n\r\n")

    return Handler


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    server = LLMServer().start()
    try:
        yield server
    finally:
        server.stop()
