"""Said vs remembered: for one session, what the user and the agent said, the raw memory
phase 1 extracted from it, and the lines of today's memory it fed (docs/architecture.md
"The read path", "Said vs remembered").

- said: the transcript's user messages (the user's own words: the IDE's and the Desktop
  app's wrappers and harness records removed, `fragments.user_request`) and assistant
  messages (citation blocks removed), each with its transcript item index;
- raw memory: the stage-1 row of the active version's pipeline database (docs/codex-format.md
  "The stage1_outputs table"; v2 stores `raw_memory = ""`, its summary is the raw memory),
  or, without a row, the session's status and reason from the index; a v1 row keeps a rollout
  summary beside its raw memory, shown too (`summary_lines`: with verdicts, not in `counts`,
  which would otherwise count what the two say in common twice);
- fed today: the lines of today's memory that come from the session (`fed_lines`);
- a verdict for every said message and raw-memory line, against the consolidated lines
  (`MEMORY.md` and `memory_summary.md`; in v2, where the summary only points at the file,
  the rollout summary file too): `kept` when at least half its keywords appear there,
  `reworded` when some do (two, or a quarter), `dropped` otherwise; "" when it has no
  keywords. Keywords as a trace matches turns (`turn_match.keyword_set`, CJK bigrams too).
Only reads: nothing is created.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TypedDict

from ..codex.citations import strip_citations
from ..codex.fragments import user_request
from ..codex.home import CodexHome
from ..codex.transcript import TranscriptEntry
from ..index.sessions import Session
from .fed_lines import (
    FedLines,
    memory_md_pieces,
    names_session,
    piece,
    read_memory_file,
    rollout_summaries,
    summary_files_of,
    summary_md_pieces,
)
from .memory_blocks import parse_ref
from .stage1_rows import Stage1Rows
from .turn_match import keyword_set

KEPT_SHARE = 0.5  # of a text's keywords found in the consolidated lines: kept
REWORDED_SHARE = 0.25  # or at least REWORDED_MIN of them: reworded
REWORDED_MIN = 2
VERDICTS = ("kept", "reworded", "dropped")


@dataclass(frozen=True)
class Verdict:
    verdict: str  # kept | reworded | dropped | "" (no keywords to compare)
    found: int  # keywords found in the consolidated lines
    of: int  # keywords of the text
    where: str  # the fed lines holding most of them: "MEMORY.md:6-22", "" when none
    matched: tuple[str, ...]
    note: str  # "7 of 9 keywords in MEMORY.md:40-52"

    def to_json(self) -> VerdictJSON:
        return {"verdict": self.verdict, "found": self.found, "of": self.of,
                "where": self.where, "matched": list(self.matched), "note": self.note}


class VerdictJSON(TypedDict):
    verdict: str
    found: int
    of: int
    where: str
    matched: list[str]
    note: str


@dataclass(frozen=True)
class SaidMessage:
    item_index: int  # in `Engine.session(...).entries`
    kind: str  # user | assistant
    timestamp: str | None
    text: str
    verdict: Verdict

    def to_json(self) -> SaidMessageJSON:
        return {"item_index": self.item_index, "kind": self.kind,
                "timestamp": self.timestamp, "text": self.text,
                "verdict": self.verdict.to_json()}


class SaidMessageJSON(TypedDict):
    item_index: int
    kind: str
    timestamp: str | None
    text: str
    verdict: VerdictJSON


@dataclass(frozen=True)
class RawLine:
    line: int  # 1-based, in the raw memory (v2: in the rollout summary)
    text: str
    verdict: Verdict

    def to_json(self) -> RawLineJSON:
        return {"line": self.line, "text": self.text, "verdict": self.verdict.to_json()}


class RawLineJSON(TypedDict):
    line: int
    text: str
    verdict: VerdictJSON


@dataclass(frozen=True)
class SaidRemembered:
    thread_id: str | None
    rollout_path: str
    project: str
    cwd: str | None
    started_at: str | None
    status: str
    reason: str
    version: str  # v1 | v2
    root: str
    said: tuple[SaidMessage, ...]
    raw_memory: str | None  # None: no stage-1 row
    rollout_summary: str | None
    raw_note: str  # why there is no raw memory (the status and reason), else ""
    raw_lines: tuple[RawLine, ...]
    summary_lines: tuple[RawLine, ...]  # v1: the row's rollout summary; v2: () (it is raw_lines)
    summary_file: str | None  # rollout_summaries/<file>.md, when one exists
    fed: tuple[FedLines, ...]
    fed_note: str  # why nothing is fed, else ""
    verdict_basis: str  # what the verdicts compare with, in words

    def counts(self) -> dict[str, int]:
        """Verdicts of the said messages and raw lines together: kept / reworded / dropped."""
        out = dict.fromkeys(VERDICTS, 0)
        for v in [m.verdict for m in self.said] + [r.verdict for r in self.raw_lines]:
            if v.verdict in out:
                out[v.verdict] += 1
        return out

    def to_json(self) -> dict[str, object]:
        """`memdeck remembered ID --json`: every field (tuples as lists, each part's own
        `to_json`) and `counts`."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = ([v.to_json() for v in value] if isinstance(value, tuple)
                           else value)
        out["counts"] = self.counts()
        return out


