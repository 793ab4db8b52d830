"""How the offline consolidation folds ad-hoc notes (phase2/notes.py reads them): which memory
line a forget note removes, whether a remember note is already in memory, and where a
remember note goes. Plain rules, so that a person can predict them:

- **A forget note removes a line** (a `- ` bullet of a knowledge section: MEMORY.md's
  `## User preferences`, `## Reusable knowledge`, `## Failures and how to do differently`
  and the lines before the first task group; memory_summary.md's `## User Profile`,
  `## User preferences`, `## General Tips`) when, compared case-insensitively, with Markdown
  marks and trailing citations such as `[Task 2]` or `[ad-hoc note]` set aside, either
  (a) the note's text is part of the line (whole words: `deploy` is not part of
      `redeploy`), or
  (b) every word of the note (words of two or more letters or digits, minus the short words
      in `STOPWORDS`) is a word of the line: the same word, one of them a prefix of the other
      when both have four or more characters (`deploy` / `deploys`), or a pair in
      `ABBREVIATIONS` (`db` / `database`); a word in a script written without spaces
      (Chinese, Japanese) must appear in the line as written (offline_note_words.py).
  A note with no such word (`forget: the`) removes nothing. No other line is ever removed:
  task headings, keywords, rollout summary references and the index are not the notes'
  business (forgetting a whole session is `memdeck forget`).
- **A remember note is already in memory** when rule (a) finds its text in a line of the
  file; then it is not added again.
- **Where a remember note goes.** It becomes `- <text> [ad-hoc note]` (Codex's tag for a fact
  that comes from a note, docs/codex-format.md "Extensions and notes"): in memory_summary.md
  under `## User preferences` when it reads as a preference (`PREFERENCE`: always, never,
  prefer, avoid, don't, must, should, please, …), else under `## General Tips`; in MEMORY.md
  in the matching block of the task group that shares the most words with it (its project's
  name counts double), or of a `# Task Group: ad-hoc notes` when no group shares one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..phase2.notes import Note, NoteEffect
from .offline_note_words import UNSPACED, normal, same_word, words

if TYPE_CHECKING:
    from .offline_note_index import LineIndex, WordBag

NOTE_TAG = "[ad-hoc note]"
PREFERENCE = re.compile(r"\b(always|never|prefers?|preferred|avoid|don'?t|do not|must|"
                        r"should|please|instead of|rather than)\b", re.I)
PLACEHOLDERS = ("- none recorded", "- none yet")


def _word_in(word: str, line_words: list[str], line_text: str) -> bool:
    if UNSPACED.search(word):
        return word in line_text
    return any(same_word(word, w) for w in line_words)


def is_bullet(line: str) -> bool:
    s = line.strip()
    return s.startswith("- ") and s.lower() not in PLACEHOLDERS


class Needle:
    """Rule (a) for one note's text, ready to look for in many lines: `what` as whole words
    (no letter or digit right before or after it, where it starts or ends with one)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.counts = bool(what) and bool(words(what))
        self.head = bool(what) and what[0].isalnum() and not UNSPACED.match(what)
        self.tail = bool(what) and what[-1].isalnum() and not UNSPACED.match(what[-1])

    def found_in(self, text: str) -> bool:
        if not self.counts:
            return False
        what, n = self.what, len(self.what)
        i = text.find(what)
        while i != -1:
            if (not self.head or i == 0 or not text[i - 1].isalnum()) and \
                    (not self.tail or i + n == len(text) or not text[i + n].isalnum()):
                return True
            i = text.find(what, i + 1)
        return False


def contains_text(what: str, text: str) -> bool:
    """Rule (a): `what` is part of `text`, not cut out of a longer word (`deploy` is not in
    `redeploy`); a note without a word that counts finds nothing (`forget: the`)."""
    return Needle(what).found_in(text)


def forget_matches(note_text: str, line: str) -> bool:
    """Rule (a) or (b) of the module docstring, for a bullet `line`."""
    if not is_bullet(line):
        return False
    what, text = normal(note_text), normal(line)
    if contains_text(what, text):
        return True
    wanted = words(note_text)
    if not wanted:
        return False
    line_words = words(text)
    return all(_word_in(w, line_words, text) for w in wanted)


