"""Rollout reading on real files: the shared fixtures, damaged files, and the status column.

Every case goes through both readers (`read_rollout`, the full transcript reader, and
`scan_file`, the index scanner) and, where a user would see it, through
`Engine.open(home).sessions()`. A damaged file must be reported, never raise, and never stop
the other sessions of the same home from being listed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from memdeck.engine import Engine
from memdeck.engine.codex.rollout import Message, read_rollout, user_prompt_text
from memdeck.engine.index.scan import scan_file

CLI_ID = "01a23054-a1fc-7969-acf0-6947af085e83"
CORRUPT_ID = "01a22c09-fffc-7d28-989e-c997a9247459"
DISABLED_ID = "01a22e2f-50fc-7e24-b476-7db9a01a471c"
SUBAGENT_ID = "01a2301d-b37c-7fe9-8d12-55b17f94b213"
CITES_ID = "01a23130-5bfc-7f67-aecc-1c0d25836e04"
ZST_ID = "01a2259a-0cfc-7bfd-88be-bf7b0b290123"
LEGACY_ID = "0199a000-0000-7000-8000-0000000000aa"
NAMED_ID = "0199bbbb-cccc-7ddd-8eee-ffff00001111"

CLI_PREVIEW = ("The checkout tests fail. We use MySQL 8.4 here, and always run `make check-quick`; "
               "the full suite takes twenty minutes.")

# fixture -> (thread id, source, last memory_mode, preview start, bad lines, status at 8 h idle)
FIXTURES = {
    "cli-preferences.jsonl": (CLI_ID, "cli", None, "The checkout tests fail.", 0, "eligible"),
    "corrupt-and-truncated.jsonl": (CORRUPT_ID, "cli", None, "Deploys go through `make deploy`",
                                    1, "eligible"),
    "memory-mode-disabled-later.jsonl": (DISABLED_ID, "cli", "disabled", "Personal: my vet visit",
                                         0, "disabled"),
    "subagent-review.jsonl": (SUBAGENT_ID, '{"subagent":"review"}', None, "Review this patch.", 0,
                              "not_interactive"),
    "cites-memories.jsonl": (CITES_ID, "cli", None, "How do I run the tests again?", 0,
                             "eligible"),
    "compressed.jsonl.zst": (ZST_ID, "cli", None, "Use the `poetry` runner", 0, "eligible"),
}

LEGACY = (
    b'{"id":"' + LEGACY_ID.encode() + b'","timestamp":"2025-08-06T18:02:11.000Z",'
    b'"instructions":null,"git":null}\n'
    b'{"record_type":"state"}\n'
    b'{"type":"message","role":"user","content":[{"type":"input_text","text":"hello legacy"}]}\n'
    b'{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}\n'
)


def fixture_lines(fixture_path, name: str) -> list[bytes]:
    """The fixture's complete lines, without their newlines."""
    return fixture_path(name).read_bytes().split(b"\n")[:-1]


def damage(line: bytes, old: bytes, new: bytes) -> bytes:
    assert old in line
    return line.replace(old, new, 1)


