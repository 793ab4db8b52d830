"""<oai-mem-citation> parsing with Codex's exact rules (docs/codex-format.md "Citations")."""

from memdeck.engine.codex.citations import parse_entry, parse_message, strip_citations


def test_fixture_rules() -> None:
    text = ("Answer.\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:3-7|note=[db]\n"
            "rollout_summaries/a.md:4-9|note=[rounding | Decimal]\ngarbage line\n"
            "</citation_entries>\n<rollout_ids>\n01a23054-a1fc-7969-acf0-6947af085e83\n"
            "01a23054-a1fc-7969-acf0-6947af085e83\nnot-a-uuid\n</rollout_ids>\n"
            "</oai-mem-citation>")
    c = parse_message(text)
    assert c is not None
    assert [(e.path, e.line_start, e.line_end, e.note) for e in c.entries] == [
        ("MEMORY.md", 3, 7, "db"), ("rollout_summaries/a.md", 4, 9, "rounding | Decimal")]
    assert c.rollout_ids == ("01a23054-a1fc-7969-acf0-6947af085e83", "not-a-uuid")
    assert c.valid_thread_ids == ("01a23054-a1fc-7969-acf0-6947af085e83",)


def test_last_note_marker_and_last_colon_win() -> None:
    # the LAST "|note=[" splits: the range before it is then "1-2|note=[a", which is no number
    assert parse_entry("a.md:1-2|note=[a|note=[b]") is None
    e = parse_entry("a.md:1-2|note=[x |note=[ y]")
    assert e is None
    e = parse_entry("dir:odd/file.md: 10 - 12 |note=[ spaced ]")
    assert e is not None and (e.path, e.line_start, e.line_end, e.note) == (
        "dir:odd/file.md", 10, 12, "spaced")
    e = parse_entry("notes.md:1-2|note=[uses | and ] inside]")
    assert e is not None and e.note == "uses | and ] inside"


def test_bad_entries_are_dropped() -> None:
    for line in ["MEMORY.md:3|note=[x]", "MEMORY.md:a-b|note=[x]", "MEMORY.md:1-2|note=[x",
                 "MEMORY.md:1-2", "MEMORY.md:-1-2|note=[x]", ""]:
        assert parse_entry(line) is None, line


def test_unterminated_block_still_counts_and_legacy_thread_ids() -> None:
    visible, bodies = strip_citations("hi <oai-mem-citation><thread_ids>\nabc\n</thread_ids>")
    assert visible == "hi "
    c = parse_message("hi <oai-mem-citation><thread_ids>\nabc\n</thread_ids>")
    assert c is not None and c.rollout_ids == ("abc",) and c.entries == ()


def test_no_block_or_empty_block() -> None:
    assert parse_message("plain answer") is None
    assert parse_message("<oai-mem-citation></oai-mem-citation>") is None
