"""The gate every new state of the memory folder passes before it goes live.

What a change adds to the folder (the lines of the new state that the live one does not
have) must hold no secret (redact.find_secrets) and no control character (a NUL, an escape
sequence: what a model can write and a terminal or Codex's prompt must not receive). Accept,
a History restore and a restored backup all run it on the state they are about to make
live, so a secret removed from memory cannot come back through history or a backup; the
proposal's own scan (phase2/proposals.py) uses `line_findings` to mark the hunks in Review.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import MemdeckError
from .redact import find_secrets

# C0 controls but tab, line feed and carriage return, and DEL
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
SKIP = frozenset({".git"})


@dataclass(frozen=True)
class Finding:
    kind: str  # a secret's kind (redact.py), or "control-character"
    preview: str  # safe to show: a secret's first characters, a control character's code


@dataclass(frozen=True)
class Added:
    path: str  # relative to the root
    line: int  # 1-based, in the new file
    finding: Finding

    def __str__(self) -> str:
        what = self.finding.preview if self.finding.kind == "control-character" \
            else self.finding.kind
        return f"{what} at {self.path}:{self.line}"


class ContentRefused(MemdeckError):
    """A new state of the memory folder adds a secret or a control character; nothing was
    applied."""


def refusal(who: str, found: list[Added], advice: str) -> ContentRefused:
    """`<who> <adds a secret (kind at path:line)>; <advice>` in one line."""
    first = found[0]
    what = ("a control character" if first.finding.kind == "control-character"
            else "a secret")
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return ContentRefused(f"{who} {what} ({first}{more}); {advice}")


def line_findings(text: str) -> list[Finding]:
    out = [Finding(s.kind, s.preview) for s in find_secrets(text)]
    m = CONTROL.search(text)
    if m:
        out.append(Finding("control-character", f"U+{ord(m.group()):04X}"))
    return out


def _files(root: Path) -> dict[str, Path]:
    if not root.is_dir():
        return {}
    out: dict[str, Path] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if set(rel.parts) & SKIP or p.is_symlink() or not p.is_file():
            continue
        out[rel.as_posix()] = p
    return out


def _lines(p: Path | None) -> list[str]:
    if p is None:
        return []
    return p.read_bytes().decode("utf-8", errors="surrogateescape").split("\n")


def added_findings(live: Path, new: Path) -> list[Added]:
    """Every finding on a line of `new` that the same file of `live` does not have."""
    before, after = _files(live), _files(new)
    found: list[Added] = []
    for rel, p in after.items():
        old = before.get(rel)
        if old is not None and old.stat().st_size == p.stat().st_size \
                and old.read_bytes() == p.read_bytes():
            continue
        kept = set(_lines(old))
        for n, line in enumerate(_lines(p), 1):
            if line not in kept:
                found += [Added(rel, n, f) for f in line_findings(line)]
    return found
