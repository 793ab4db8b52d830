"""Ad-hoc notes as a consolidation sees them: which notes are new, what each asks, and what the
merge did for each (so that the Review pane can name the note behind a hunk).

Codex's rule (docs/codex-format.md "Extensions and notes", "The workspace diff"): notes are
files `extensions/ad_hoc/notes/<YYYY-MM-DDTHH-MM-SS>-<slug>.md`, folded into memory as
authoritative requests and never deleted. A note is taken in when the workspace diff lists it
as added or modified; accepting the proposal rebuilds the baseline (docs/codex-format.md "The
git baseline"), so the next diff no longer lists it and the note is not applied twice. A
rejected proposal leaves the baseline as it was, so its notes wait for the next one.

What a note asks (memdeck writes `Remember: …` or `Forget: …`, memory_folder/edits.py
`note_body`; Codex's agent and other tools write free text): every line that starts with
`Remember`/`Forget` (or `Remove:`/`Delete:`, which mean forget) is one request; other lines
continue the request before them; a note with no such word is one remember request.

The effects of a consolidation's notes are stored beside the proposal's workspace, in
`memdeck/proposals/<id>/notes.json`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..codex.memory_layout import DIFF_FILE, NOTES_PREFIX

EFFECTS_FILE = "notes.json"  # in memdeck/proposals/<id>/, beside the workspace
_STATUS = re.compile(r"^- ([AMD]) (.+)$")
_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})T\d{2}-\d{2}-\d{2}")
_KIND = re.compile(r"^(?:(remember|forget)\b(?:\s*:\s*|\s+)(?:that\s+)?|(remove|delete)\s*:\s*)",
                   re.I)
LABEL_TEXT = 60  # characters of a note's text in its label


@dataclass(frozen=True)
class Note:
    """One request of an ad-hoc note file."""

    path: str  # relative to the memory root: extensions/ad_hoc/notes/<name>.md
    kind: str  # remember | forget; `replaced`: what an edited note asked before the edit
    text: str  # what to remember or forget, on one line

    @property
    def date(self) -> str:
        """The day in the note's name (`YYYY-MM-DD`), or "" for a name without one."""
        m = _STAMP.match(self.path.rsplit("/", 1)[-1])
        return m.group(1) if m else ""

    @property
    def label(self) -> str:
        """`2026-12-03 'forget: staging db password'`: how the Review pane names it."""
        text = self.text if len(self.text) <= LABEL_TEXT else self.text[: LABEL_TEXT - 1] + "…"
        return f"{self.date or self.path.rsplit('/', 1)[-1]} '{self.kind}: {text}'"


@dataclass(frozen=True)
class NoteEffect:
    """What the merge did for one note: the lines it added and removed, per memory file."""

    note: Note
    added: tuple[tuple[str, str], ...] = ()  # (memory file, line without its newline)
    removed: tuple[tuple[str, str], ...] = ()
    reason: str = ""  # why nothing was done, when nothing was

    @property
    def outcome(self) -> str:
        if not self.added and not self.removed:
            return self.reason or ("already in memory" if self.note.kind == "remember"
                                   else "matched no line in memory; nothing was removed")
        parts = []
        if self.added:
            parts.append(f"added {_lines(len(self.added))}")
        if self.removed:
            parts.append(f"removed {_lines(len(self.removed))}")
        files = sorted({f for f, _ in self.added + self.removed})
        return f"{' and '.join(parts)} in {', '.join(files)}"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.note.path, "kind": self.note.kind, "text": self.note.text,
                "added": [list(x) for x in self.added],
                "removed": [list(x) for x in self.removed], "reason": self.reason}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NoteEffect:
        return cls(Note(str(data["path"]), str(data["kind"]), str(data["text"])),
                   tuple((str(f), str(x)) for f, x in data.get("added", [])),
                   tuple((str(f), str(x)) for f, x in data.get("removed", [])),
                   str(data.get("reason") or ""))


def _lines(n: int) -> str:
    return f"{n} line{'' if n == 1 else 's'}"


