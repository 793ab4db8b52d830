"""Which turn of a session a memory line's fact came from (docs/architecture.md "The read path",
"Trace a line back").

Deterministic, and it says how sure it is:
- `exact`: a phrase of at least 4 words of the memory text occurs in the turn, compared case-
  and space-insensitively (a CJK character counts as half a word: 8 characters make a phrase);
- `keywords`: no phrase, but the turn shares at least two of the text's keywords (words of 3+
  letters that are not stop words, numbers with a letter or a dot, CJK character bigrams);
- `none`: "no match: the summary was reworded".
Candidates are the user messages, tool outputs and calls, and assistant messages of the
transcript (harness context excluded). Ties go to the user's words, then tool output, then
the earliest turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from ..codex.transcript import TranscriptEntry

PHRASE_WEIGHT = 4.0  # words a phrase needs to be `exact`
MIN_SHARED_KEYWORDS = 2
MAX_TURN_CHARS = 200_000  # a huge tool output is compared by its head only
KIND_RANK = {"user": 0, "tool_output": 1, "tool_call": 2, "assistant": 3}
NO_MATCH = "no match: the summary was reworded"

# a word (letters, digits, `_`, inner `.`/`-` kept apart later) or one CJK character
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"
                    r"|[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
STOP_WORDS = frozenset("""
a an and are as at be been but by can do does for from had has have how i if in into is it
its me my no not of on or our so that the their then there these they this to too use used
uses using was we were what when where which who will with you your all any also only than
them via per after before should would could about each more most other such very just
task tasks success partial fail failed outcome ran run""".split())


@dataclass(frozen=True)
class Token:
    text: str  # lowercased
    start: int  # offsets in the original text
    end: int
    cjk: bool


def tokens(text: str) -> list[Token]:
    return [Token(m.group().lower(), m.start(), m.end(), bool(_CJK.fullmatch(m.group())))
            for m in _TOKEN.finditer(text)]


def keywords(toks: Sequence[Token]) -> dict[str, list[int]]:
    """Keyword -> indexes of the tokens that make it (a CJK bigram: two neighbouring CJK
    characters, so text without spaces still has keywords)."""
    out: dict[str, list[int]] = {}
    for i, t in enumerate(toks):
        if t.cjk:
            n = toks[i + 1] if i + 1 < len(toks) else None
            if n is not None and n.cjk and n.start == t.end:
                out.setdefault(t.text + n.text, []).extend((i, i + 1))
            continue
        if t.text in STOP_WORDS:
            continue
        if (len(t.text) >= 3 and not t.text.isdigit()) or (
                any(c.isdigit() for c in t.text) and any(c.isalpha() for c in t.text)):
            out.setdefault(t.text, []).append(i)
    return out


def keyword_set(text: str) -> set[str]:
    return set(keywords(tokens(text)))


@dataclass(frozen=True)
class TurnMatch:
    confidence: str  # exact | keywords | none
    item_index: int | None  # in `transcript(rollout)`, as `Engine.session` returns it
    kind: str | None
    title: str | None
    timestamp: str | None
    phrase: str | None  # exact: the phrase as the turn writes it
    matched_words: tuple[str, ...]  # lowercased words (keywords: the shared keywords)
    spans: tuple[tuple[int, int], ...]  # character ranges of the turn's text to highlight
    excerpt: str  # the turn's text around the first match
    note: str

    def to_json(self) -> TurnMatchJSON:
        return {"confidence": self.confidence, "item_index": self.item_index,
                "kind": self.kind, "title": self.title, "timestamp": self.timestamp,
                "phrase": self.phrase, "matched_words": list(self.matched_words),
                "spans": [list(s) for s in self.spans], "excerpt": self.excerpt,
                "note": self.note}


class TurnMatchJSON(TypedDict):
    confidence: str
    item_index: int | None
    kind: str | None
    title: str | None
    timestamp: str | None
    phrase: str | None
    matched_words: list[str]
    spans: list[list[int]]
    excerpt: str
    note: str


NOTHING = TurnMatch("none", None, None, None, None, None, (), (), "", NO_MATCH)


def _is_cjk(word: str) -> bool:
    return len(word) == 1 and _CJK.match(word) is not None


def words_of(text: str) -> list[str]:
    """The lowercased tokens of `text`, as `tokens` gives them, without their offsets (a
    rollout holds megabytes: this stays in C)."""
    found = _TOKEN.findall(text)
    return " ".join(found).lower().split(" ") if found else []


def _shortest_phrases(q: Sequence[str]) -> set[str]:
    """Every run of query words that just weighs a phrase, space-joined: a turn holding none
    of them, word-aligned, holds no phrase (one substring test per run, in C)."""
    out: set[str] = set()
    for i in range(len(q)):
        w, j = 0.0, i
        while j < len(q) and w < PHRASE_WEIGHT:
            w += 0.5 if _is_cjk(q[j]) else 1.0
            j += 1
        if w >= PHRASE_WEIGHT:
            out.add(" " + " ".join(q[i:j]) + " ")
    return out


class _Query:
    """The query's words, where each starts, and their weights summed (a run's weight in O(1))."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self.starts: dict[str, list[int]] = {}
        for i, word in enumerate(self.words):
            self.starts.setdefault(word, []).append(i)
        self.prefix = [0.0]
        for word in self.words:
            self.prefix.append(self.prefix[-1] + (0.5 if _is_cjk(word) else 1.0))


