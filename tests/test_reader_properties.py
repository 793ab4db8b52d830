"""Property tests for the two rollout readers.

`read_rollout` (the full reader behind `memdeck show`) and `scan_file` (the index scanner behind
the listing) are two implementations of the same rules. Whatever bytes a rollout holds, neither
may raise, and they must agree on what a user sees in both places: how many lines are bad (and
which), the thread id and the memory mode. The scanner's incremental mode must find exactly
what one scan of the whole file finds.

Examples are derandomized so the suite is stable; set MEMDECK_PROPERTY_EXAMPLES=5000 to explore
with fresh random examples.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.index.scan import MAX_PROBLEMS, scan_file

_EXPLORE = int(os.environ.get("MEMDECK_PROPERTY_EXAMPLES", "0"))
PROPERTY = settings(
    max_examples=_EXPLORE or 100,
    deadline=None,
    derandomize=not _EXPLORE,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

ROLLOUTS = Path(__file__).resolve().parent / "fixtures" / "rollouts"
_shared = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "rollouts"
if _shared.is_dir():
    ROLLOUTS = _shared

LEGACY = (
    b'{"id":"0199a000-0000-7000-8000-0000000000aa","timestamp":"2025-08-06T18:02:11.000Z",'
    b'"instructions":null,"git":null}\n'
    b'{"record_type":"state"}\n'
    b'{"type":"message","role":"user","content":[{"type":"input_text","text":"hello legacy"}]}\n'
    b'{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}\n'
)


def _load() -> dict[str, bytes]:
    out = {p.name: p.read_bytes() for p in sorted(ROLLOUTS.glob("*.jsonl"))}
    with (ROLLOUTS / "compressed.jsonl.zst").open("rb") as f:
        out["compressed.jsonl"] = zstandard.ZstdDecompressor().stream_reader(f).read()
    out["legacy.jsonl"] = LEGACY
    return out


SAMPLES = _load()
MMD = SAMPLES["memory-mode-disabled-later.jsonl"]  # two session_meta lines
CLI = SAMPLES["cli-preferences.jsonl"]
samples = st.sampled_from(sorted(SAMPLES.values()))

# classic invalid UTF-8: stray continuation, bad lead bytes, truncated sequence, overlong,
# beyond U+10FFFF
INVALID_UTF8 = [b"\x80", b"\xbf", b"\xfe", b"\xff", b"\xc3", b"\xe2\x82", b"\xc0\xaf",
                b"\xe0\x80\xaf", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80"]
UTF8_SURROGATES = [b"\xed\xa0\x80", b"\xed\xbf\xbf"]  # UTF-8-encoded surrogates: invalid too


@pytest.fixture(scope="module")
def workdir() -> Any:
    with tempfile.TemporaryDirectory(prefix="memdeck-props-") as d:
        yield Path(d)


def write(workdir: Path, data: bytes, name: str = "rollout-2026-12-01T10-00-00-p.jsonl") -> Path:
    path = workdir / name
    path.write_bytes(data)
    return path


def lines_of(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def read_both(path: Path) -> tuple[Any, Any]:
    """Both readers on one file; an exception here is a failure of the property."""
    return scan_file(path), read_rollout(path)


def assert_agree(path: Path) -> None:
    s, r = read_both(path)
    assert s.bad_lines == r.bad_lines, (s.problems, r.problems)
    if s.bad_lines <= MAX_PROBLEMS:
        assert [p[0] for p in s.problems] == [p.line_no for p in r.problems]
    rid = r.meta.id.lower() if r.meta is not None and r.meta.id else None
    assert s.thread_id == rid
    assert s.memory_mode == r.memory_mode


def assert_sane(path: Path, data: bytes) -> None:
    """Structural facts that hold for any bytes at all."""
    s, r = read_both(path)
    binary = s.file_problem is not None and "binary" in s.file_problem
    if binary:
        assert s.offset == 0 and s.bad_lines == 0
        return
    assert s.offset + s.pending_bytes == len(data)
    assert s.line_count == data[: s.offset].count(b"\n")
    assert all(1 <= p[0] <= s.line_count for p in s.problems)
    assert 0 <= s.bad_lines <= s.line_count
    assert all(1 <= p.line_no <= data.count(b"\n") for p in r.problems)
    assert [p.line_no for p in r.problems] == sorted(p.line_no for p in r.problems)


# --------------------------------------------------------------------------------------
# any bytes at all

json_ish = st.lists(st.sampled_from([
    b"{", b"}", b"[", b"]", b'"', b":", b",", b" ", b"\n", b"\r\n", b"\t", b"\\", b"u", b"1",
    b"-", b"e", b"null", b"true", b'"type"', b'"payload"', b'"session_meta"', b'"id"',
    b'"response_item"', b'"event_msg"', b'"user_message"', b'"message"', b'"memory_mode"',
    b'"disabled"', b'"record_type"', b"\x00", b"\xff", b"\xc3\xa9",
]), max_size=200).map(b"".join)


@PROPERTY
@given(data=st.binary(max_size=4096) | json_ish)
def test_random_bytes_never_raise(workdir, data) -> None:
    assert_sane(write(workdir, data), data)


@PROPERTY
@given(data=st.binary(max_size=2048))
def test_random_bytes_as_zst_never_raise(workdir, data) -> None:
    path = write(workdir, data, "rollout-2026-12-01T10-00-00-p.jsonl.zst")
    s, r = read_both(path)
    assert s.file_problem is not None or s.thread_id is not None
    assert (s.file_problem is None) == (r.file_problem is None)


@PROPERTY
@given(data=samples, level=st.integers(1, 5), cut=st.floats(0.0, 1.0))
def test_cut_zst_never_raises(workdir, data, level, cut) -> None:
    packed = zstandard.ZstdCompressor(level=level).compress(data)
    path = write(workdir, packed[: int(len(packed) * cut)],
                 "rollout-2026-12-01T10-00-00-p.jsonl.zst")
    s, r = read_both(path)
    assert s.bad_lines == r.bad_lines
    assert s.thread_id == (r.meta.id if r.meta else None)


# --------------------------------------------------------------------------------------
# mutations of the real fixtures: both readers agree


@PROPERTY
@given(data=samples, st_data=st.data())
def test_truncated_at_any_byte(workdir, data, st_data) -> None:
    cut = st_data.draw(st.integers(0, len(data)))
    path = write(workdir, data[:cut])
    assert_agree(path)
    assert_sane(path, data[:cut])


@PROPERTY
@given(data=samples, st_data=st.data())
def test_flipped_bytes(workdir, data, st_data) -> None:
    b = bytearray(data)
    for _ in range(st_data.draw(st.integers(1, 6))):
        i = st_data.draw(st.integers(0, len(b) - 1))
        b[i] = st_data.draw(st.integers(1, 255))  # NUL has its own test below
    path = write(workdir, bytes(b))
    assert_agree(path)
    assert_sane(path, bytes(b))


@PROPERTY
@given(data=samples, st_data=st.data())
def test_inserted_bytes(workdir, data, st_data) -> None:
    b = bytearray(data)
    for _ in range(st_data.draw(st.integers(1, 6))):
        i = st_data.draw(st.integers(0, len(b)))
        b[i:i] = st_data.draw(st.binary(min_size=1, max_size=4).filter(lambda x: b"\0" not in x))
    path = write(workdir, bytes(b))
    assert_agree(path)
    assert_sane(path, bytes(b))


@PROPERTY
@given(data=samples, st_data=st.data())
def test_duplicated_lines(workdir, data, st_data) -> None:
    lines = lines_of(data)
    for _ in range(st_data.draw(st.integers(1, 5))):
        src = st_data.draw(st.integers(0, len(lines) - 1))
        dst = st_data.draw(st.integers(0, len(lines)))
        lines.insert(dst, lines[src])
    out = b"\n".join(lines)
    path = write(workdir, out)
    assert_agree(path)
    assert_sane(path, out)


@PROPERTY
@given(data=samples, st_data=st.data())
def test_shuffled_lines(workdir, data, st_data) -> None:
    out = b"\n".join(st_data.draw(st.permutations(lines_of(data))))
    path = write(workdir, out)
    assert_agree(path)
    assert_sane(path, out)


@PROPERTY
@given(data=samples, st_data=st.data())
def test_invalid_utf8_inserted(workdir, data, st_data) -> None:
    b = bytearray(data)
    for _ in range(st_data.draw(st.integers(1, 3))):
        i = st_data.draw(st.integers(0, len(b)))
        b[i:i] = st_data.draw(st.sampled_from(INVALID_UTF8))
    path = write(workdir, bytes(b))
    assert_agree(path)
    s, r = read_both(path)
    kinds = {p.kind for p in r.problems}
    assert kinds <= {"invalid_utf8", "invalid_json", "not_an_object", "no_type"}


def _insert_nul(data: bytes, positions: list[int]) -> bytes:
    b = bytearray(data)
    for i in sorted(positions, reverse=True):
        b[i:i] = b"\x00"
    return bytes(b)


@PROPERTY
@example(data=CLI, positions=[CLI.index(b"make check-quick")])
@given(data=samples, positions=st.lists(st.integers(0, 10**6), min_size=1, max_size=3))
def test_nul_bytes_inserted(workdir, data, positions) -> None:
    out = _insert_nul(data, [p % (len(data) + 1) for p in positions])
    assert_agree(write(workdir, out))


# --------------------------------------------------------------------------------------
# well-formed JSON with unexpected shapes

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=6,
)


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _replace(obj: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    obj[path[0]] = _replace(obj[path[0]], path[1:], value)
    return obj


def retype(data: bytes, line_no: int, pick: int, value: Any) -> bytes:
    lines = lines_of(data)
    i = line_no % len(lines)
    try:
        obj = json.loads(lines[i])
    except ValueError:
        return data
    paths = _paths(obj)
    path = paths[pick % len(paths)]
    lines[i] = json.dumps(_replace(obj, path, value)).encode()
    return b"\n".join(lines)


@PROPERTY
@example(data=CLI, line_no=4, pick=6, value=5)  # user message content -> 5
@example(data=MMD, line_no=0, pick=3, value=None)  # first session_meta payload -> null
@given(data=samples, line_no=st.integers(0, 30), pick=st.integers(0, 200), value=json_values)
def test_values_of_other_types(workdir, data, line_no, pick, value) -> None:
    assert_agree(write(workdir, retype(data, line_no, pick, value)))


def test_retype_example_hits_what_it_says() -> None:
    """The explicit examples above change the fields their comments name."""
    user = json.loads(lines_of(retype(CLI, 4, 6, 5))[4])
    assert user["payload"]["content"] == 5
    meta = json.loads(lines_of(retype(MMD, 0, 3, None))[0])
    assert meta["type"] == "session_meta" and meta["payload"] is None


# --------------------------------------------------------------------------------------
# the same rules, line by line: cases the random search rarely builds


def _with_line(extra: bytes) -> bytes:
    lines = lines_of(CLI)
    lines.insert(2, extra)
    return b"\n".join(lines)


EV = b'{"timestamp":"2026-12-01T06:39:45.000Z","type":"event_msg","payload":{"type":"token_count",'


@pytest.mark.parametrize("data", [
    pytest.param(_with_line(EV + b'"note":"\\ud800"}}'), id="lone-surrogate-escape"),
    pytest.param(_with_line(EV + b'"note":"\xed\xa0\x80"}}'), id="utf8-encoded-surrogate"),
    pytest.param(_with_line(EV + b'"n":123456789012345678901234567890}}'), id="big-integer"),
    pytest.param(_with_line(EV + b'"n":1e400}}'), id="float-overflow"),
    pytest.param(_with_line(b"\x0b"), id="vertical-tab-line",
    ),
    pytest.param(_with_line(b"\x0c\r"), id="form-feed-line"),
    pytest.param(
        b'{"type":"session_meta","type":"turn_context","payload":'
        b'{"id":"11111111-1111-7111-8111-111111111111","source":"cli"}}\n' + CLI,
        id="duplicate-type-key"),
    pytest.param(lines_of(MMD)[0].replace(b',"id":', b',"xid":') + b"\n"
                 + b"\n".join(lines_of(MMD)[1:]), id="first-meta-without-id"),
    pytest.param(_with_line(EV + b'"note":"a\\u00e9\\ud83d\\ude00b"}}'), id="valid-escapes"),
    pytest.param(_with_line(b"   \t  \r"), id="whitespace-line"),
    pytest.param(_with_line(b"\xef\xbb\xbf" + EV + b'"n":1}}'), id="utf8-bom-line"),
    pytest.param(_with_line(EV + b'"n":18446744073709551615}}'), id="u64-max"),
])
def test_readers_agree_on_edge_lines(workdir, data) -> None:
    assert_agree(write(workdir, data))


# --------------------------------------------------------------------------------------
# incremental scans


SCAN_FIELDS = ("thread_id", "memory_mode", "memory_mode_line", "preview", "bad_lines",
               "problems", "line_count", "offset", "pending_bytes",
               "format", "source", "cwd", "model", "file_problem")


def scan_in_parts(path: Path, data: bytes, cuts: list[int]):
    """Write data[:c1], scan; append up to c2, scan on from there; ...; then the rest."""
    bounds = sorted(set(cuts)) + [len(data)]
    path.write_bytes(b"")
    state = None
    done = 0
    for c in bounds:
        with path.open("ab") as f:
            f.write(data[done:c])
        done = c
        state = scan_file(path, state)
    return state


def assert_same_scan(whole, parts, context: object = None) -> None:
    for name in SCAN_FIELDS:
        assert getattr(parts, name) == getattr(whole, name), (name, context)


@PROPERTY
@given(data=samples, st_data=st.data())
def test_incremental_scan_equals_one_scan(workdir, data, st_data) -> None:
    cuts = st_data.draw(st.lists(st.integers(0, len(data)), min_size=1, max_size=4))
    path = write(workdir, data)
    whole = scan_file(path)
    assert_same_scan(whole, scan_in_parts(path, data, cuts))


@PROPERTY
@given(data=samples, st_data=st.data())
def test_incremental_scan_equals_one_scan_on_damaged_files(workdir, data, st_data) -> None:
    b = bytearray(data)
    for _ in range(st_data.draw(st.integers(0, 4))):
        i = st_data.draw(st.integers(0, len(b)))
        b[i:i] = st_data.draw(st.sampled_from([b"\n", b"}", b"{", b'"', b"\xff", b"\r\n", b" "]))
    cut_at = st_data.draw(st.integers(0, len(b)))
    out = bytes(b[:cut_at])
    cuts = st_data.draw(st.lists(st.integers(0, len(out)), min_size=1, max_size=4))
    path = write(workdir, out)
    whole = scan_file(path)
    assert_same_scan(whole, scan_in_parts(path, out, cuts))


def test_incremental_scan_every_split_of_every_fixture(workdir) -> None:
    """Exhaustive over split points for the real fixtures (they are small)."""
    for name, data in SAMPLES.items():
        path = write(workdir, data)
        whole = scan_file(path)
        step = max(1, len(data) // 300)
        for cut in range(0, len(data) + 1, step):
            assert_same_scan(whole, scan_in_parts(path, data, [cut]), (name, cut))


def test_incremental_scan_legacy_decision(workdir) -> None:
    turn_context = lines_of(CLI)[1] + b"\n"
    data = turn_context + LEGACY
    path = write(workdir, data)
    whole = scan_file(path)
    assert_same_scan(whole, scan_in_parts(path, data, [len(turn_context)]))
