"""What the next session will be given of memory, against what the last one received
(docs/codex-format.md "Memory injection"; docs/architecture.md "The read path").

The next session's text is `agent_view.injected_summary`. What a session received is in its
rollout: the developer message whose text holds the summary between the
`MEMORY_SUMMARY BEGINS` and `ENDS` markers (v2 sends it as consecutive parts, joined here
as they were cut). The newest rollout that has such a message is the comparison.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple, TypedDict

from ..clock import parse_iso
from ..codex.home import CodexHome
from ..formatting import iso_utc
from .agent_view import InjectedSummary, injected_summary

BEGINS = "========= MEMORY_SUMMARY BEGINS =========\n"
ENDS = "\n========= MEMORY_SUMMARY ENDS ========="


class RolloutToSearch(NamedTuple):
    path: str
    thread_id: str | None
    started: float  # newest first is the order they are searched in


@dataclass(frozen=True)
class ReceivedSummary:
    thread_id: str | None
    time: float | None
    rollout_path: str
    text: str  # the summary between the markers, as that session got it
    tokens: int


class ReceivedJSON(TypedDict):
    thread_id: str | None
    time: str | None
    rollout_path: str
    text: str
    tokens: int


class PreviewJSON(TypedDict):
    """`memdeck preview --json`."""

    text: str
    tokens: int
    truncated_tokens: int
    version: str
    root: str
    active: bool
    note: str
    message_tokens: int
    last_session: ReceivedJSON | None
    same_as_last: bool | None
    comparison: str
    diff: str


@dataclass(frozen=True)
class Preview:
    next_session: InjectedSummary
    root: str  # the memory root the summary comes from
    last_session: ReceivedSummary | None  # None: no session has received memory yet
    comparison: str  # one line: same as / differs from the last session, or none yet
    diff: str  # unified diff, last session's summary -> the next one's; "" when the same

    @property
    def same_as_last(self) -> bool | None:
        if self.last_session is None:
            return None
        return self.next_session.active and self.next_session.text == self.last_session.text

    def to_json(self) -> PreviewJSON:
        n, last = self.next_session, self.last_session
        return {
            "text": n.text, "tokens": n.tokens, "truncated_tokens": n.truncated_tokens,
            "version": n.version, "root": self.root, "active": n.active, "note": n.note,
            "message_tokens": n.message_tokens,
            "last_session": None if last is None else {
                "thread_id": last.thread_id, "time": iso_utc(last.time),
                "rollout_path": last.rollout_path, "text": last.text, "tokens": last.tokens},
            "same_as_last": self.same_as_last, "comparison": self.comparison,
            "diff": self.diff,
        }


def _may_hold(path: str, chunk: int = 1 << 20) -> bool:
    """Cheap pre-check, as for citations: the marker must be in the bytes."""
    from .citation_store import file_holds

    return file_holds(path, BEGINS.strip().encode(), chunk)
    return False


def summary_in(text: str) -> str | None:
    start = text.find(BEGINS)
    if start < 0:
        return None
    start += len(BEGINS)
    end = text.find(ENDS, start)
    return text[start:] if end < 0 else text[start:end]


def received_summary(rollout: RolloutToSearch) -> ReceivedSummary | None:
    """The first read-path developer message of one rollout."""
    from ..codex.rollout import Message, read_rollout

    if not _may_hold(rollout.path):
        return None
    for line in read_rollout(rollout.path).lines:
        it = line.item
        if isinstance(it, Message) and it.role == "developer":
            joined = "".join(p.text for p in it.content if p.text)  # v2: parts cut mid-line
            text = summary_in(joined)
            if text is not None:
                return ReceivedSummary(rollout.thread_id, parse_iso(line.timestamp),
                                       rollout.path, text, -(-len(text.encode()) // 4))
    return None


def last_received(rollouts: Iterable[RolloutToSearch]) -> ReceivedSummary | None:
    for r in sorted(rollouts, key=lambda r: (-r.started, r.path)):
        got = received_summary(r)
        if got is not None:
            return got
    return None


def preview(home: CodexHome, rollouts: Iterable[RolloutToSearch]) -> Preview:
    nxt = injected_summary(home)
    last = last_received(rollouts)
    root = str(home.memory_root)
    if last is None:
        return Preview(nxt, root, None, "no session has received memory yet", "")
    who = f"thread {last.thread_id or '?'}, {iso_utc(last.time) or 'time unknown'}"
    if nxt.active and nxt.text == last.text:
        return Preview(nxt, root, last, f"same as the last session ({who})", "")
    diff = "".join(difflib.unified_diff(
        last.text.splitlines(keepends=True), nxt.text.splitlines(keepends=True) if nxt.active
        else [], f"last session ({who})", "next session", n=2))
    if not diff.endswith("\n"):
        diff += "\n"
    if not nxt.active:
        what = f"the next session gets no memory ({nxt.note}); the last session ({who}) got " \
               f"≈{last.tokens:,} tokens"
    else:
        added = sum(1 for ln in diff.splitlines() if ln.startswith("+")
                    and not ln.startswith("+++"))
        gone = sum(1 for ln in diff.splitlines() if ln.startswith("-")
                   and not ln.startswith("---"))
        what = f"differs from what the last session received ({who}): {added} lines added, " \
               f"{gone} removed"
    return Preview(nxt, root, last, what, diff)
