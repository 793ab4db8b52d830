"""Trace a memory line back to its evidence (docs/architecture.md "The read path").

For a line of a file of the active memory root: its block (`memory_blocks`) → the rollout
summary files the block lists → each file (does it still exist, its thread id: the bullet,
else the file's header, else the stage-1 row whose `rollout_slug` gives that file name,
docs/codex-format.md "Rollout summary files") → its stage-1 row in the active version's
pipeline database ("The stage1_outputs table"; none: pruned or never extracted) → the
session, found in the index by thread id, and the turn of its transcript the fact came from
(`turn_match`) → who last changed the line, by `git blame` in memdeck's history
(docs/architecture.md "History"). Only reads: nothing is created, the index is not refreshed
here, exactly one rollout is read per summary.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypedDict

from ..codex.home import CodexHome
from ..codex.pipeline_snapshot import Stage1Output
from ..errors import NotFound
from ..formatting import iso_utc
from ..index.session_index import IndexedSession
from ..index.sessions import project_name
from ..memory_folder.history import origin_of
from .fed_lines import rollout_summaries
from .line_mapping import file_at, git_output, line_map, split_lines
from .memory_blocks import MemoryBlock, MemoryBlockJSON, SummaryRef, block_of, header_fields
from .stage1_rows import Stage1Rows
from .turn_match import NO_MATCH, NOTHING, TurnMatch, TurnMatchJSON, best_turn, tokens

RAW_MEMORY_LINES = 6  # of a stage-1 row's raw memory, shown
SHORT_LINE_WORDS = 6  # a line with fewer words is matched together with its section
NO_ROW = "no row (pruned or never extracted)"
# a bullet's file name and fields are where the fact is, not the fact
_REFS = re.compile(r"rollout_summaries/\S+|\b(?:thread_id|rollout_path|updated_at|cwd)=\S+")
_TAGS = re.compile(r"\[(?:Tasks?\s+[\d,\s&and]+|ad-hoc note)\]", re.IGNORECASE)


class TraceLineError(NotFound):
    """FILE:LINE names no line of the memory folder: a line out of range (the message says
    the file's length) or a path outside the folder."""


@dataclass(frozen=True)
class Stage1Row:
    thread_id: str
    raw_memory_head: str  # the first lines
    raw_memory_lines: int
    usage_count: int | None
    last_usage: int | None
    selected_for_phase2: bool
    source_updated_at: int
    generated_at: int
    rollout_slug: str | None


@dataclass(frozen=True)
class TracedSession:
    thread_id: str
    rollout_path: str
    cwd: str | None
    project: str
    started_at: str | None
    preview: str
    archived: bool


@dataclass(frozen=True)
class SummaryTrace:
    ref: SummaryRef
    exists: bool
    thread_id: str | None
    thread_id_from: str  # bullet | file header | stage-1 slug | "" (unknown)
    stage1: Stage1Row | None
    stage1_note: str  # NO_ROW, a database problem, or ""
    session: TracedSession | None
    session_note: str
    turn: TurnMatch


@dataclass(frozen=True)
class LineChange:
    """Who last changed the line, from memdeck's history."""

    commit: str | None  # None: not in the history yet
    time: float | None
    origin: str  # accept | edit | note | outside | codex | start | restore | reset |
    #              unrecorded (changed since the history's last commit) | "" (no history)
    origin_label: str
    summary: str
    person_edited: bool  # a person changed it: an edit in memdeck, or outside memdeck
    note: str


class Stage1RowJSON(TypedDict):
    thread_id: str
    raw_memory_head: str
    raw_memory_lines: int
    usage_count: int | None
    last_usage: str | None
    selected_for_phase2: bool
    source_updated_at: str | None
    generated_at: str | None
    rollout_slug: str | None


class SummaryTraceJSON(TypedDict):
    file: str
    bullet_line: int | None
    bullet: dict[str, str | None]
    matched_keywords: list[str]
    exists: bool
    thread_id: str | None
    thread_id_from: str
    stage1: Stage1RowJSON | None
    stage1_note: str
    session: dict[str, object] | None  # a TracedSession, field by field
    session_note: str
    turn: TurnMatchJSON


class LineChangeJSON(TypedDict):
    commit: str | None
    time: str | None
    origin: str
    origin_label: str
    summary: str
    person_edited: bool
    note: str


class TraceJSON(TypedDict):
    """`memdeck trace FILE:LINE --json`."""

    path: str
    line: int
    lines: int
    text: str
    version: str
    root: str
    block: MemoryBlockJSON
    summaries: list[SummaryTraceJSON]
    change: LineChangeJSON


@dataclass(frozen=True)
class Trace:
    path: str
    line: int
    lines: int  # the file's length
    text: str  # the line
    version: str  # v1 | v2
    root: str
    block: MemoryBlock
    summaries: tuple[SummaryTrace, ...]
    change: LineChange

    def to_json(self) -> TraceJSON:
        return {"path": self.path, "line": self.line, "lines": self.lines, "text": self.text,
                "version": self.version, "root": self.root, "block": self.block.to_json(),
                "summaries": [_summary_json(s) for s in self.summaries],
                "change": {"commit": self.change.commit, "time": iso_utc(self.change.time),
                           "origin": self.change.origin,
                           "origin_label": self.change.origin_label,
                           "summary": self.change.summary,
                           "person_edited": self.change.person_edited,
                           "note": self.change.note}}


def _summary_json(s: SummaryTrace) -> SummaryTraceJSON:
    r, row, ses = s.ref, s.stage1, s.session
    return {
        "file": r.file, "bullet_line": r.line,
        "bullet": {"cwd": r.cwd, "rollout_path": r.rollout_path, "updated_at": r.updated_at,
                   "thread_id": r.thread_id},
        "matched_keywords": list(r.matched_keywords), "exists": s.exists,
        "thread_id": s.thread_id, "thread_id_from": s.thread_id_from,
        "stage1": None if row is None else {
            "thread_id": row.thread_id, "raw_memory_head": row.raw_memory_head,
            "raw_memory_lines": row.raw_memory_lines, "usage_count": row.usage_count,
            "last_usage": iso_utc(row.last_usage),
            "selected_for_phase2": row.selected_for_phase2,
            "source_updated_at": iso_utc(row.source_updated_at),
            "generated_at": iso_utc(row.generated_at), "rollout_slug": row.rollout_slug},
        "stage1_note": s.stage1_note,
        "session": None if ses is None else asdict(ses),
        "session_note": s.session_note, "turn": s.turn.to_json(),
    }


def _stage1_row(o: Stage1Output) -> Stage1Row:
    raw = o.raw_memory.strip().splitlines()
    return Stage1Row(o.thread_id, "\n".join(raw[:RAW_MEMORY_LINES]), len(raw), o.usage_count,
                     o.last_usage, o.selected_for_phase2, o.source_updated_at, o.generated_at,
                     o.rollout_slug)


# -- the session and its turn -------------------------------------------------------------
def match_text(line: str, block: MemoryBlock) -> str:
    """What is looked for in the transcript: the line without its tags and bullet marks, and
    the block's text too when the line is short (a heading, a keyword list)."""
    own = _REFS.sub(" ", _TAGS.sub(" ", line)).strip().lstrip("#-*• ").strip()
    heading = line.lstrip().startswith("#")
    if not heading and len([t for t in tokens(own) if not t.cjk]) + sum(
            t.cjk for t in tokens(own)) / 2 >= SHORT_LINE_WORDS:
        return own
    body = [t for t in block.text.splitlines()
            if "rollout_summaries/" not in t and "rollout_summary_file:" not in t
            and not t.lstrip().startswith(("### rollout_summary_files", "### keywords"))
            and not re.match(r"\s*(thread_id|updated_at|rollout_path|cwd|git_branch):", t)]
    return own + "\n" + _TAGS.sub(" ", "\n".join(body))


def _session(found: list[IndexedSession]) -> TracedSession | None:
    if not found:
        return None
    s = min(found, key=lambda s: (s.archived, -s.updated_at))
    return TracedSession(s.thread_id or "", s.path, s.cwd, project_name(s.cwd), s.started_at,
                         s.preview, s.archived)


def _turn(rollout_path: str, query: str) -> tuple[TurnMatch, str]:
    from ..codex.rollout import read_rollout
    from ..codex.transcript import transcript

    try:
        entries = transcript(read_rollout(rollout_path))
    except OSError as e:
        return NOTHING, f"the rollout cannot be read: {e.strerror or e}"
    return best_turn(query, entries), ""


# -- history ------------------------------------------------------------------------------
TRACE_ORIGIN = {"consolidation": "accept", "external": "outside", "codex": "codex",
                "start": "start", "restore": "restore", "pull": "pull"}


def _trace_origin(stored: str, summary: str) -> str:
    if stored == "user":
        return ("note" if summary.startswith("note:") else
                "reset" if summary.startswith("reset:") else "edit")
    return TRACE_ORIGIN.get(stored, "outside")


def last_change(gitdir: Path, path: str, current: Sequence[str], line: int) -> LineChange:
    """The newest commit of the history whose change touched today's line `line` (blame of
    the file at HEAD, today's line found in it by the diff between the two)."""
    if not (gitdir / "HEAD").exists():
        return LineChange(None, None, "", "", "", False,
                          "memdeck has no history of this memory yet")
    head = file_at(gitdir, "HEAD", path)
    if head is None:
        return LineChange(None, None, "unrecorded", "not in history yet", "", False,
                          "the file is not in memdeck's history yet (made since memdeck "
                          "last recorded the folder)")
    to_now = line_map(split_lines(head), current)
    at_head = next((k + 1 for k, n in enumerate(to_now) if n == line), None)
    if at_head is None:
        return LineChange(None, None, "unrecorded", "not in history yet", "", False,
                          "changed since memdeck's history last recorded the file (by Codex "
                          "or by hand; the History pane records it)")
    out = git_output(gitdir, "blame", "--porcelain", "-L", f"{at_head},{at_head}", "HEAD", "--",
               path)
    sha = out.decode("ascii", "replace").split(" ", 1)[0] if out else ""
    meta = git_output(gitdir, "show", "-s", "--format=%ct%n%B", sha) if sha else None
    if not meta:
        return LineChange(None, None, "", "", "", False, "git blame found nothing")
    stamp, _, message = meta.decode("utf-8", "replace").partition("\n")
    summary = message.strip().splitlines()[0] if message.strip() else ""
    stored = origin_of(message)
    if stored == "external" and not git_output(gitdir, "rev-parse", "--verify", "-q", f"{sha}^"):
        stored = "start"  # a first commit of an older memdeck (history.py `_entry`)
    origin = _trace_origin(stored, summary)
    label = {"accept": "accepted consolidation", "edit": "edited in memdeck",
             "note": "note", "outside": "changed outside memdeck", "codex": "Codex",
             "start": "as memdeck first found it", "restore": "restore",
             "reset": "reset", "pull": "pulled from another machine"}[origin]
    person = origin in ("edit", "outside")
    return LineChange(sha, float(stamp) if stamp.strip().isdigit() else None, origin, label,
                      summary, person, "a person edited this line" if person else "")


# -- the chain ------------------------------------------------------------------------------
SessionLookup = Callable[[str], list[IndexedSession]]


def _summary_trace(home: CodexHome, ref: SummaryRef, line_query: str, pipe: Stage1Rows,
                   lookup: SessionLookup) -> SummaryTrace:
    file = home.memory_root / ref.file
    exists = file.is_file() and not file.is_symlink()
    header: dict[str, str] = {}
    if exists:
        try:
            header = header_fields(file.read_text(encoding="utf-8", errors="replace")[:4096])
        except OSError:
            exists = False
    tid, src = ref.thread_id, "bullet" if ref.thread_id else ""
    if not tid and header.get("thread_id"):
        tid, src = header["thread_id"], "file header"
    if not tid:
        tid = pipe.thread_of_file(ref.file)
        src = "stage-1 slug" if tid else ""
    row = pipe.row(tid) if tid else None
    note = pipe.problem or ("" if row is not None else NO_ROW if tid else
                            "no thread id: the bullet, the file and the stage-1 rows name none")
    session = _session(lookup(tid)) if tid else None
    rollout = session.rollout_path if session else (ref.rollout_path
                                                    or header.get("rollout_path"))
    if session is None:
        snote = ("not in memdeck's index" if tid else "no thread id to look the session up by")
        if rollout and Path(rollout).is_file():
            snote += "; read from the rollout path the summary names"
        else:
            rollout = None
    else:
        snote = ""
    turn, why = (NOTHING, "") if rollout is None else _turn(rollout, line_query)
    if rollout is None:
        turn = TurnMatch("none", None, None, None, None, None, (), (), "",
                         "no transcript to match against")
    snote = "; ".join(x for x in (snote, why) if x)
    return SummaryTrace(ref, exists, tid, src, None if row is None else _stage1_row(row),
                        note, session, snote, turn)


def trace_line(home: CodexHome, path: str, text: str, line: int,
               lookup: SessionLookup) -> Trace:
    """The chain for today's line `line` of the memory file `path` (normalised, relative to
    the active root) whose text is `text`."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        raise TraceLineError(f"{path} has {len(lines)} line{'s' if len(lines) != 1 else ''}; "
                             f"line {line} is out of range")
    summaries = rollout_summaries(home.memory_root) if path == "memory_summary.md" else {}
    block = block_of(path, text, line, summaries)
    query = match_text(lines[line - 1], block)
    pipe = Stage1Rows(home.pipeline_db)
    traced = tuple(_summary_trace(home, r, query, pipe, lookup) for r in block.refs)
    change = last_change(home.history_git, path, lines, line)
    return Trace(path, line, len(lines), lines[line - 1], home.memory_version,
                 str(home.memory_root), block, traced, change)


__all__ = ["NO_MATCH", "NO_ROW", "LineChange", "Stage1Row", "SummaryTrace", "Trace",
           "TraceLineError", "TracedSession", "trace_line"]