# -- said ------------------------------------------------------------------------------------
def said_messages(entries: Sequence[TranscriptEntry]) -> list[tuple[int, TranscriptEntry, str]]:
    """(item index, entry, text) of the user's own words and the assistant's messages."""
    out = []
    for i, e in enumerate(entries):
        if e.dim:
            continue
        if e.kind == "user":
            text = user_request(e.text)
        elif e.kind == "assistant":
            text = strip_citations(e.text)[0].strip()
        else:
            continue
        if text:
            out.append((i, e, text))
    return out


# -- fed today -------------------------------------------------------------------------------
# -- verdicts --------------------------------------------------------------------------------
def verdict(text: str, fed: Sequence[FedLines],
            fed_keywords: Sequence[set[str]]) -> Verdict:
    words = keyword_set(text)
    if not words:
        return Verdict("", 0, 0, "", (), "no keywords to compare")
    if not fed:
        return Verdict("dropped", 0, len(words), "", (),
                       f"0 of {len(words)} keywords: nothing of the session is in the "
                       "consolidated memory")
    found = sorted(words & set().union(*fed_keywords))
    best = max(range(len(fed)), key=lambda k: (len(words & fed_keywords[k]), -k))
    share = len(found) / len(words)
    v = ("kept" if share >= KEPT_SHARE else
         "reworded" if found and (len(found) >= REWORDED_MIN or share >= REWORDED_SHARE)
         else "dropped")
    where = fed[best].location if words & fed_keywords[best] else ""
    more = sum(1 for k in range(len(fed)) if k != best and words & fed_keywords[k])
    note = f"{len(found)} of {len(words)} keywords" + (f" in {where}" if where else "")
    if more:
        note += f" and {more} more place{'s' if more > 1 else ''}"
    return Verdict(v, len(found), len(words), where, tuple(found), note)


def _verdict_lines(text: str, fed: Sequence[FedLines], fed_keywords: Sequence[set[str]]
                   ) -> tuple[RawLine, ...]:
    """The non-blank lines of `text`, numbered from 1, each with its verdict."""
    return tuple(RawLine(n, line, verdict(line, fed, fed_keywords))
                 for n, line in enumerate(text.splitlines(), 1) if line.strip())


# -- the whole view --------------------------------------------------------------------------
def said_remembered(home: CodexHome, session: Session, entries: Sequence[TranscriptEntry]
                    ) -> SaidRemembered:
    """The view of `session` (as the index lists it) whose transcript is `entries`."""
    tid = session.id
    root = home.memory_root
    version = home.memory_version
    pipe = Stage1Rows(home.pipeline_db)
    row = pipe.row(tid) if tid else None
    summaries = rollout_summaries(root)
    files = summary_files_of(tid, row, summaries)
    fed: list[FedLines] = []
    memory_md = read_memory_file(root, "MEMORY.md")
    if memory_md is not None:
        fed += memory_md_pieces(memory_md, tid, files)
    for f in fed:  # a task block's bullet names the file even when its header does not
        for line in f.text.splitlines():
            r = parse_ref(line, None)
            if r is not None and names_session(r, tid, ()) and r.file in summaries \
                    and r.file not in files:
                files.append(r.file)
    summary_md = read_memory_file(root, "memory_summary.md")
    if summary_md is not None:
        fed += summary_md_pieces(summary_md, tid, files, summaries)
    for name in files:
        lines = summaries[name].splitlines()
        fed.append(piece(name, lines, (1, max(len(lines), 1)), "its rollout summary file",
                          counted=version == "v2"))
    counted = [f for f in fed if f.counted]
    kws = [keyword_set(f.text) for f in counted]
    basis = ("MEMORY.md and memory_summary.md" if version == "v1" else
             "memory_summary.md and the rollout summary file it points at")
    said = tuple(SaidMessage(i, e.kind, e.timestamp, text, verdict(text, counted, kws))
                 for i, e, text in said_messages(entries))
    if row is None:
        raw_memory = summary = None
        raw_note = f"no raw memory: {session.status}: {session.reason}"
        if pipe.problem:
            raw_note += f" ({pipe.problem})"
        raw_text = ""
    else:
        raw_memory, summary, raw_note = row.raw_memory, row.rollout_summary, ""
        raw_text = row.raw_memory if row.raw_memory.strip() else row.rollout_summary
        if not raw_text.strip():
            raw_note = "the stage-1 row is empty: nothing durable to remember"
    raw_lines = _verdict_lines(raw_text, counted, kws)
    v1_summary = summary if row is not None and row.raw_memory.strip() else None
    summary_lines = _verdict_lines(v1_summary or "", counted, kws)
    fed_note = "" if fed else (
        "nothing of this session is in today's memory" + (
            "" if row is None else ": its raw memory has not been consolidated (or was "
            "left out)"))
    return SaidRemembered(tid, session.rollout_path, session.project, session.cwd,
                          session.started_at, session.status, session.reason, version,
                          str(root), said, raw_memory, summary, raw_note, raw_lines,
                          summary_lines, files[0] if files else None, tuple(fed), fed_note, basis)


__all__ = ["FedLines", "RawLine", "SaidMessage", "SaidRemembered", "Verdict",
           "said_remembered"]