def already_remembered(note_text: str, lines: LineIndex) -> bool:
    """Rule (a) finds the note's text in one of `lines` (the bullets memory holds)."""
    needle = Needle(normal(note_text))
    return needle.counts and any(needle.found_in(lines.normal_of(k))
                                 for k in lines.candidates(note_text))


def is_preference(text: str) -> bool:
    return bool(PREFERENCE.search(text))


def note_bullet(text: str) -> str:
    return f"- {text.strip()} {NOTE_TAG}"


def group_score(note_text: str, group: WordBag, project: str) -> int:
    """How many of the note's words the group's text has; its project's name counts
    double."""
    wanted = words(note_text)
    score = sum(1 for w in wanted if group.has(w))
    names = words(project)
    if names and any(same_word(w, n) for w in wanted for n in names):
        score += 1
    return score


class Folding:
    """The lines added and removed for each note. Notes apply in their order: the forget
    notes first take their lines out of what memory holds; then each remember note is added,
    unless a later forget note matches it (withdrawn) or memory already says it."""

    def __init__(self, notes: list[Note], replaced: list[Note] | None = None) -> None:
        self.notes = list(notes)
        # what edited notes asked before the edit: their bullets (exactly as a remember note
        # writes them) are taken out, so that the edited text replaces the line
        self.replaced = list(replaced or [])
        self._replaced_lines = {note_bullet(n.text): k for k, n in enumerate(self.replaced)}
        self._replaced_removed: dict[int, list[tuple[str, str]]] = {}
        self._added: dict[int, list[tuple[str, str]]] = {i: [] for i in range(len(notes))}
        self._removed: dict[int, list[tuple[str, str]]] = {i: [] for i in range(len(notes))}
        self._reason: dict[int, str] = {}
        self._withdrawn: set[int] | None = None  # remember notes a later forget withdraws

    @property
    def any(self) -> bool:
        """Something to fold: a note to take in, or the old line of an edited one."""
        return bool(self.notes or self.replaced)

    def of(self, kind: str) -> list[tuple[int, Note]]:
        return [(i, n) for i, n in enumerate(self.notes) if n.kind == kind]

    def withdrawn(self, i: int) -> bool:
        """A later forget note matches remember note `i`: it is not added at all."""
        if self._withdrawn is None:
            from .offline_note_index import LineIndex

            remembers = self.of("remember")
            bullets = LineIndex(note_bullet(n.text) for _, n in remembers)
            self._withdrawn = set()
            for j, f in self.of("forget"):
                for k in bullets.candidates(f.text):
                    r = remembers[k][0]
                    if r < j and forget_matches(f.text, bullets.lines[k]):
                        self._withdrawn.add(r)
        if i in self._withdrawn:
            self._reason[i] = "withdrawn by a later forget note"
            return True
        return False

    def added(self, i: int, path: str, line: str) -> None:
        self._added[i].append((path, line.rstrip("\n")))

    def removed(self, i: int, path: str, line: str) -> None:
        self._removed[i].append((path, line.rstrip("\n")))

    def forget_in(self, path: str, lines: list[str]) -> list[str]:
        """`lines` without the bullets a forget note matches (the first one that does), each
        removal recorded."""
        from .offline_note_index import LineIndex

        if self._replaced_lines:
            lines = self._take_replaced(path, lines)
        forgets = self.of("forget")
        if not forgets:
            return list(lines)
        index = LineIndex(lines)
        hit: dict[int, int] = {}
        for i, n in forgets:
            for k in index.candidates(n.text):
                if k not in hit and forget_matches(n.text, lines[k]):
                    hit[k] = i
        out = []
        for k, line in enumerate(lines):
            if k in hit:
                self.removed(hit[k], path, line)
            else:
                out.append(line)
        return out

    def _take_replaced(self, path: str, lines: list[str]) -> list[str]:
        out = []
        for line in lines:
            k = self._replaced_lines.get(line.strip())
            if k is None:
                out.append(line)
            else:
                self._replaced_removed.setdefault(k, []).append((path, line.rstrip("\n")))
        return out

    def effects(self) -> tuple[NoteEffect, ...]:
        """One per note; and one per replaced request whose old line was taken out."""
        return tuple(NoteEffect(n, tuple(self._added[i]), tuple(self._removed[i]),
                                self._reason.get(i, ""))
                     for i, n in enumerate(self.notes)) + tuple(
            NoteEffect(self.replaced[k], (), tuple(removed))
            for k, removed in sorted(self._replaced_removed.items()))
