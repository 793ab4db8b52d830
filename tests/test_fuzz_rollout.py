"""Fuzzing the rollout readers (issue 12 "What must hold"): nothing raises, nothing is lost
without being counted.

A rollout is built from lines of every kind — records of 0.34-era and 0.169 rollouts, JSON
of the wrong shape, random bytes, invalid UTF-8, long lines — and read whole (`read_rollout`),
indexed (`scan_file`, also in two appends) and streamed (`iter_batches`, with tiny chunks and
line limits so that "huge" lines cost nothing). Every complete line must be a record, a
counted problem, blank, or one of the two kinds Codex itself drops (legacy `record_type`
markers, `ghost_snapshot` items); the bytes after the last newline are pending, counted.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memdeck.engine.codex import jsonfast
from memdeck.engine.codex.line_problems import BINARY_FILE
from memdeck.engine.codex.linestream import StreamState, iter_batches
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.codex.transcript import transcript
from memdeck.engine.index.scan import MAX_PROBLEMS, scan_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "rollouts"


def fuzz(n: int) -> settings:
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def _lines(name: str) -> list[bytes]:
    return [ln for ln in (FIXTURES / name).read_bytes().split(b"\n") if ln]


ERA_034 = _lines("codex-0.34-no-source.jsonl")
ERA_0169 = _lines("codex-0.169-tui.jsonl") + _lines("codex-0.169-exec.jsonl")
LEGACY = [b'{"id":"0199a000-0000-7000-8000-0000000000aa","timestamp":"2025-08-06T18:02:11Z"}',
          b'{"record_type":"state"}',
          b'{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}']
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "payload", "id", "content", "role", "memory_mode", "x"]),
        kids, max_size=4),
    max_leaves=8)
wrong_shape = json_values.map(lambda v: json.dumps(v).encode()) | st.builds(
    lambda t, p: json.dumps({"type": t, "payload": p}).encode(),
    st.sampled_from(["session_meta", "response_item", "event_msg", "turn_context",
                     "compacted", "inter_agent_communication", "world_state", "new_kind"]),
    json_values)
line = st.one_of(
    st.sampled_from(ERA_034), st.sampled_from(ERA_0169), st.sampled_from(LEGACY), wrong_shape,
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
    st.sampled_from([b"", b"   ", b"\r", b"\xef\xbb\xbf{}", b'{"type":"x","p":"\xff\xfe"}',
                     b"\x00\x00", b"{" * 3000, b'{"type":"event_msg","payload":' * 400]),
    st.integers(1, 2000).map(lambda n: b'{"type":"response_item","payload":"' + b"y" * n + b'"}'),
)
rollouts = st.builds(lambda ls, tail: b"\n".join(ls) + b"\n" + tail,
                     st.lists(line, max_size=25), st.binary(max_size=30) | st.just(b""))


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


def _write(workdir: Path, data: bytes) -> Path:
    p = workdir / "rollout-2026-12-01T10-00-00-f.jsonl"
    p.write_bytes(data)
    return p


def _dropped_by_design(raw: bytes) -> bool:
    try:
        obj = json.loads(raw)
    except ValueError:
        return False
    if not isinstance(obj, dict):
        return False
    payload = obj.get("payload")
    return "record_type" in obj or (isinstance(payload, dict)
                                    and payload.get("type") == "ghost_snapshot")


def assert_every_line_accounted(data: bytes, path: Path) -> None:
    r = read_rollout(path)
    complete = data.split(b"\n")[:-1]
    if r.file_problem == BINARY_FILE:  # the whole file is reported, its lines are not read
        assert r.lines == () and r.problems == ()
        return
    assert r.pending_bytes == len(data) - len(b"\n".join(complete)) - (1 if complete else 0)
    counted = [x.line_no for x in r.lines] + [p.line_no for p in r.problems]
    assert len(counted) == len(set(counted)), "a line counted twice"
    assert all(1 <= n <= len(complete) for n in counted)
    for n, raw in enumerate(complete, 1):
        if n not in counted:
            assert jsonfast.is_blank(raw) or _dropped_by_design(raw), (n, raw[:80])
    transcript(r, include_events=True)  # the display of any record never raises
    s = scan_file(path)
    assert s.line_count == len(complete)
    assert s.bad_lines == len(r.problems)
    assert [p[0] for p in s.problems] == [p.line_no for p in r.problems][:MAX_PROBLEMS]
    assert s.pending_bytes == r.pending_bytes


@fuzz(1500)
@given(data=rollouts)
def test_every_line_is_a_record_a_counted_problem_or_blank(workdir, data: bytes) -> None:
    assert_every_line_accounted(data, _write(workdir, data))


@fuzz(600)
@example(data=b"null\n\x00\x00\n", cut=5)  # the append made the head binary: found here
@given(data=rollouts, cut=st.integers(0, 10**6))
def test_an_append_finds_what_one_scan_finds(workdir, data: bytes, cut: int) -> None:
    cut = min(cut, len(data))
    path = _write(workdir, data[:cut])
    first = scan_file(path)
    path.write_bytes(data)
    again = scan_file(path, first)
    whole = scan_file(path)
    for k in ("line_count", "bad_lines", "problems", "thread_id", "memory_mode",
              "memory_mode_line", "pending_bytes", "offset", "cites_memory"):
        assert getattr(again, k) == getattr(whole, k), k


def _stream(path: Path, start: int, max_line: int, chunk: int) -> tuple[list, StreamState]:
    state = StreamState()
    out = []
    for b in iter_batches(path, state, start, max_line=max_line, chunk=chunk):
        out.extend([("big", b.oversized)] if b.oversized else [("ok", ln) for ln in b.lines])
    return out, state


@fuzz(1200)
@given(data=rollouts, start=st.integers(0, 10**6), max_line=st.integers(1, 200),
       chunk=st.integers(8, 400))
def test_the_stream_yields_or_counts_every_line_from_any_start(workdir, data: bytes, start: int,
                                                              max_line: int,
                                                              chunk: int) -> None:
    nls = [i for i, c in enumerate(data) if c == 10]
    starts = [0] + [i + 1 for i in nls]
    start = starts[start % len(starts)]  # an incremental read starts just past a newline
    path = _write(workdir, data)
    got, state = _stream(path, start, max_line, chunk)
    body = data[start:]
    expected = body.split(b"\n")[:-1]
    assert len(got) == len(expected), "a line neither yielded nor counted"
    for (kind, value), raw in zip(got, expected, strict=True):
        if kind == "ok":
            assert value == raw
        else:
            assert value == len(raw) > max_line
    assert state.error is None
    assert state.end_offset == (nls[-1] + 1 if nls and nls[-1] >= start else start)
    assert state.pending_bytes == len(data) - state.end_offset


@fuzz(400)
@given(data=rollouts, max_line=st.integers(1, 200), chunk=st.integers(8, 400))
def test_a_compressed_stream_yields_the_same_lines(workdir, data: bytes, max_line: int,
                                                   chunk: int) -> None:
    plain, _ = _stream(_write(workdir, data), 0, max_line, chunk)
    zpath = workdir / "rollout-2026-12-01T10-00-00-f.jsonl.zst"
    zpath.write_bytes(zstandard.ZstdCompressor(level=1).compress(data))
    packed, state = _stream(zpath, 0, max_line, chunk)
    assert packed == plain and state.error is None
