"""The index scanner and the full reader describe every bad line and every unusable file in the
same words, and those words are the ones the listing and the transcript have always shown.

Both readers take their findings from `codex/line_problems.py`; this pins the wording (a change
would show in the UI and in `--json` output) and checks that the two readers agree on each
kind of finding, line number, kind and message alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.index.scan import scan_file

META = (b'{"timestamp":"2026-12-01T10:00:00.000Z","type":"session_meta","payload":'
        b'{"id":"11111111-1111-7111-8111-111111111111","source":"cli"}}')
EVENT = b'{"timestamp":"2026-12-01T10:00:01.000Z","type":"event_msg","payload":{"type":"x"}}'


def findings(path: Path, max_line: int = 16 << 20) -> tuple[list[tuple[int, str, str]],
                                                              str | None]:
    """What both readers found in `path` (asserted equal): problems and the file problem."""
    s = scan_file(path, max_line=max_line)
    r = read_rollout(path, max_line=max_line)
    scanned = [(int(p[0]), str(p[1]), str(p[2])) for p in s.problems]
    read = [(p.line_no, p.kind, p.message) for p in r.problems]
    assert scanned == read
    assert s.file_problem == r.file_problem
    return read, r.file_problem


@pytest.mark.parametrize(("line", "kind", "message"), [
    pytest.param(b'{"type":"event_msg","payload":{"x":"\xff"}}', "invalid_utf8",
                 "invalid UTF-8 at byte 37", id="invalid-utf8"),
    pytest.param(b'{"type": oops}', "invalid_json", "invalid JSON: Expecting value (column 10)",
                 id="not-json"),
    pytest.param(b"\xef\xbb\xbf" + EVENT, "invalid_json",
                 "invalid JSON: starts with a byte-order mark", id="byte-order-mark"),
    pytest.param(b'{"type":"a\x00b"}', "nul_bytes", "NUL byte at column 11", id="nul-byte"),
    pytest.param(b"[1, 2]", "not_an_object", "a JSON list, not a rollout record",
                 id="not-an-object"),
    pytest.param(b'"just text"', "not_an_object", "a JSON str, not a rollout record",
                 id="a-string"),
    pytest.param(b'{"payload":{"type":"x"}}', "no_type", "no `type`: not a rollout record",
                 id="no-type"),
    pytest.param(b'{"type":"event_msg","payload":{"x":1}} trailing', "invalid_json",
                 "invalid JSON: Extra data (column 40)", id="trailing-garbage"),
])
def test_a_bad_line_in_the_same_words(tmp_path: Path, line: bytes, kind: str,
                                      message: str) -> None:
    path = tmp_path / "rollout-2026-12-01T10-00-00-11111111-1111-7111-8111-111111111111.jsonl"
    path.write_bytes(b"\n".join([META, EVENT, line, EVENT]) + b"\n")
    problems, file_problem = findings(path)
    assert problems == [(3, kind, message)]
    assert file_problem is None


def test_a_huge_line_in_the_same_words(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2026-12-01T10-00-00-11111111-1111-7111-8111-111111111111.jsonl"
    huge = b'{"type":"event_msg","payload":{"x":"' + b"a" * 2_999_961 + b'"}}'
    assert len(huge) == 3_000_000
    path.write_bytes(b"\n".join([META, huge, EVENT]) + b"\n")
    problems, _ = findings(path, max_line=1 << 20)
    assert problems == [(2, "too_long", "3.0 MB line skipped (limit 1 MiB)")]


@pytest.mark.parametrize(("data", "problem"), [
    pytest.param(b"", "empty file", id="empty"),
    pytest.param(b"\n  \n", "empty file", id="blank-lines-only"),
    pytest.param(META[:40], "nothing complete yet: the first line is still being written",
                 id="first-line-being-written"),
    pytest.param(EVENT + b"\n", "no session_meta line: not a Codex rollout", id="no-meta"),
    pytest.param(b"\x00" * 4096, "binary data (NUL bytes), not a rollout", id="zero-filled"),
    pytest.param(b"\x00\x01\x02\n" * 100, "binary data (NUL bytes), not a rollout",
                 id="binary-lines"),
])
def test_an_unusable_file_in_the_same_words(tmp_path: Path, data: bytes, problem: str) -> None:
    path = tmp_path / "rollout-2026-12-01T10-00-00-11111111-1111-7111-8111-111111111111.jsonl"
    path.write_bytes(data)
    _, file_problem = findings(path)
    assert file_problem == problem


def test_a_truncated_last_line_is_pending_not_bad(tmp_path: Path) -> None:
    """A last line without its newline may still be being written: neither reader calls it bad."""
    path = tmp_path / "rollout-2026-12-01T10-00-00-11111111-1111-7111-8111-111111111111.jsonl"
    path.write_bytes(META + b"\n" + EVENT[:30])
    problems, file_problem = findings(path)
    assert problems == [] and file_problem is None
    assert read_rollout(path).pending_bytes == scan_file(path).pending_bytes == 30
