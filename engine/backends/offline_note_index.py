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
from collections.abc import Iterable

from .offline_notes import ABBREVIATIONS, UNSPACED, normal, same_word, words


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
    """Lines (as given, and normalized) with the words each has."""

    def __init__(self, lines: Iterable[str] = ()) -> None:
        self.lines: list[str] = []
        self.normal: list[str] = []
        self.by_word: dict[str, set[int]] = {}
        self.line_words: list[set[str]] = []
        self.words = _Words()
        for line in lines:
            self.add(line)

    def add(self, line: str) -> int:
        i = len(self.lines)
        self.lines.append(line)
        text = normal(line)
        self.normal.append(text)
        have = words(text)
        self.line_words.append(set(have))
        for w in have:
            self.by_word.setdefault(w, set()).add(i)
            self.words.add(w)
        return i

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
            lines = set().union(*(self.by_word[r] for r in related[rarest]))
            for w in wanted:
                if w != rarest:
                    rs = related[w]
                    lines = {k for k in lines if not self.line_words[k].isdisjoint(rs)}
            found |= lines
        return sorted(found)


class WordBag:
    """A task group's words and case-folded text, kept current as lines are appended."""

    def __init__(self, text: str) -> None:
        self.words = _Words()
        self.text = text.casefold()
        for w in words(text):
            self.words.add(w)

    def add(self, line: str) -> None:
        self.text += "\n" + line.casefold()
        for w in words(line):
            self.words.add(w)

    def has(self, word: str) -> bool:
        """`_word_in(word, words(text), text)`, without reading the whole text."""
        if UNSPACED.search(word):
            return word in self.text
        return bool(self.words.related(word))
