"""The openai client's HTTP transport, with the reply cap enforced while the body streams in
(issue 12): a reply is counted as it arrives and reading stops at the cap, so a huge or
endless reply costs at most the cap in memory, never the whole body."""

from __future__ import annotations

from typing import Any

MAX_BODY_BYTES = 4 * 1024 * 1024  # whole HTTP body; JSON escaping can inflate content ~6x
MAX_ERROR_BODY_BYTES = 64 * 1024  # an error's body: only its first line is ever shown


def capped_http_client() -> Any:
    """The client's own httpx client (its timeouts, pool limits and redirects), whose
    transport stops reading a body at the cap: a reply over `MAX_BODY_BYTES` raises
    `ReplyTooLarge` (an OpenAIError: the client neither retries nor wraps it); an error body is
    cut at `MAX_ERROR_BODY_BYTES`. Replies are asked for uncompressed; one compressed anyway
    (gzip, deflate) is decompressed here, under the same cap, so a small bomb cannot expand."""
    import importlib
    import zlib

    import openai

    try:
        httpx: Any = importlib.import_module("httpx2")  # what openai >= 3 is built on
    except ImportError:  # pragma: no cover - older openai releases use httpx
        httpx = importlib.import_module("httpx")

    too_large, unreadable = cap_errors()

    class CappedStream(httpx.SyncByteStream):
        def __init__(self, inner: Any, limit: int, truncate: bool, gz: bool) -> None:
            self._inner, self._limit, self._truncate = inner, limit, truncate
            self._zlib = zlib.decompressobj(wbits=47) if gz else None  # gzip or zlib header

        def __iter__(self) -> Any:
            seen = 0
            for chunk in self._inner:
                if self._zlib is not None:
                    chunk = self._zlib.decompress(chunk, self._limit - seen + 1)
                seen += len(chunk)
                if seen > self._limit:
                    if not self._truncate:
                        raise too_large(None)
                    yield chunk[: len(chunk) - (seen - self._limit)]
                    return
                yield chunk
            if self._zlib is not None and len(rest := self._zlib.flush()) + seen > self._limit:
                if not self._truncate:
                    raise too_large(None)
                rest = rest[: self._limit - seen]
            if self._zlib is not None and rest:
                yield rest

        def close(self) -> None:
            self._inner.close()

    class CappedTransport(httpx.HTTPTransport):
        def handle_request(self, request: Any) -> Any:
            request.headers["Accept-Encoding"] = "identity"
            resp = super().handle_request(request)
            error = resp.status_code >= 400
            limit = MAX_ERROR_BODY_BYTES if error else MAX_BODY_BYTES
            headers = [(k, v) for k, v in resp.headers.multi_items()
                       if k.lower() not in ("content-encoding", "content-length")]
            length = resp.headers.get("content-length", "")
            if not error and length.isdigit() and int(length) > limit:
                resp.close()
                raise too_large(int(length))
            coding = resp.headers.get("content-encoding", "identity").strip().lower()
            if coding not in ("", "identity", "gzip", "x-gzip", "deflate"):
                resp.close()
                raise unreadable(coding)
            return httpx.Response(resp.status_code, headers=headers, extensions=resp.extensions,
                                  stream=CappedStream(resp.stream, limit, error,
                                                      coding not in ("", "identity")))

    limits = getattr(openai, "DEFAULT_CONNECTION_LIMITS", None)
    transport = CappedTransport(limits=limits) if limits is not None else CappedTransport()
    return openai.DefaultHttpxClient(transport=transport)


_CAP_ERRORS: tuple[Any, Any] | None = None


def cap_errors() -> tuple[Any, Any]:
    """(ReplyTooLarge, ReplyUnreadable), made on first use: they subclass `openai.OpenAIError`
    (so the client passes them through untouched) and `openai` is imported late."""
    global _CAP_ERRORS
    if _CAP_ERRORS is None:
        import openai

        class ReplyTooLarge(openai.OpenAIError):
            def __init__(self, size: int | None) -> None:
                super().__init__("reply over the cap")
                self.size = size  # from Content-Length; None when cut off while streaming

        class ReplyUnreadable(openai.OpenAIError):
            def __init__(self, coding: str) -> None:
                super().__init__(f"reply in content-encoding {coding}")
                self.coding = coding

        _CAP_ERRORS = (ReplyTooLarge, ReplyUnreadable)
    return _CAP_ERRORS
