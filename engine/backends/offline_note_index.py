"""Indexes that keep folding notes linear in their number (issue 29: 5,000 notes took over
five minutes, each note re-reading every line the notes before it added).

The rules are offline_notes.py's, unchanged; these only find the few lines a rule can hold
for, so that each note looks at those and not at the whole file:

- `LineIndex`: memory lines by the words they have. A line rule (a) or (b) holds for has
  every counting word of the note, or one related to it (the same, a prefix of four or more
  characters either way, an abbreviation), so the candidates are the lines having a word
  related to the note's first counting word. A word of a script written without spaces is
  matched as written in the line, so its candidates are every line.
- `WordBag`: a task group's words, for `group_score`, updated as lines are appended.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterable

from .offline_note_words import ABBREVIATIONS, UNSPACED, normal, same_word, words


class _Words:
    """Words seen, sorted, to find every word related to a given one quickly."""

    def __init__(self) -> None:
        self.sorted: list[str] = []
        self.seen: set[str] = set()

    def add(self, word: str) -> None:
        if word not in self.seen:
            self.seen.add(word)
            bisect.insort(self.sorted, word)

    def related(self, word: str) -> list[str]:
        """The words seen that `_same` relates to `word`."""
        out = [w for w in (word, ABBREVIATIONS.get(word)) if w and w in self.seen]
        out += [a for a, b in ABBREVIATIONS.items() if b == word and a in self.seen]
        if len(word) >= 4:
            i = bisect.bisect_left(self.sorted, word)  # words that start with `word`
            while i < len(self.sorted) and self.sorted[i].startswith(word):
                out.append(self.sorted[i])
                i += 1
            out += [word[:k] for k in range(4, len(word)) if word[:k] in self.seen]
        return [w for w in dict.fromkeys(out) if same_word(word, w)]


class LineIndex:
    """Lines with the words each has: postings in compact arrays, the lines' normal forms
    and word sets computed again only for the few candidates (a MEMORY.md of a million lines
    is indexed without a second copy of it)."""

    def __init__(self, lines: Iterable[str] = ()) -> None:
        self.lines: list[str] = []
        self.by_word: dict[str, array[int]] = {}
        self.words = _Words()
        for line in lines:
            self.add(line)

    def add(self, line: str) -> int:
        i = len(self.lines)
        self.lines.append(line)
        for w in words(normal(line)):
            posting = self.by_word.get(w)
            if posting is None:
                posting = self.by_word[w] = array("I")
                self.words.add(w)
            posting.append(i)
        return i

    def normal_of(self, k: int) -> str:
        return normal(self.lines[k])

    def candidates(self, note_text: str) -> list[int]:
        """Every line a rule may hold for, in order (a superset of the matches): rule (a)
        reads the note normalized, rule (b) its words as written; either needs every one of
        those words, or a related one, in the line. Start from the rarest word's lines and
        keep those that have the others."""
        found: set[int] = set()
        for wanted in (words(normal(note_text)), words(note_text)):
            if not wanted:
                continue
            if any(UNSPACED.search(w) for w in wanted):
                return list(range(len(self.lines)))
            related = {w: self.words.related(w) for w in wanted}
            if not all(related.values()):
                continue  # a word no line has: no line holds all of them
            sizes = {w: sum(len(self.by_word[r]) for r in rs) for w, rs in related.items()}
            rarest = min(wanted, key=lambda w: sizes[w])
            lines = {k for r in related[rarest] for k in self.by_word[r]}
            others = [set(related[w]) for w in wanted if w != rarest]
            if others:
                lines = {k for k in lines if all(
                    not rs.isdisjoint(words(normal(self.lines[k]))) for rs in others)}
            found |= lines
        return sorted(found)


class WordBag:
    """A task group's words, kept current as lines are appended; its text (for a word of a
    script written without spaces) is read from the group only when one is asked for."""

    def __init__(self, text_of: Callable[[], str]) -> None:
        self.words = _Words()
        self.text_of = text_of
        for w in words(text_of()):
            self.words.add(w)

    def add(self, line: str) -> None:
        for w in words(line):
            self.words.add(w)

    def has(self, word: str) -> bool:
        """`_word_in(word, words(text), text)`, without reading the whole text."""
        if UNSPACED.search(word):
            return word in self.text_of().casefold()
        return bool(self.words.related(word))
