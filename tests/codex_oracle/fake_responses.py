"""A fake OpenAI Responses-API server for the real Codex binary (stdlib only, 127.0.0.1 only).

Codex 0.171 is pointed at it as a custom provider (see `runner.provider_flags`); it calls
`POST /v1/responses` with `"stream": true` and reads the answer as server-sent events:
`response.created`, `response.output_item.added`, `response.output_text.delta`,
`response.output_text.done`, `response.output_item.done`, `response.completed` (with usage).

    server = FakeResponses().start()          # or the `fake_responses` fixture
    server.push(text("hello"))                # the next request gets this reply
    server.push(call("exec_command", {"cmd": "echo hi"}), text("ran it"))
    server.responder = lambda req: ...        # decides when nothing is queued (None: default)
    server.on_request = lambda req: ...       # runs for every request before it is answered
    ...
    server.requests                           # every request, in arrival order
    server.turns() / server.phase1() / server.phase2()   # the /v1/responses requests by kind

Each recorded `Request` has `method`, `path`, `headers` (lower-case names), `body` (parsed
JSON or None), `at` (time.monotonic()) and `kind`:
- "phase1": Codex's memory extraction (strict `text.format` json_schema named
  `codex_output_schema` whose properties include `rollout_summary`; model `gpt-6-luna`);
- "phase2": the consolidation agent (header `x-openai-subagent: memory_consolidation`);
- "title": the TUI's thread-title request (same schema name `codex_output_schema`, one
  property `title`; turn metadata `thread_source: "thread_title"`), sent with the first user
  turn (and again with the next turn when it got no valid title);
- "turn": any other `/v1/responses` request (a user turn, or the follow-up after a tool call);
- "other": anything else (recorded, answered 200 `{}` or a model list for GET /v1/models;
  Codex 0.171 with an API-key provider was never seen calling anything but /v1/responses).

Replies (from `replies`, re-exported here): `text(s)` (an assistant message), `call(name,
args)` (a `function_call` item Codex runs; its output comes back in the next request's
`input`), `custom_call(name, input)` (a freeform `custom_tool_call`, e.g. the consolidation
agent's code-mode `exec`), `phase2_write(files)`, `json_text(obj)` (a message whose text is
JSON: what phase 1 expects), `reply(*items)` for several items, `http_error(status)`.

`push(..., kind="turn")` queues replies for one kind of request only (default "turn": the
TUI's title requests and Codex's pipeline never steal a scripted turn reply); `kind="any"`
queues for whatever comes next. Any reply takes `delay=` seconds: the turn stays open that
long (Codex runs its memory pipeline at the start of a root session, in parallel with the
first turn). A delay ends early when `server.release_when()` returns True, e.g.
`runner.run_exec(..., keep_open=8, until=runner.pipeline_finished(home))`.

With nothing queued and no `responder` (or a responder returning None) `default_reply`
answers: phase 1 gets valid JSON for exactly the fields of the schema it sent (V1: raw_memory,
rollout_summary, rollout_slug; V2: rollout_summary, rollout_slug) — "fake summary",
"fake-slug"; phase 2 gets a final message and no tool call (the agent ends at once: the job
ends `done` when the root already holds valid artifacts, else `error` /
`failed_invalid_artifacts`; set `server.phase2_files = valid_phase2_files("v2")` to have the
agent write them first); a title request gets `{"title": "Fake title"}`; any other json_schema
request a minimal valid instance; a turn gets `text(server.default_text)` (the first one after
`server.first_turn_delay` seconds). `server.errors` collects exceptions raised by hooks.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import pytest
from loopback_http import HOST, LoopbackServer

from .replies import (  # noqa: F401  (re-exported: one import for tests)
    CONSOLIDATION_SUBAGENT,
    PHASE1_SCHEMA_NAME,
    VALID_MEMORY_MD,
    VALID_SUMMARY,
    Reply,
    Request,
    add_files_patch,
    call,
    call_item,
    classify,
    custom_call,
    custom_call_item,
    http_error,
    json_text,
    message_item,
    phase1_answer,
    phase2_write,
    reply,
    schema_instance,
    sse_events,
    text,
    valid_phase2_files,
)

_response_ids = itertools.count(1)


@dataclass
class FakeResponses:
    default_text: str = "fake reply"
    first_turn_delay: float = 0.0  # seconds the first default "turn" reply waits
    # ends any reply's delay early once it returns True (polled every 50 ms), e.g. "Codex's
    # phase 2 has finished": the turn stays open exactly as long as needed
    release_when: Callable[[], bool] | None = None
    phase2_text: str = "Consolidation complete: nothing to change."
    # files the default phase-2 agent writes (via phase2_write) before its final message;
    # None: it writes nothing (Codex then fails the job unless the root is already valid)
    phase2_files: dict[str, str] | None = None
    responder: Callable[[Request], Reply | None] | None = None
    on_request: Callable[[Request], None] | None = None
    requests: list[Request] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # exceptions raised by hooks/responders
    _queues: dict[str, deque[Reply]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _serving: LoopbackServer = field(
        default_factory=lambda: LoopbackServer("fake-responses", join_handlers=False))
    _turns_answered: int = 0

    @property
    def _stop(self) -> threading.Event:
        return self._serving.stopping

    @property
    def port(self) -> int:
        return self._serving.port

    @property
    def base_url(self) -> str:
        """What Codex's `model_providers.<id>.base_url` must be."""
        return f"http://{HOST}:{self.port}/v1"

    def push(self, *replies: Reply, kind: str = "turn") -> None:
        """Queue replies for the next requests of `kind` ("turn", "phase1", "phase2",
        "title", or "any")."""
        with self._lock:
            self._queues.setdefault(kind, deque()).extend(replies)

    def pending(self, kind: str = "turn") -> int:
        """How many queued replies of `kind` are still unused."""
        with self._lock:
            return len(self._queues.get(kind, ()))

    def of_kind(self, kind: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    def turns(self) -> list[Request]:
        return self.of_kind("turn")

    def phase1(self) -> list[Request]:
        return self.of_kind("phase1")

    def phase2(self) -> list[Request]:
        return self.of_kind("phase2")

    def wait_for(self, pred: Callable[[Request], bool], timeout: float = 10.0) -> Request | None:
        """The first recorded request matching `pred`, waiting up to `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                found = next((r for r in self.requests if pred(r)), None)
            if found or time.monotonic() >= deadline:
                return found
            time.sleep(0.05)

    def default_reply(self, req: Request) -> Reply:
        if req.kind == "phase1":
            return json_text(phase1_answer(req.schema()))
        if req.kind == "phase2":
            answered = any(i.get("type") == "custom_tool_call_output" for i in req.input)
            if self.phase2_files and not answered:
                return phase2_write(self.phase2_files)
            return text(self.phase2_text)
        if req.kind == "title":
            return json_text({"title": "Fake title"})
        if req.schema() is not None:
            return json_text(schema_instance(req.schema()))
        with self._lock:
            first = self._turns_answered == 0
            self._turns_answered += 1
        return text(self.default_text, delay=self.first_turn_delay if first else 0.0)

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> FakeResponses:
        self._serving.start(_make_handler(self))
        return self

    def stop(self) -> None:
        self._serving.stop()

    def __enter__(self) -> FakeResponses:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ------------------------------------------------------------------------
    def _hold(self, seconds: float) -> bool:
        """Wait `seconds` (or until `release_when()`); True when the server is stopping."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._stop.wait(min(left, 0.05)):
                return True
            try:
                if self.release_when is not None and self.release_when():
                    return False
            except Exception as e:  # noqa: BLE001 - surfaced through server.errors
                self.errors.append(f"release_when: {e!r}")
                self.release_when = None
        return False

    def _choose(self, req: Request) -> Reply:
        with self._lock:
            for k in (req.kind, "any"):
                q = self._queues.get(k)
                if q:
                    return q.popleft()
        if self.responder is not None:
            got = self.responder(req)
            if got is not None:
                return got
        return self.default_reply(req)


def _make_handler(server: FakeResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(server._serving.handler_base()):  # type: ignore[misc]
        def _record(self) -> Request:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            if self.headers.get("Content-Encoding", "").lower() == "zstd" and raw:
                try:
                    import zstandard
                    raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=1 << 28)
                except Exception:  # noqa: BLE001 - recorded as body None
                    raw = b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            hdrs = {k.lower(): v for k, v in self.headers.items()}
            req = Request(self.command, self.path, hdrs, body, time.monotonic(),
                          classify(self.path, hdrs, body))
            with server._lock:
                server.requests.append(req)
            if server.on_request is not None:
                try:
                    server.on_request(req)
                except Exception as e:  # noqa: BLE001 - surfaced through server.errors
                    server.errors.append(f"on_request: {e!r}")
            return req

        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            self._record()
            try:
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": [], "models": []})
                               .encode())
                else:
                    self._send(404, b'{"error": {"message": "fake_responses: not found"}}')
            except OSError:
                self.close_connection = True

        def do_POST(self) -> None:  # noqa: N802
            req = self._record()
            try:
                if req.kind == "other":
                    self._send(200, b"{}")
                else:
                    self._answer(req)
            except OSError:
                self.close_connection = True

        def _answer(self, req: Request) -> None:
            try:
                rep = server._choose(req)
            except Exception as e:  # noqa: BLE001
                server.errors.append(f"responder: {e!r}")
                rep = http_error(500, f"fake_responses responder failed: {e!r}")
            if rep.delay and server._hold(rep.delay):
                self.close_connection = True
                return
            if rep.status != 200:
                body = json.dumps({"error": {"message": rep.error, "type": "server_error",
                                             "code": None}}).encode()
                self._send(rep.status, body)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            rid = f"resp_{next(_response_ids)}"
            for ev in sse_events(rep, rid, req.model or "fake-model"):
                self.wfile.write(f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

    return Handler


@pytest.fixture
def fake_responses() -> Iterator[FakeResponses]:
    server = FakeResponses().start()
    try:
        yield server
    finally:
        server.stop()
