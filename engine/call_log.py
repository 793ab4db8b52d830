"""The model-call log: one row per model call in memdeck's DB (`model_calls`, migration 2).

Failed calls are logged too, with their one-line error (redacted: it quotes the endpoint), so
`memdeck` can show what a run cost and why it stopped. Pass `Store.conn()` (one connection per
thread); a row is a single INSERT, so it commits on its own or joins the caller's open
transaction.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, replace

from .redact import redact
from .store import StoreError

_COLUMNS = ("started_at", "backend", "purpose", "prompt_name", "prompt_hash", "model",
            "thread_id", "input_tokens", "output_tokens", "duration_ms", "error")
MAX_ERROR_CHARS = 500


def prompt_hash(text: str) -> str:
    """sha256 of the UTF-8 text, first 16 hex digits: which prompt version produced a row."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def log_call(conn: sqlite3.Connection, *, backend: str, purpose: str, prompt_name: str,
             prompt_hash: str, model: str | None, thread_id: str | None, input_tokens: int,
             output_tokens: int, duration_ms: int, error: str | None,
             started_at: float) -> int:
    """Record one call (`started_at` by the engine's clock); returns the row id."""
    if error is not None:
        error = redact(" ".join(error[: MAX_ERROR_CHARS * 20].split()))[:MAX_ERROR_CHARS]
    values = (started_at, backend, purpose, prompt_name, prompt_hash, model, thread_id,
              int(input_tokens), int(output_tokens), int(duration_ms), error)
    sql = (f"INSERT INTO model_calls ({', '.join(_COLUMNS)}) "
           f"VALUES ({', '.join('?' * len(_COLUMNS))})")
    try:
        cur = conn.execute(sql, values)
    except sqlite3.Error as e:
        raise StoreError(f"cannot record the model call in memdeck's database: {e}") from None
    return int(cur.lastrowid or 0)


@dataclass(frozen=True)
class CallRecord:
    id: int
    started_at: float
    backend: str
    purpose: str
    prompt_name: str
    prompt_hash: str
    model: str | None
    thread_id: str | None
    input_tokens: int
    output_tokens: int
    duration_ms: int
    error: str | None


def recent_calls(conn: sqlite3.Connection, limit: int = 50) -> list[CallRecord]:
    """The newest calls first."""
    try:
        rows = conn.execute(
            f"SELECT id, {', '.join(_COLUMNS)} FROM model_calls "
            "ORDER BY started_at DESC, id DESC LIMIT ?", (limit,)).fetchall()
    except sqlite3.Error as e:
        raise StoreError(f"cannot read the model-call log: {e}") from None
    # a row written before errors were redacted is shown redacted
    records = [CallRecord(*tuple(r)) for r in rows]
    return [replace(c, error=redact(c.error)) if c.error else c for c in records]
