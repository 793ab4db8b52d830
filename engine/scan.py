"""The index scanner: one pass over a rollout's new bytes, keeping only what the listing needs.

Every line is validated (so `bad_lines` is exact), but only a handful are decoded into Python
objects: the `session_meta` lines (thread id, cwd, source, memory mode), the first user
message (the preview), the first `turn_context` (the model). A cheap byte test decides which
lines are worth decoding; the JSON validator runs at gigabytes per second on the rest.

`ScanState` is plain data saved in memdeck's DB, so an appended file is read only from the
offset where the previous scan stopped, with the line numbering and findings carried over.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import jsonfast
from .linestream import MAX_LINE, StreamState, _open, is_compressed, iter_batches
from .rollout import (
    Message,
    decode_response_item,
    decode_session_meta,
    is_legacy_meta,
    legacy_meta,
    user_prompt_text,
)

MAX_PROBLEMS = 50  # details kept per file; the count is always exact
PREVIEW_CHARS = 400
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_NAME_ID = re.compile(rf"rollout-.*?({_UUID})(?:_{_UUID})?\.jsonl(?:\.zst)?$")
_WS = re.compile(r"\s+")


@dataclass
class ScanState:
    offset: int = 0  # bytes consumed: just past the last complete line
    line_count: int = 0
    bad_lines: int = 0
    problems: list[list[Any]] = field(default_factory=list)  # [line_no, kind, message]
    format: str | None = None  # jsonl | jsonl.zst | legacy
    thread_id: str | None = None
    session_id: str | None = None
    started_at: str | None = None
    cwd: str | None = None
    source: str | None = None
    originator: str | None = None
    cli_version: str | None = None
    history_mode: str | None = None
    git_branch: str | None = None
    model: str | None = None
    memory_mode: str | None = None
    memory_mode_line: int | None = None
    meta_lines: int = 0
    preview_event: str | None = None
    preview_item: str | None = None
    citation_lines: list[int] = field(default_factory=list)
    pending_bytes: int = 0
    file_problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScanState:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in known})

    @property
    def preview(self) -> str:
        return self.preview_event or self.preview_item or ""

    def add_problem(self, line_no: int, kind: str, message: str) -> None:
        self.bad_lines += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append([line_no, kind, message])


def thread_id_from_name(path: str | Path) -> str | None:
    m = _NAME_ID.search(Path(path).name)
    return m.group(1).lower() if m else None


def _clip(text: str) -> str:
    text = _WS.sub(" ", text).strip()
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _looks_binary(path: Path) -> bool:
    try:
        f = _open(path)
    except OSError:
        return False
    try:
        head = f.read(4096)
    except Exception:
        return False
    finally:
        f.close()
    return b"\x00" in head


def scan_file(path: Path, prior: ScanState | None = None, max_line: int = MAX_LINE) -> ScanState:
    """Scan `path` from where `prior` stopped (from the start when None or compressed)."""
    compressed = is_compressed(path)
    st = ScanState() if prior is None or compressed else ScanState.from_dict(prior.to_dict())
    if st.offset == 0:
        st.format = "jsonl.zst" if compressed else "jsonl"
        if _looks_binary(path):
            st.file_problem = "binary data (NUL bytes), not a rollout"
            return st
    st.file_problem = None
    stream = StreamState()
    legacy: bool | None = None if st.line_count == 0 or st.format is None else (
        st.format == "legacy")
    if st.line_count and st.thread_id is None and st.format != "legacy":
        legacy = None  # nothing readable yet: the first valid line still decides
    line_type = jsonfast.line_type
    for batch in iter_batches(path, stream, st.offset, st.line_count + 1, max_line=max_line):
        n = batch.first_line_no - 1
        for line in batch.lines:
            n += 1
            if not line or (line[0] in b" \t\r" and not line.strip()):
                continue
            t = line_type(line)
            if t is False:
                st.add_problem(n, *jsonfast.describe_bad_line(line))
                continue
            if legacy is None:
                legacy = False
                if t is None:
                    obj = jsonfast.loads(line)
                    if is_legacy_meta(obj):
                        legacy = True
                        st.format = "legacy"
                        _take_meta(st, legacy_meta(obj), n)
                        continue
            if legacy:
                _legacy_line(st, n, t, line)
                continue
            if t is None:
                st.add_problem(n, "no_type", "no `type`: not a rollout record")
            elif t == "session_meta":
                obj = jsonfast.loads(line)
                payload = obj.get("payload")
                if isinstance(payload, dict):
                    _take_meta(st, decode_session_meta(payload), n)
            elif t == "response_item":
                if st.preview_item is None and b'"user"' in line:
                    _take_item_preview(st, jsonfast.loads(line).get("payload"))
                if b"oai-mem-citation" in line:
                    st.citation_lines.append(n)
            elif t == "event_msg":
                if st.preview_event is None and b'"user_message"' in line:
                    payload = jsonfast.loads(line).get("payload")
                    if isinstance(payload, dict) and payload.get("type") == "user_message":
                        msg = payload.get("message")
                        if isinstance(msg, str) and msg.strip():
                            st.preview_event = _clip(msg)
            elif t == "turn_context" and st.model is None:
                payload = jsonfast.loads(line).get("payload")
                if isinstance(payload, dict):
                    model = payload.get("model")
                    st.model = model if isinstance(model, str) else None
                    if st.cwd is None and isinstance(payload.get("cwd"), str):
                        st.cwd = payload["cwd"]
        st.line_count = n
    for n, size in stream.oversized:
        st.add_problem(n, "too_long",
                       f"{size / 1e6:.1f} MB line skipped (limit {max_line // (1 << 20)} MiB)")
    st.problems.sort(key=lambda p: p[0])
    st.offset = stream.end_offset
    st.pending_bytes = stream.pending_bytes
    if stream.error:
        st.file_problem = stream.error
    elif st.line_count == 0 and not st.pending_bytes:
        st.file_problem = "empty file"
    elif st.thread_id is None and st.line_count:
        st.file_problem = "no session_meta line: not a Codex rollout"
    return st


def _take_meta(st: ScanState, meta: Any, line_no: int) -> None:
    st.meta_lines += 1
    if st.thread_id is None and meta.id:
        st.thread_id = meta.id.lower()
        st.session_id = meta.session_id
        st.started_at = meta.timestamp
        st.cwd = meta.cwd or st.cwd
        st.source = meta.source
        st.originator = meta.originator
        st.cli_version = meta.cli_version
        st.history_mode = meta.history_mode
        st.git_branch = meta.git.branch if meta.git else None
    if meta.memory_mode:
        st.memory_mode = meta.memory_mode
        st.memory_mode_line = line_no


def _take_item_preview(st: ScanState, payload: Any) -> None:
    if not isinstance(payload, dict) or payload.get("type") != "message":
        return
    item = decode_response_item(payload)
    if isinstance(item, Message) and item.role == "user":
        text = user_prompt_text(item)
        if text:
            st.preview_item = _clip(text)


def _legacy_line(st: ScanState, n: int, t: str | None, line: bytes) -> None:
    if t is None:
        if b'"record_type"' not in line:
            st.add_problem(n, "no_type", "no `type`: not a rollout record")
        return
    if t == "message" and st.preview_item is None and b'"user"' in line:
        _take_item_preview(st, jsonfast.loads(line))
