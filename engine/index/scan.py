"""The index scanner: one pass over a rollout's new bytes, keeping only what the listing needs.

Every line is validated (so `bad_lines` is exact), but only a handful are decoded into Python
objects: the `session_meta` lines (thread id, cwd, source, memory mode), the first user
message (the preview), the first `turn_context` (the model). A cheap byte test decides which
lines are worth decoding; the JSON validator runs at gigabytes per second on the rest.

`ScanState` is plain data saved in memdeck's DB, so an appended file is read only from the
offset where the previous scan stopped, with the line numbering and findings carried over.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..codex import jsonfast
from ..codex.fragments import (
    is_legacy_meta,
    legacy_meta_payload,
    stored_source,
    user_prompt_from_payload,
    user_request,
)
from ..codex.line_problems import (
    BINARY_FILE,
    describe_bad_line,
    file_problem,
    no_type,
    not_an_object,
    too_long,
)
from ..codex.linestream import (
    HEAD_BYTES,
    MAX_LINE,
    StreamState,
    is_compressed,
    iter_batches,
    looks_binary,
    open_regular_file,
    read_head,
)
from ..redact import redact
from .rollout_names import not_regular_warning, thread_id_from_name

__all__ = ["ScanState", "not_regular_warning", "scan_file", "thread_id_from_name"]

MAX_PROBLEMS = 50  # details kept per file; the count is always exact
PREVIEW_CHARS = 400
CITATION_TAG = b"<oai-mem-citation"  # docs/codex-format.md "Citations"


@dataclass
class ScanState:
    offset: int = 0  # bytes consumed: just past the last complete line
    line_count: int = 0
    bad_lines: int = 0
    problems: list[list[int | str]] = field(default_factory=list)  # [line_no, kind, message]
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
    pending_bytes: int = 0
    file_problem: str | None = None
    has_content: bool = False  # a non-blank line was seen
    head_len: int = 0  # bytes of the file's head that `head_hash` covers
    head_hash: str = ""
    # the bytes read so far hold `<oai-mem-citation`: only such rollouts are parsed for
    # citation events (docs/architecture.md "The read path"); carried across appends
    cites_memory: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["problems"] = list(self.problems)
        return d

    def copy(self) -> ScanState:
        return ScanState(**self.to_dict())

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


def _clip(text: str) -> str:
    """The preview: redacted before it is cut (a key across the cut would leave a prefix no
    pattern recognises), over a window wider than any secret runs past the preview."""
    text = " ".join(redact(text[: PREVIEW_CHARS * 2 + 512]).split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def scan_file(path: str | os.PathLike[str], prior: ScanState | None = None,
              max_line: int = MAX_LINE) -> ScanState:
    """Scan `path` from where `prior` stopped (from the start when None or compressed)."""
    compressed = is_compressed(path)
    st = ScanState() if prior is None or compressed else prior.copy()
    if st.offset and not _still_the_same_file(path, st):
        st = ScanState()  # rewritten, not appended: read it all again
    if 0 < st.offset < HEAD_BYTES and looks_binary(read_head(path)):
        # the append reached into the head, and the head is what says "binary": the verdict
        # of one scan of the whole file (fuzzing found `null\n` + `\0\0\n` read two ways)
        st = ScanState()
    if st.offset == 0:
        st = ScanState(format="jsonl.zst" if compressed else "jsonl")
    st.file_problem = None
    stream = StreamState()
    line_no = st.line_count  # lines consumed so far
    for batch in iter_batches(path, stream, st.offset, max_line=max_line):
        if batch.oversized:
            line_no += 1
            st.add_problem(line_no, *too_long(batch.oversized, max_line))
            continue
        if line_no == 0 and looks_binary(stream.head):
            st.file_problem = BINARY_FILE
            return st
        if not st.cites_memory and CITATION_TAG in batch.data:  # whole lines: never cut
            st.cites_memory = True
        if not st.has_content and _first_line_is_legacy(batch.data):
            st.format = "legacy"  # the first non-blank line decides, once
        types = None if st.format == "legacy" else jsonfast.chunk_types(batch.data)
        if types is None:
            lines = batch.data.split(b"\n")
            _scan_lines(st, lines, line_no + 1)
            line_no += len(lines)
        else:
            st.has_content = True
            _scan_valid_chunk(st, batch.data, types, line_no + 1)
            line_no += len(types)
        st.line_count = line_no
    if st.line_count == 0 and looks_binary(stream.head):  # no newline at all
        st.file_problem = BINARY_FILE
        st.pending_bytes = stream.pending_bytes
        return st
    st.problems.sort(key=lambda p: p[0])
    st.offset = stream.end_offset
    st.pending_bytes = stream.pending_bytes
    if not compressed and st.head_len < min(HEAD_BYTES, st.offset):
        if stream.head:
            head = stream.head[: min(HEAD_BYTES, st.offset)]
            st.head_len, st.head_hash = len(head), _head_digest(head)
        else:
            _remember_head(path, st)
    st.file_problem = file_problem(stream.error, st.thread_id is not None, st.has_content,
                                   st.pending_bytes)
    return st


def _head_digest(data: bytes) -> str:
    return f"{zlib.crc32(data):08x}"  # change detection, not security


def _remember_head(path: str | os.PathLike[str], st: ScanState) -> None:
    head = read_head(path, min(HEAD_BYTES, st.offset))
    st.head_len, st.head_hash = len(head), _head_digest(head)


def _still_the_same_file(path: str | os.PathLike[str], st: ScanState) -> bool:
    """An append keeps the bytes already read: the head and the newline at the offset."""
    try:
        with open_regular_file(path) as f:  # a FIFO in its place: not the same file
            head = f.read(st.head_len)
            f.seek(st.offset - 1)
            last = f.read(1)
    except OSError:
        return False
    return last == b"\n" and _head_digest(head) == st.head_hash


def _first_line_is_legacy(data: bytes) -> bool:
    data = data.lstrip()  # skip blank lines (cheap: stops at the first other byte)
    end = data.find(b"\n")
    first = data if end < 0 else data[:end]
    if b'"type"' in first or not first.strip():
        return False
    try:
        return is_legacy_meta(jsonfast.loads(first))
    except ValueError:
        return False


def _line(data: bytes, index: int, start_hint: tuple[int, int] = (0, 0)) -> tuple[bytes, int]:
    """Line `index` of `data` and its start offset; `start_hint` = (line, offset) to walk from."""
    i, pos = start_hint
    while i < index:
        pos = data.index(b"\n", pos) + 1
        i += 1
    end = data.find(b"\n", pos)
    return (data[pos:] if end < 0 else data[pos:end]), pos


def _hits(data: bytes, needle: bytes) -> Iterator[tuple[int, bytes]]:
    """(line index, line) of each line containing `needle`, in order, found lazily."""
    index, counted = 0, 0
    pos = data.find(needle)
    while pos >= 0:
        index += data.count(b"\n", counted, pos)
        counted = pos
        start = data.rfind(b"\n", 0, pos) + 1
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        yield index, data[start:end]
        pos = data.find(needle, end)


def _scan_valid_chunk(st: ScanState, data: bytes, types: list[str], first: int) -> None:
    """Every line is a valid record: decode only the few the listing needs."""
    walk = (0, 0)
    i = -1
    for _ in range(types.count("session_meta")):
        i = types.index("session_meta", i + 1)
        line, pos = _line(data, i, walk)
        walk = (i, pos)
        payload = jsonfast.loads(line).get("payload")
        if isinstance(payload, dict):
            _take_meta_payload(st, payload, first + i)
    if st.model is None and "turn_context" in types:
        i = types.index("turn_context")
        _take_turn_context(st, jsonfast.loads(_line(data, i)[0]).get("payload"))
    if st.preview_event is None and b'"user_message"' in data:
        for i, line in _hits(data, b'"user_message"'):
            if types[i] == "event_msg" and _take_event_preview(st, jsonfast.loads(line)):
                break
    if st.preview_event is None and st.preview_item is None and b'"user"' in data:
        for i, line in _hits(data, b'"user"'):
            if types[i] == "response_item":
                _take_item_preview(st, jsonfast.loads(line).get("payload"))
                if st.preview_item is not None:
                    break


def _scan_lines(st: ScanState, lines: list[bytes], first: int) -> None:
    """Line by line: the exact path for chunks holding a bad, blank or legacy line."""
    line_type = jsonfast.line_type
    legacy = st.format == "legacy"
    n = first - 1
    for line in lines:
        n += 1
        if jsonfast.is_blank(line):
            continue
        st.has_content = True
        t = line_type(line)
        if t is False:
            st.add_problem(n, *describe_bad_line(line))
        elif legacy:
            if st.meta_lines == 0:  # the bare header of a pre-envelope rollout
                _take_meta_payload(st, legacy_meta_payload(jsonfast.loads(line)), n)
            else:
                _legacy_line(st, n, t, line)
        elif t is None:
            st.add_problem(n, *_untyped(line))
        elif t == "session_meta":
            payload = jsonfast.loads(line).get("payload")
            if isinstance(payload, dict):
                _take_meta_payload(st, payload, n)
        elif t == "response_item":
            if st.preview_item is None and b'"user"' in line:
                _take_item_preview(st, jsonfast.loads(line).get("payload"))
        elif t == "event_msg":
            if st.preview_event is None and b'"user_message"' in line:
                _take_event_preview(st, jsonfast.loads(line))
        elif t == "turn_context" and st.model is None:
            _take_turn_context(st, jsonfast.loads(line).get("payload"))


def _untyped(line: bytes) -> tuple[str, str]:
    """(kind, message) for valid JSON without a string `type`, as the full reader says it: a
    value that is not an object is named (rare lines: decoding them costs nothing)."""
    try:
        obj = jsonfast.loads(line)
    except ValueError:  # valid for the validator, not for the strict decoder
        return describe_bad_line(line)
    return no_type() if isinstance(obj, dict) else not_an_object(obj)


def _take_event_preview(st: ScanState, obj: Any) -> bool:
    payload = obj.get("payload") if isinstance(obj, dict) else None
    if isinstance(payload, dict) and payload.get("type") == "user_message":
        msg = payload.get("message")
        # the request, not the IDE context around it (docs/codex-format.md "Injected fragments")
        if isinstance(msg, str) and msg.strip():
            st.preview_event = _clip(_request_of(msg))
            return True
    return False


def _request_of(text: str) -> str:
    """The preview's text: the request under a VS Code / Desktop wrapper, else the text as it
    is (what counts as a user message, for the status, does not change)."""
    return user_request(text) or text


def _take_turn_context(st: ScanState, payload: Any) -> None:
    if isinstance(payload, dict):
        model = payload.get("model")
        st.model = model if isinstance(model, str) else None
        if st.cwd is None and isinstance(payload.get("cwd"), str):
            st.cwd = payload["cwd"]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _take_meta_payload(st: ScanState, p: dict[str, Any], line_no: int) -> None:
    """The few session_meta fields the listing needs, read straight from the payload (the
    same rules as `rollout.decode_session_meta`, without building the whole record)."""
    st.meta_lines += 1
    tid = p.get("id")
    if st.thread_id is None and isinstance(tid, str) and tid:
        st.thread_id = tid.lower()
        st.session_id = _str(p.get("session_id")) or tid
        st.started_at = _str(p.get("timestamp"))
        st.cwd = _str(p.get("cwd")) or st.cwd
        st.source = stored_source(p)
        st.originator = _str(p.get("originator"))
        st.cli_version = _str(p.get("cli_version"))
        st.history_mode = _str(p.get("history_mode")) or "legacy"
        git = p.get("git")
        st.git_branch = _str(git.get("branch")) if isinstance(git, dict) else None
    mode = p.get("memory_mode")
    if isinstance(mode, str) and mode:
        st.memory_mode = mode
        st.memory_mode_line = line_no


def _take_item_preview(st: ScanState, payload: Any) -> None:
    text = _request_of(user_prompt_from_payload(payload))
    if text:
        st.preview_item = _clip(text)


def _legacy_line(st: ScanState, n: int, t: str | None, line: bytes) -> None:
    if t is None:
        if b'"record_type"' not in line:
            st.add_problem(n, *_untyped(line))
        return
    if t == "message" and st.preview_item is None and b'"user"' in line:
        _take_item_preview(st, jsonfast.loads(line))