def _longest_phrase(q: _Query, t: Sequence[str]) -> tuple[float, int, int] | None:
    """(weight, start, length) in `t` of the heaviest run of words that also runs in the
    query, when it weighs a phrase. Only maximal runs are followed (a run whose previous
    words match too is the tail of one already measured)."""
    qw = q.words
    best: tuple[float, int, int] | None = None
    for i, word in enumerate(t):
        for j in q.starts.get(word, ()):
            if i and j and t[i - 1] == qw[j - 1]:
                continue
            n = 1
            while i + n < len(t) and j + n < len(qw) and t[i + n] == qw[j + n]:
                n += 1
            w = q.prefix[j + n] - q.prefix[j]
            if w >= PHRASE_WEIGHT and (best is None or w > best[0]):
                best = (w, i, n)
    return best


def _excerpt(text: str, at: int, width: int = 240) -> str:
    start = max(0, at - width // 3)
    cut = " ".join(text[start:start + width].split())
    return ("…" if start else "") + cut + ("…" if start + width < len(text) else "")


def _candidates(entries: Sequence[TranscriptEntry]) -> list[tuple[int, TranscriptEntry]]:
    return [(i, e) for i, e in enumerate(entries)
            if e.kind in KIND_RANK and not e.dim and e.text.strip()]


def best_turn(query: str, entries: Sequence[TranscriptEntry]) -> TurnMatch:
    """The turn of `entries` that `query` (a memory line, with its section when short) most
    likely came from."""
    q = [t.text for t in tokens(query)]
    if not q:
        return NOTHING
    query_words = _Query(q)
    qk = list(keywords(tokens(query)))
    bigrams = {k for k in qk if len(k) == 2 and all(_is_cjk(c) for c in k)}
    grams = _shortest_phrases(q)
    exact: tuple[tuple[float, int, int], int, int] | None = None  # (key, start, length)
    scored: tuple[tuple[int, int, int], list[str]] | None = None
    for i, e in _candidates(entries):
        text = e.text[:MAX_TURN_CHARS]
        t = words_of(text)
        joined = " " + " ".join(t) + " "
        if any(g in joined for g in grams):
            run = _longest_phrase(query_words, t)
            if run is not None:
                key = (-run[0], KIND_RANK[e.kind], i)
                if exact is None or key < exact[0]:
                    exact = (key, run[1], run[2])
                continue
        if exact is not None:
            continue
        present = set(t)
        low = text.lower()
        shared = sorted(k for k in qk if (k in low if k in bigrams else k in present))
        if len(shared) >= MIN_SHARED_KEYWORDS:
            k2 = (-len(shared), KIND_RANK[e.kind], i)
            if scored is None or k2 < scored[0]:
                scored = (k2, shared)
    if exact is not None:
        (_, _, i), s, n = exact
        e = entries[i]
        tt = tokens(e.text[:MAX_TURN_CHARS])
        a, b = tt[s].start, tt[s + n - 1].end
        words = tuple(dict.fromkeys(x.text for x in tt[s:s + n]))
        return TurnMatch("exact", i, e.kind, e.title, e.timestamp, e.text[a:b], words,
                         ((a, b),), _excerpt(e.text, a),
                         f"exact phrase of {n} words in the {_what(e.kind)}")
    if scored is not None:
        (neg, _, i), shared = scored
        e = entries[i]
        tt = tokens(e.text[:MAX_TURN_CHARS])
        kw = keywords(tt)
        spans = sorted({(tt[k].start, tt[k].end) for w in shared for k in kw.get(w, ())})
        merged: list[tuple[int, int]] = []
        for a, b in spans:  # CJK bigrams overlap: one span per run of characters
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        return TurnMatch("keywords", i, e.kind, e.title, e.timestamp, None, tuple(shared),
                         tuple(merged), _excerpt(e.text, merged[0][0] if merged else 0),
                         f"{-neg} shared keywords in the {_what(e.kind)}: "
                         + ", ".join(shared[:8]))
    return NOTHING


def _what(kind: str) -> str:
    return {"user": "user's message", "tool_output": "tool output", "tool_call": "tool call",
            "assistant": "assistant's message"}.get(kind, kind)