def parse_note(path: str, text: str) -> list[Note]:
    """The requests of one note file (see the module docstring); blank lines and Markdown
    headings are not requests."""
    requests: list[list[str]] = []  # [kind, text]
    for raw in text.splitlines():
        line = raw.strip().removeprefix("- ").removeprefix("* ").strip()
        if not line or line.startswith("#"):
            continue
        m = _KIND.match(line)
        if m:
            kind = "remember" if (m.group(1) or "").lower() == "remember" else "forget"
            requests.append([kind, line[m.end():].strip()])
        elif requests:
            requests[-1][1] = f"{requests[-1][1]} {line}".strip()
        else:
            requests.append(["remember", line])
    return [Note(path, kind, _one_line(body)) for kind, body in requests if body.strip()]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")
MAX_REQUEST = 500  # characters of one request folded into memory; a longer one is cut


def _one_line(body: str) -> str:
    """A request as one memory line: control characters and undecodable bytes dropped, runs
    of spaces folded, cut at a word after MAX_REQUEST characters (a note pasted full of log
    output must not become a megabyte bullet in MEMORY.md)."""
    text = " ".join(_CONTROL.sub(" ", body).split())
    if len(text) <= MAX_REQUEST:
        return text
    cut = text[:MAX_REQUEST].rsplit(" ", 1)[0]
    return (cut if len(cut) > MAX_REQUEST // 2 else text[:MAX_REQUEST]) + " …"


def diff_changes(workspace: Path) -> list[tuple[str, str]]:
    """The `## Status` lines of the workspace's `phase2_workspace_diff.md`: (A|M|D, path)."""
    try:
        text = (workspace / DIFF_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[tuple[str, str]] = []
    in_status = False
    for line in text.splitlines():
        if line.startswith("## "):
            in_status = line.strip() == "## Status"
            continue
        m = _STATUS.match(line) if in_status else None
        if m:
            out.append((m.group(1), m.group(2).strip()))
    return out


def pending_notes(workspace: Path) -> list[Note]:
    """The requests of the notes added or changed since the last consolidation (the workspace
    diff lists them `A` or `M`), oldest note first (their names start with the time)."""
    names = sorted({p for s, p in diff_changes(workspace)
                    if s in ("A", "M") and p.startswith(NOTES_PREFIX) and p.endswith(".md")
                    and "/" not in p.removeprefix(NOTES_PREFIX)})
    out: list[Note] = []
    for rel in names:
        f = workspace / rel
        if f.is_symlink() or not f.is_file():
            continue
        out += parse_note(rel, f.read_text(encoding="utf-8", errors="replace"))
    return out


def replaced_notes(workspace: Path) -> list[Note]:
    """What the notes changed since the last consolidation (`M` in the workspace diff) asked
    to remember before the change and no longer ask, as notes of kind `replaced`: the
    consolidation takes their lines out, so an edited note replaces its line instead of adding
    a second one. The old text is the baseline's (the workspace's git HEAD)."""
    import subprocess

    out: list[Note] = []
    for status, rel in diff_changes(workspace):
        if status != "M" or not rel.startswith(NOTES_PREFIX) or not rel.endswith(".md"):
            continue
        try:
            old = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=workspace,
                                 capture_output=True, check=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            continue  # no baseline copy to compare with: the note is only taken in
        f = workspace / rel
        new = f.read_text(encoding="utf-8", errors="replace") if f.is_file() else ""
        kept = {n.text for n in parse_note(rel, new) if n.kind == "remember"}
        out += [Note(rel, "replaced", n.text)
                for n in parse_note(rel, old.decode("utf-8", "replace"))
                if n.kind == "remember" and n.text not in kept]
    return out


def save_effects(proposal_dir: Path, effects: tuple[NoteEffect, ...] | list[NoteEffect]) -> None:
    if effects:
        write_atomic(proposal_dir / EFFECTS_FILE,
                     json.dumps([e.to_json() for e in effects], ensure_ascii=False, indent=1))


def load_effects(proposal_dir: Path) -> list[NoteEffect]:
    """The notes a proposal folded, with what each did; [] when it folded none (or the file is
    unreadable: attribution is a help, never a reason to fail the review)."""
    try:
        data = json.loads((proposal_dir / EFFECTS_FILE).read_text(encoding="utf-8"))
        return [NoteEffect.from_json(x) for x in data]
    except (OSError, ValueError, TypeError, KeyError):
        return []