def join(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def by_id(sessions) -> dict:
    return {s.id: s for s in sessions}


def by_name(sessions) -> dict:
    return {Path(s.rollout_path).name: s for s in sessions}


# --------------------------------------------------------------------------------------
# the shared fixtures


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_read_by_both_readers(home, name) -> None:
    tid, source, mode, preview, bad, _status = FIXTURES[name]
    path = home.add(name)

    r = read_rollout(path)
    assert r.file_problem is None
    assert r.meta is not None and r.meta.id == tid
    assert r.meta.source == source
    assert r.memory_mode == mode
    assert r.bad_lines == bad

    s = scan_file(path)
    assert s.file_problem is None
    assert s.thread_id == tid
    assert s.source == source
    assert s.memory_mode == mode
    assert s.preview.startswith(preview)
    assert s.bad_lines == bad


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_listed_with_status(home, name) -> None:
    tid, source, mode, preview, bad, status = FIXTURES[name]
    home.add(name, idle_hours=8)
    [s] = Engine.open(home.root).sessions()
    assert s.id == tid
    assert s.source == source
    assert s.memory_mode == (mode or "enabled")
    assert s.preview.startswith(preview)
    assert s.bad_lines == bad
    assert s.status == status, s.reason


def test_later_session_meta_switches_memory_mode_off(home) -> None:
    path = home.add("memory-mode-disabled-later.jsonl")
    s = scan_file(path)
    assert s.memory_mode == "disabled" and s.memory_mode_line == 7
    assert s.meta_lines == 2
    r = read_rollout(path)
    assert r.meta is not None and r.meta.memory_mode is None  # the first one says nothing
    assert r.memory_mode == "disabled"
    [session] = Engine.open(home.root).sessions()
    assert session.status == "disabled"
    assert "line 7" in session.reason


def test_preview_is_first_user_message_event(home) -> None:
    """cli-preferences starts with AGENTS.md and environment fragments: never the preview."""
    path = home.add("cli-preferences.jsonl")
    s = scan_file(path)
    assert s.preview == CLI_PREVIEW
    assert s.preview_event == CLI_PREVIEW
    [session] = Engine.open(home.root).sessions()
    assert session.preview == CLI_PREVIEW


def test_preview_without_events_skips_fragments(home, fixture_path) -> None:
    """Paginated rollouts have no user_message events: the first real user item is used."""
    lines = [ln for ln in fixture_lines(fixture_path, "cli-preferences.jsonl")
             if b'"type":"event_msg"' not in ln]
    path = home.write("rollout-2026-12-01T10-00-00-paginated.jsonl", join(lines))
    s = scan_file(path)
    assert s.preview_event is None
    assert s.preview == CLI_PREVIEW
    assert "AGENTS.md" not in s.preview and "environment_context" not in s.preview
    # the full reader sees the same three user messages; only the third is the user's words
    users = [ln.item for ln in read_rollout(path).lines
             if isinstance(ln.item, Message) and ln.item.role == "user"]
    assert [user_prompt_text(m) for m in users[:3]] == ["", "", CLI_PREVIEW]
    [session] = Engine.open(home.root).sessions()
    assert session.preview == CLI_PREVIEW


def test_only_fragments_is_empty(home, fixture_path) -> None:
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")[:4]  # meta, ctx, AGENTS, env
    home.write("rollout-2026-12-01T10-00-00-fragments.jsonl", join(lines))
    [session] = Engine.open(home.root).sessions()
    assert session.preview == ""
    assert session.status == "empty"


def test_corrupt_line_counted_and_cut_off_line_pending(home) -> None:
    path = home.add("corrupt-and-truncated.jsonl")
    size = path.stat().st_size
    cut_off = len(path.read_bytes().rsplit(b"\n", 1)[1])
    assert cut_off > 0

    r = read_rollout(path)
    assert [(p.line_no, p.kind) for p in r.problems] == [(5, "invalid_json")]
    assert r.pending_bytes == cut_off
    assert [ln.line_no for ln in r.lines] == [1, 2, 3, 4, 6, 7, 8, 9]

    s = scan_file(path)
    assert s.bad_lines == 1
    assert [p[:2] for p in s.problems] == [[5, "invalid_json"]]
    assert s.line_count == 9
    assert s.pending_bytes == cut_off
    assert s.offset == size - cut_off

    [session] = Engine.open(home.root).sessions()
    assert session.bad_lines == 1
    assert "(1 bad line)" in session.reason


def test_citation_found_in_the_transcript(home) -> None:
    home.add("cites-memories.jsonl")
    home.add("cli-preferences.jsonl")
    engine = Engine.open(home.root)
    cited = engine.session("01a23130").to_json()["citations"]
    assert [c["line"] for c in cited] == [5]
    assert cited[0]["rollout_ids"][-1] == "not-a-uuid"
    assert engine.session("01a23054").to_json()["citations"] == []


def test_compressed_reads_like_plain(home) -> None:
    zst = home.add("compressed.jsonl.zst")
    plain = home.write(
        "rollout-2026-12-01T10-00-00-plain.jsonl",
        zstandard.ZstdDecompressor().stream_reader(zst.open("rb")).read(),
    )
    rz, rp = read_rollout(zst), read_rollout(plain)
    assert (rz.format, rp.format) == ("jsonl.zst", "jsonl")
    assert [(ln.line_no, ln.type, ln.item) for ln in rz.lines] == [
        (ln.line_no, ln.type, ln.item) for ln in rp.lines]
    assert rz.problems == rp.problems and rz.file_problem is None

    sz, sp = scan_file(zst), scan_file(plain)
    dz, dp = sz.to_dict(), sp.to_dict()
    assert (dz.pop("format"), dp.pop("format")) == ("jsonl.zst", "jsonl")
    for bookkeeping in ("head_len", "head_hash"):  # only plain files can be appended to
        dz.pop(bookkeeping), dp.pop(bookkeeping)
    assert dz == dp


def test_compressed_and_its_rematerialised_copy_listed_once(home) -> None:
    """Codex re-materialises a .zst to .jsonl before appending; the .jsonl wins."""
    zst = home.add("compressed.jsonl.zst", name="rollout-2026-11-29T04-39-42-x.jsonl.zst")
    data = zstandard.ZstdDecompressor().stream_reader(zst.open("rb")).read()
    home.write("rollout-2026-11-29T04-39-42-x.jsonl", data)
    sessions = Engine.open(home.root).sessions()
    assert [Path(s.rollout_path).name for s in sessions] == [
        "rollout-2026-11-29T04-39-42-x.jsonl"]
    assert sessions[0].id == ZST_ID


# --------------------------------------------------------------------------------------
# damaged lines


def test_invalid_utf8_middle_line(home, fixture_path) -> None:
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")
    lines[6] = damage(lines[6], b"make check-quick", b"make check-\xff\xfequick")
    path = home.write("rollout-2026-12-01T10-00-00-utf8.jsonl", join(lines))

    r = read_rollout(path)
    assert [(p.line_no, p.kind) for p in r.problems] == [(7, "invalid_utf8")]
    assert r.meta is not None and r.meta.id == CLI_ID
    assert len(r.lines) == len(lines) - 1
    s = scan_file(path)
    assert [p[:2] for p in s.problems] == [[7, "invalid_utf8"]]
    assert s.thread_id == CLI_ID and s.line_count == len(lines)

    [session] = Engine.open(home.root).sessions()
    assert session.status == "eligible" and session.bad_lines == 1


def _with_nul(fixture_path) -> bytes:
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")
    lines[6] = damage(lines[6], b"make check-quick", b"make check\x00\x00quick")
    return join(lines)


def test_nul_bytes_in_a_line_read_rollout(home, fixture_path) -> None:
    path = home.write("rollout-2026-12-01T10-00-00-nul.jsonl", _with_nul(fixture_path))
    r = read_rollout(path)
    assert r.file_problem is None
    assert [(p.line_no, p.kind) for p in r.problems] == [(7, "nul_bytes")]
    assert r.meta is not None and r.meta.id == CLI_ID


def test_nul_bytes_in_a_line_scan_and_listing(home, fixture_path) -> None:
    path = home.write("rollout-2026-12-01T10-00-00-nul.jsonl", _with_nul(fixture_path))
    s = scan_file(path)
    assert s.file_problem is None
    assert [p[:2] for p in s.problems] == [[7, "nul_bytes"]]
    assert s.thread_id == CLI_ID
    [session] = Engine.open(home.root).sessions()
    assert session.status == "eligible" and session.bad_lines == 1


def test_nul_bytes_beyond_the_first_block(home, fixture_path) -> None:
    """Past the first 4 KiB the scanner counts a NUL line as one bad line, like the reader."""
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")
    lines.insert(1, b'{"timestamp":"2026-12-01T06:39:42.600Z","type":"event_msg","payload":'
                    b'{"type":"token_count","info":null,"pad":"' + b"p" * 5000 + b'"}}')
    lines[-1] = damage(lines[-1], b'"info":null', b'"info":\x00null')
    path = home.write("rollout-2026-12-01T10-00-00-nul-late.jsonl", join(lines))
    n = len(lines)
    assert [(p.line_no, p.kind) for p in read_rollout(path).problems] == [(n, "nul_bytes")]
    assert [p[:2] for p in scan_file(path).problems] == [[n, "nul_bytes"]]


def test_crlf_and_blank_lines_are_not_bad(home, fixture_path) -> None:
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")
    data = b"\r\n".join(lines[:5]) + b"\r\n\r\n   \r\n\t\n\n" + b"\r\n".join(lines[5:]) + b"\r\n"
    path = home.write("rollout-2026-12-01T10-00-00-crlf.jsonl", data)
    r = read_rollout(path)
    assert r.problems == () and r.file_problem is None and r.pending_bytes == 0
    assert len(r.lines) == len(lines)
    s = scan_file(path)
    assert s.bad_lines == 0 and s.thread_id == CLI_ID and s.preview == CLI_PREVIEW
    [session] = Engine.open(home.root).sessions()
    assert session.status == "eligible" and session.bad_lines == 0


def test_huge_line_skipped_and_numbering_kept(home, fixture_path) -> None:
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")
    huge = (b'{"timestamp":"2026-12-01T06:40:19.100Z","type":"response_item","payload":'
            b'{"type":"function_call_output","call_id":"call_a1","output":"'
            + b"x" * 3_000_000 + b'"}}')
    lines.insert(2, huge)
    path = home.write("rollout-2026-12-01T10-00-00-huge.jsonl", join(lines))

    r = read_rollout(path, max_line=1 << 20)
    assert [(p.line_no, p.kind) for p in r.problems] == [(3, "too_long")]
    numbered = {ln.line_no for ln in r.lines}
    assert numbered == set(range(1, len(lines) + 1)) - {3}
    last = r.lines[-1]
    assert last.line_no == len(lines) and last.item.kind == "token_count"

    s = scan_file(path, max_line=1 << 20)
    assert [p[:2] for p in s.problems] == [[3, "too_long"]]
    assert s.line_count == len(lines)
    assert s.preview == CLI_PREVIEW  # lines after the huge one are still read
    assert s.offset == path.stat().st_size


# --------------------------------------------------------------------------------------
# damaged files


def test_binary_file(home) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
    path = home.write(f"rollout-2026-12-01T10-00-00-{NAMED_ID}.jsonl", data)
    r = read_rollout(path)
    assert r.file_problem is not None and "binary" in r.file_problem
    assert r.lines == ()
    s = scan_file(path)
    assert s.file_problem is not None and "binary" in s.file_problem
    [session] = Engine.open(home.root).sessions()
    assert session.status == "unreadable" and "binary" in session.reason
    assert session.id == NAMED_ID


def test_empty_file(home) -> None:
    path = home.write("rollout-2026-12-01T10-00-00-empty.jsonl", b"")
    assert read_rollout(path).file_problem == "empty file"
    assert scan_file(path).file_problem == "empty file"
    [session] = Engine.open(home.root).sessions()
    assert session.status == "unreadable" and "empty file" in session.reason
    assert session.id is None


def test_only_garbage_lines(home) -> None:
    data = b"not json at all\n{broken\n[1, 2, 3]\n\"a string\"\n{\"no\": \"type\"}\n"
    path = home.write("rollout-2026-12-01T10-00-00-garbage.jsonl", data)
    r = read_rollout(path)
    assert r.bad_lines == 5
    assert r.file_problem is not None and "no session_meta" in r.file_problem
    s = scan_file(path)
    assert s.bad_lines == 5 and s.thread_id is None
    assert s.file_problem is not None and "no session_meta" in s.file_problem
    [session] = Engine.open(home.root).sessions()
    assert session.status == "unreadable" and "no session_meta" in session.reason


def test_thread_id_from_file_name_when_content_unreadable(home) -> None:
    name = f"rollout-2026-12-01T10-00-00-{NAMED_ID}.jsonl"
    home.write(name, b"garbage\nmore garbage\n")
    [session] = Engine.open(home.root).sessions()
    assert session.id == NAMED_ID
    assert session.status == "unreadable"


def test_single_unterminated_line_is_unreadable(home) -> None:
    home.write(f"rollout-2026-12-01T10-00-00-{NAMED_ID}.jsonl", b"garbage without newline")
    [session] = Engine.open(home.root).sessions()
    assert session.id == NAMED_ID
    assert session.status == "unreadable", f"{session.status}: {session.reason}"


def test_truncated_zst_reported_not_raised(home, fixture_path) -> None:
    data = fixture_path("compressed.jsonl.zst").read_bytes()
    path = home.write("rollout-2026-12-01T10-00-00-cut.jsonl.zst", data[: len(data) // 2])
    r = read_rollout(path)
    assert r.file_problem is not None
    s = scan_file(path)
    assert s.file_problem is not None
    [session] = Engine.open(home.root).sessions()
    assert session.status == "unreadable"


def test_not_zstd_at_all(home) -> None:
    path = home.write("rollout-2026-12-01T10-00-00-fake.jsonl.zst", b'{"type":"x"}\n' * 10)
    for problem in (read_rollout(path).file_problem, scan_file(path).file_problem):
        assert problem is not None and problem != "empty file"
    [session] = Engine.open(home.root).sessions()
    assert session.status == "unreadable"


def test_truncated_zst_says_it_is_truncated(home, fixture_path) -> None:
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")
    body = join(lines[:1] + [
        b'{"timestamp":"2026-12-01T06:40:00.000Z","type":"event_msg","payload":'
        b'{"type":"token_count","n":' + str(i).encode() + b',"h":"'
        + (b"%064x" % (i * 2654435761 % (1 << 250))) * 4 + b'"}}' for i in range(3000)
    ] + lines[1:])
    packed = zstandard.ZstdCompressor(level=3).compress(body)
    big = home.write("rollout-2026-12-01T10-00-00-big.jsonl.zst", packed[: len(packed) // 2])
    small_src = fixture_path("compressed.jsonl.zst").read_bytes()
    small = home.write("rollout-2026-12-01T10-00-00-small.jsonl.zst",
                       small_src[: len(small_src) // 2])
    for path in (big, small):
        for problem in (scan_file(path).file_problem, read_rollout(path).file_problem):
            assert problem is not None and problem != "empty file", (path.name, problem)


def test_legacy_pre_envelope_rollout(home) -> None:
    path = home.write(f"rollout-2025-08-06T18-02-11-{LEGACY_ID}.jsonl", LEGACY)
    r = read_rollout(path)
    assert r.format == "legacy"
    assert r.problems == ()
    assert r.meta is not None and r.meta.id == LEGACY_ID
    users = [ln.item for ln in r.lines if isinstance(ln.item, Message) and ln.item.role == "user"]
    assert [m.text for m in users] == ["hello legacy"]

    s = scan_file(path)
    assert s.format == "legacy" and s.thread_id == LEGACY_ID and s.bad_lines == 0

    [session] = Engine.open(home.root).sessions()
    assert session.id == LEGACY_ID
    assert session.status == "unreadable"
    assert "legacy" in session.reason
    assert session.preview == "hello legacy"


def _deep_meta(fixture_path) -> bytes:
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")
    meta = json.loads(lines[0])
    text = json.dumps(meta, separators=(",", ":")).encode()
    # ~1000 levels: under simdjson's 1024 limit, beyond Python's recursion limit
    deep = b'"extra":' + b"[" * 1000 + b"]" * 1000 + b","
    lines[0] = text.replace(b'"payload":{', b'"payload":{' + deep, 1)
    return join(lines)


def test_deeply_nested_line_read_rollout(home, fixture_path) -> None:
    path = home.write("rollout-2026-12-01T10-00-00-deep.jsonl", _deep_meta(fixture_path))
    r = read_rollout(path)
    # a parser may accept 1000 levels or refuse them; either way the answer is consistent
    if r.bad_lines:
        assert [(p.line_no, p.kind) for p in r.problems] == [(1, "invalid_json")]
        assert r.meta is None and r.file_problem is not None
    else:
        assert r.meta is not None and r.meta.id == CLI_ID and r.file_problem is None


def test_deeply_nested_line_scan_and_listing(home, fixture_path) -> None:
    home.add("cites-memories.jsonl")
    path = home.write("rollout-2026-12-01T10-00-00-deep.jsonl", _deep_meta(fixture_path))
    r = read_rollout(path)
    s = scan_file(path)
    assert s.bad_lines == r.bad_lines
    assert s.thread_id == (r.meta.id if r.meta else None)
    sessions = Engine.open(home.root).sessions()
    assert len(sessions) == 2 and CITES_ID in by_id(sessions)


def test_wrongly_typed_content_does_not_break_listing(home, fixture_path) -> None:
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")
    lines.insert(2, b'{"timestamp":"2026-12-01T06:39:45.000Z","type":"response_item","payload":'
                    b'{"type":"message","role":"user","content":5}}')
    home.add("cites-memories.jsonl")
    path = home.write("rollout-2026-12-01T10-00-00-typed.jsonl", join(lines))
    sessions = Engine.open(home.root).sessions()  # the scanner decodes it for the preview
    assert {CLI_ID, CITES_ID} <= set(by_id(sessions))
    assert by_id(sessions)[CLI_ID].preview == CLI_PREVIEW
    r = read_rollout(path)
    assert r.meta is not None and r.meta.id == CLI_ID


def test_faults_do_not_stop_other_sessions(home, fixture_path) -> None:
    """One home with every kind of damaged file still lists every session, good ones intact."""
    for name in FIXTURES:
        home.add(name, idle_hours=8)
    lines = fixture_lines(fixture_path, "cli-preferences.jsonl")
    utf8 = [lines[0].replace(CLI_ID.encode(), NAMED_ID.encode())] + lines[1:]
    utf8[6] = damage(utf8[6], b"check-quick", b"check-\xc3\x28quick")
    zst = fixture_path("compressed.jsonl.zst").read_bytes()
    home.write("rollout-2026-12-01T10-00-00-utf8.jsonl", join(utf8))
    home.write("rollout-2026-12-01T10-00-00-binary.jsonl", b"\x00\x01\x02" * 300)
    home.write("rollout-2026-12-01T10-00-00-empty.jsonl", b"")
    home.write("rollout-2026-12-01T10-00-00-garbage.jsonl", b"nope\n{nope\n")
    home.write("rollout-2026-12-01T10-00-00-cut.jsonl.zst", zst[: len(zst) // 2])
    home.write(f"rollout-2025-08-06T18-02-11-{LEGACY_ID}.jsonl", LEGACY)
    home.write(f"rollout-2026-12-01T10-00-00-{'1' * 8}-1111-7111-8111-{'1' * 12}.jsonl",
               b"\xff\xfe\n")
    home.write("rollout-2026-12-01T10-00-00-nul.jsonl", _with_nul(fixture_path))
    home.write("rollout-2026-12-01T10-00-00-pending.jsonl", lines[0])

    engine = Engine.open(home.root)
    sessions = engine.sessions()
    assert len(sessions) == len(FIXTURES) + 9
    # the NUL-damaged copy shares cli-preferences' thread id: it is checked by name below
    nul_copy = next(x for x in sessions if x.rollout_path.endswith("-nul.jsonl"))
    assert (nul_copy.status, nul_copy.bad_lines) == ("eligible", 1)
    ids = by_id([x for x in sessions if x is not nul_copy])
    for name, (tid, _src, _mode, preview, bad, status) in FIXTURES.items():
        assert ids[tid].status == status, (name, ids[tid].reason)
        assert ids[tid].preview.startswith(preview)
        assert ids[tid].bad_lines == bad
    assert ids[NAMED_ID].status == "eligible" and ids[NAMED_ID].bad_lines == 1
    names = by_name(sessions)
    for name, needle in [
        ("rollout-2026-12-01T10-00-00-binary.jsonl", "binary"),
        ("rollout-2026-12-01T10-00-00-empty.jsonl", "empty file"),
        ("rollout-2026-12-01T10-00-00-garbage.jsonl", "no session_meta"),
        ("rollout-2026-12-01T10-00-00-cut.jsonl.zst", ""),
        (f"rollout-2025-08-06T18-02-11-{LEGACY_ID}.jsonl", "legacy"),
    ]:
        assert names[name].status == "unreadable", name
        assert needle in names[name].reason, (name, names[name].reason)
    assert ids[f"{'1' * 8}-1111-7111-8111-{'1' * 12}"].status == "unreadable"


# --------------------------------------------------------------------------------------
# statuses by idle time and config


def _status_of(home) -> tuple[str, str]:
    [s] = Engine.open(home.root).sessions()
    return s.status, s.reason


@pytest.mark.parametrize("idle_hours, status, words", [
    (1, "too_recent", "needs 6 h"),
    (5.5, "too_recent", "needs 6 h"),
    (6.5, "eligible", "ready for extraction"),
    (8, "eligible", "ready for extraction"),
    (9 * 24, "eligible", "ready for extraction"),
    (11 * 24, "too_old", "max_rollout_age_days = 10"),
])
def test_status_by_idle_time_default_config(home, idle_hours, status, words) -> None:
    home.add("cli-preferences.jsonl", idle_hours=idle_hours)
    got, reason = _status_of(home)
    assert got == status, reason
    assert words in reason


def test_archived_session(home) -> None:
    path = home.add("cli-preferences.jsonl", archived=True)
    assert path.parent.name == "archived_sessions"
    status, reason = _status_of(home)
    assert status == "archived" and "archived" in reason


def test_archived_wins_over_too_old(home) -> None:
    home.add("cli-preferences.jsonl", idle_hours=30 * 24, archived=True)
    assert _status_of(home)[0] == "archived"


def test_subagent_not_interactive_even_when_eligible_by_time(home) -> None:
    home.add("subagent-review.jsonl", idle_hours=8)
    status, reason = _status_of(home)
    assert status == "not_interactive"
    assert reason.startswith("sub-agent (review) session: Codex takes memories only from")
    assert "{" not in reason  # Codex's raw JSON is never shown


def test_configured_idle_hours(home) -> None:
    home.config("[memories]\nmin_rollout_idle_hours = 12\n")
    home.add("cli-preferences.jsonl", idle_hours=8)
    status, reason = _status_of(home)
    assert status == "too_recent" and "needs 12 h" in reason


@pytest.mark.parametrize("idle_hours, status", [(30, "too_recent"), (50, "eligible")])
def test_out_of_range_idle_hours_clamped_to_48(home, idle_hours, status) -> None:
    home.config("[memories]\nmin_rollout_idle_hours = 500\n")
    home.add("cli-preferences.jsonl", idle_hours=idle_hours)
    got, reason = _status_of(home)
    assert got == status, reason
    if status == "too_recent":
        assert "needs 48 h" in reason


def test_configured_max_age(home) -> None:
    home.config("[memories]\nmax_rollout_age_days = 2\n")
    home.add("cli-preferences.jsonl", idle_hours=3 * 24)
    status, reason = _status_of(home)
    assert status == "too_old" and "max_rollout_age_days = 2" in reason


def test_reading_never_writes_the_rollout(home) -> None:
    """Reading never writes to a rollout: Codex owns those files."""
    path = home.add("corrupt-and-truncated.jsonl")
    before = path.read_bytes(), path.stat().st_mtime_ns
    Engine.open(home.root).sessions()
    read_rollout(path)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
