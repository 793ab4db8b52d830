"""`<oai-mem-citation>` blocks, parsed with Codex's exact rules (docs/codex-format.md "Citations").

Stripping: the open and close tags are matched literally (case-sensitive, not nested); an
unterminated block at the end is closed implicitly and its body still counts. Parsing: for
each entry line, the *last* `|note=[`, the last `:` before it and the first `-` after that
colon; a line that fails any step is dropped. Rollout ids come from the first `<rollout_ids>`
block (else the legacy `<thread_ids>`), trimmed, de-duplicated in first-seen order.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TypedDict

OPEN = "<oai-mem-citation>"
CLOSE = "</oai-mem-citation>"


@dataclass(frozen=True)
class CitationEntry:
    path: str
    line_start: int
    line_end: int
    note: str


@dataclass(frozen=True)
class MemoryCitation:
    entries: tuple[CitationEntry, ...]
    rollout_ids: tuple[str, ...]
    # entry lines Codex's rules drop (no `|note=[…]`, no `:`, a range that is no u32-u32):
    # counted, so a reader can tell "3 entries" from "3 entries, 2 unreadable lines"
    skipped_entries: int = 0

    @property
    def valid_thread_ids(self) -> tuple[str, ...]:
        """The ids Codex counts as usage: valid UUIDs, each once."""
        out: list[str] = []
        for rid in self.rollout_ids:
            try:
                u = str(uuid.UUID(rid))
            except ValueError:
                continue
            if u not in out:
                out.append(u)
        return tuple(out)


class CitationEntryJSON(TypedDict):
    path: str
    line_start: int
    line_end: int
    note: str


class CitationJSON(TypedDict):
    entries: list[CitationEntryJSON]
    rollout_ids: list[str]


def entry_json(e: CitationEntry) -> CitationEntryJSON:
    return {"path": e.path, "line_start": e.line_start, "line_end": e.line_end, "note": e.note}


def citation_json(c: MemoryCitation) -> CitationJSON:
    return {"entries": [entry_json(e) for e in c.entries], "rollout_ids": list(c.rollout_ids)}


def strip_citations(text: str) -> tuple[str, list[str]]:
    """(visible text, citation bodies)."""
    visible: list[str] = []
    bodies: list[str] = []
    pos = 0
    while True:
        start = text.find(OPEN, pos)
        if start < 0:
            visible.append(text[pos:])
            break
        visible.append(text[pos:start])
        body_start = start + len(OPEN)
        end = text.find(CLOSE, body_start)
        if end < 0:
            bodies.append(text[body_start:])
            break
        bodies.append(text[body_start:end])
        pos = end + len(CLOSE)
    return "".join(visible), bodies


def _between(body: str, open_tag: str, close_tag: str) -> str | None:
    s = body.find(open_tag)
    if s < 0:
        return None
    s += len(open_tag)
    e = body.find(close_tag, s)
    if e < 0:
        return None
    return body[s:e]


def _u32(text: str) -> int | None:
    t = text.strip()
    if t.startswith("+"):  # Rust's u32 parser accepts one leading plus sign
        t = t[1:]
    if not t.isascii() or not t.isdigit():
        return None
    v = int(t)
    return v if v <= 0xFFFFFFFF else None


def parse_entry(line: str) -> CitationEntry | None:
    line = line.strip()
    if not line:
        return None
    location, sep, note = line.rpartition("|note=[")
    if not sep or not note.endswith("]"):
        return None
    note = note[:-1].strip()
    path, sep, rng = location.rpartition(":")
    if not sep:
        return None
    start_s, sep, end_s = rng.partition("-")
    if not sep:
        return None
    start, end = _u32(start_s), _u32(end_s)
    if start is None or end is None:
        return None
    return CitationEntry(path, start, end, note)


def parse_citation_bodies(bodies: list[str]) -> MemoryCitation | None:
    entries: list[CitationEntry] = []
    ids: list[str] = []
    skipped = 0
    for body in bodies:
        block = _between(body, "<citation_entries>", "</citation_entries>")
        if block is not None:
            for line in block.splitlines():
                entry = parse_entry(line)
                if entry is not None:
                    entries.append(entry)
                elif line.strip():
                    skipped += 1
        id_block = _between(body, "<rollout_ids>", "</rollout_ids>")
        if id_block is None:
            id_block = _between(body, "<thread_ids>", "</thread_ids>")
        if id_block is not None:
            for raw in id_block.splitlines():
                rid = raw.strip()
                if rid and rid not in ids:
                    ids.append(rid)
    if not entries and not ids:
        return None
    return MemoryCitation(tuple(entries), tuple(ids), skipped)


def parse_message(text: str) -> MemoryCitation | None:
    """All citation blocks of one assistant message, together."""
    if OPEN not in text:
        return None
    _visible, bodies = strip_citations(text)
    return parse_citation_bodies(bodies)
