"""Fuzzing the `<oai-mem-citation>` parser (issue 12 "What must hold").

Whatever text an assistant message holds — around the blocks, inside them, cut off — the
parser never raises; every character is either visible text, a block body or a tag; every
non-blank entry line is either an entry or counted in `skipped_entries`; and an entry written
by Codex's rules is read back exactly, whatever surrounds it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memdeck.engine.codex.citations import (
    CLOSE,
    OPEN,
    CitationEntry,
    citation_json,
    parse_citation_bodies,
    parse_message,
    strip_citations,
)

FUZZ = settings(max_examples=1200, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

# pieces that matter to the parser, mixed with any text
TOKENS = [OPEN, CLOSE, "<citation_entries>", "</citation_entries>", "<rollout_ids>",
          "</rollout_ids>", "<thread_ids>", "</thread_ids>", "|note=[", "]", ":", "-", "\n",
          "\r\n", " ", "+", "MEMORY.md:1-2|note=[x]", "4294967296", "01a23054-a1fc-7969-acf0-"
          "6947af085e83", "<oai-mem-citation", "\u2028", "\x00", "١٢"]
texty = st.lists(st.sampled_from(TOKENS) | st.text(max_size=12), max_size=40).map("".join)


def _entry_lines(bodies: list[str]) -> int:
    """Non-blank lines inside every body's first `<citation_entries>` block."""
    n = 0
    for body in bodies:
        s = body.find("<citation_entries>")
        if s < 0:
            continue
        s += len("<citation_entries>")
        e = body.find("</citation_entries>", s)
        if e >= 0:
            n += sum(1 for line in body[s:e].splitlines() if line.strip())
    return n


@FUZZ
@example(text=OPEN + "<citation_entries>\na:1-2|note=[n]\nbroken\n</citation_entries>")
@example(text=OPEN + OPEN + CLOSE + CLOSE)
@given(text=texty)
def test_any_text_parses_and_every_entry_line_is_accounted_for(text: str) -> None:
    visible, bodies = strip_citations(text)
    assert OPEN not in visible
    # every character is visible text, a body or a tag: each body opened, all but an
    # unterminated last one closed
    rest = len(text) - len(visible) - sum(map(len, bodies)) - len(bodies) * len(OPEN)
    assert rest % len(CLOSE) == 0 and rest // len(CLOSE) in (len(bodies), len(bodies) - 1)
    c = parse_message(text)
    if c is None:
        assert OPEN not in text or parse_citation_bodies(bodies) is None
        return
    assert len(c.entries) + c.skipped_entries == _entry_lines(bodies)
    assert len(set(c.rollout_ids)) == len(c.rollout_ids)
    assert all(r == r.strip() and r for r in c.rollout_ids)
    assert all(0 <= e.line_start <= 0xFFFFFFFF and 0 <= e.line_end <= 0xFFFFFFFF
               for e in c.entries)
    c.valid_thread_ids  # noqa: B018 - must not raise either
    citation_json(c)


_no_break = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=20)


def _clean(s: str) -> str:
    """What an entry's path or note can be: no tag, no `|note=[`, no edge whitespace."""
    s = s.replace("<", "")
    while "|note=[" in s:  # removing one can join the halves of another
        s = s.replace("|note=[", "")
    return s.strip()


paths = _no_break.map(_clean).map(lambda s: s or "MEMORY.md")
notes = _no_break.map(_clean)
u32 = st.integers(0, 0xFFFFFFFF)


@FUZZ
@given(entries=st.lists(st.tuples(paths, u32, u32, notes), min_size=1, max_size=5),
       before=texty.filter(lambda s: OPEN not in s), after=texty)
def test_entries_written_by_codex_rules_read_back_exactly(entries, before, after) -> None:
    block = "\n".join(f"{p}:{a}-{b}|note=[{n}]" for p, a, b, n in entries)
    text = (f"{before}{OPEN}\n<citation_entries>\n{block}\n</citation_entries>\n"
            f"<rollout_ids>\n01a23054-a1fc-7969-acf0-6947af085e83\n</rollout_ids>\n{CLOSE}"
            f"{after}")
    c = parse_message(text)
    assert c is not None
    got = c.entries[: len(entries)]
    assert got == tuple(CitationEntry(p, a, b, n) for p, a, b, n in entries)
    assert c.rollout_ids[0] == "01a23054-a1fc-7969-acf0-6947af085e83"
    assert c.skipped_entries == 0 or after.count(OPEN)  # only later blocks may add any


@settings(FUZZ, max_examples=2000)
@given(text=st.text(max_size=300), cut=st.integers(0, 300))
def test_a_message_cut_anywhere_inside_a_block_still_parses(text: str, cut: int) -> None:
    whole = (f"{OPEN}\n<citation_entries>\nMEMORY.md:1-2|note=[{text}]\n</citation_entries>\n"
             f"<rollout_ids>\n{text}\n</rollout_ids>\n{CLOSE}")
    cut_text = whole[: len(OPEN) + cut]
    c = parse_message(cut_text)
    if c is not None:
        assert len(c.entries) + c.skipped_entries == _entry_lines(strip_citations(cut_text)[1])
