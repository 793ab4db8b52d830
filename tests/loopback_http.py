"""The part every test HTTP server shares: a ThreadingHTTPServer on 127.0.0.1 in a thread.

Open connections are tracked so `stop()` ends idle keep-alive ones at once (each would
otherwise hold its handler thread until the client hangs up). `tests/llm_server.py` (Chat
Completions for memdeck) and `tests/codex_oracle/fake_responses.py` (the Responses API for the
real Codex) both serve through it.
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"


class LoopbackServer:
    def __init__(self, name: str, *, join_handlers: bool) -> None:
        self.name = name
        self.join_handlers = join_handlers  # stop() waits for handler threads to finish
        self.stopping = threading.Event()  # handlers that sleep wake on it
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, f"{self.name}: server not started"
        return int(self._httpd.server_address[1])

    @property
    def running(self) -> bool:
        return self._httpd is not None

    def handler_base(self) -> type[BaseHTTPRequestHandler]:
        """A handler class (HTTP/1.1 keep-alive, no logging) that registers its connection."""
        owner = self

        class Tracked(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like a real endpoint

            def setup(self) -> None:
                super().setup()
                # headers and body go out in separate writes; without this, Nagle plus the
                # client's delayed ACK adds ~40 ms to every reply
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with owner._conns_lock:
                    owner._conns.add(self.connection)

            def finish(self) -> None:
                with owner._conns_lock:
                    owner._conns.discard(self.connection)
                try:
                    super().finish()
                except OSError:
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        return Tracked

    def start(self, handler: type[BaseHTTPRequestHandler]) -> None:
        httpd = ThreadingHTTPServer((HOST, 0), handler)
        httpd.daemon_threads = not self.join_handlers
        httpd.block_on_close = self.join_handlers  # server_close() joins the handler threads
        httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        if self._httpd is None:
            return
        self._httpd.shutdown()
        with self._conns_lock:
            for s in list(self._conns):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self._httpd = None
