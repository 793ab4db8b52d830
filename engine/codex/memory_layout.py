"""The files phase 2 writes into the memory root, with Codex's exact names and layouts
(docs/codex-format.md "Rollout summary files", "raw_memories.md")."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..formatting import rfc3339_utc

# Codex's names in the root (docs/codex-format.md "The workspace diff", "Extensions and
# notes"); phase2/ and memory_folder/ take them from here
DIFF_FILE = "phase2_workspace_diff.md"
NOTES_PREFIX = "extensions/ad_hoc/notes/"

BASE62 = "0123456789abcdefghijklmnopqrstuvwxyz" "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SLUG_MAX = 60


def _uuid_v7_seconds(thread_id: str) -> int | None:
    try:
        u = uuid.UUID(thread_id)
    except ValueError:
        return None
    if u.version != 7:
        return None
    return (u.int >> 80) // 1000


def _h4(thread_id: str) -> str:
    try:
        v = (uuid.UUID(thread_id).int & 0xFFFFFFFF) % (62**4)
    except ValueError:
        h = 0
        for b in thread_id.encode("utf-8"):
            h = (h * 31 + b) & 0xFFFFFFFF
        v = h % (62**4)
    digits = []
    for _ in range(4):
        v, r = divmod(v, 62)
        digits.append(BASE62[r])
    return "".join(reversed(digits))


def slugify(slug: str | None) -> str:
    if not slug:
        return ""
    out: list[str] = []
    for ch in slug:
        if len(out) >= SLUG_MAX:
            break
        out.append(ch.lower() if ch.isascii() and ch.isalnum() else "_")
    return "".join(out).rstrip("_")


def rollout_summary_file_stem(thread_id: str, source_updated_at: int, slug: str | None) -> str:
    """`<TS>-<H4>[-<slug>]`: TS from the UUIDv7 (else source_updated_at), H4 from its low bits."""
    secs = _uuid_v7_seconds(thread_id)
    if secs is None:
        secs = int(source_updated_at)
    ts = datetime.fromtimestamp(secs, UTC).strftime("%Y-%m-%dT%H-%M-%S")
    stem = f"{ts}-{_h4(thread_id)}"
    s = slugify(slug)
    return f"{stem}-{s}" if s else stem


@dataclass(frozen=True)
class SelectedMemory:
    """A stage-1 output chosen for phase 2, hydrated with its thread's facts."""

    thread_id: str
    source_updated_at: int
    raw_memory: str
    rollout_summary: str
    rollout_slug: str | None
    rollout_path: str
    cwd: str
    git_branch: str | None

    @property
    def file_stem(self) -> str:
        return rollout_summary_file_stem(self.thread_id, self.source_updated_at,
                                         self.rollout_slug)


def render_rollout_summary(m: SelectedMemory) -> str:
    head = [
        f"thread_id: {m.thread_id}",
        f"updated_at: {rfc3339_utc(m.source_updated_at)}",
        f"rollout_path: {m.rollout_path}",
        f"cwd: {m.cwd}",
    ]
    if m.git_branch:
        head.append(f"git_branch: {m.git_branch}")
    return "\n".join(head) + "\n\n" + m.rollout_summary + "\n"


def render_raw_memories(selected: list[SelectedMemory]) -> str:
    out = ["# Raw Memories", ""]
    if not selected:
        out.append("No raw memories yet.")
        return "\n".join(out) + "\n"
    out += ["Merged stage-1 raw memories (stable ascending thread-id order):", ""]
    for m in sorted(selected, key=lambda m: m.thread_id):
        out += [
            f"## Thread `{m.thread_id}`",
            f"updated_at: {rfc3339_utc(m.source_updated_at)}",
            f"cwd: {m.cwd}",
            f"rollout_path: {m.rollout_path}",
            f"rollout_summary_file: {m.file_stem}.md",
            "",
            m.raw_memory.strip(),
            "",
        ]
    # Codex 0.169 ends the file with one more empty line; without it Codex rewrites the file
    # and its next workspace diff shows `M raw_memories.md`
    # (docs/codex-format.md "raw_memories.md").
    return "\n".join(out) + "\n"


def threads_in_root(root: Path) -> set[str]:
    """The threads whose rollout summary a memory root holds (each summary file starts with
    `thread_id: <id>`): the raw memories the root's consolidated memory is made of."""
    out = set()
    for p in (root / "rollout_summaries").glob("*.md"):
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                first = f.readline()
        except OSError:
            continue
        if first.startswith("thread_id:"):
            out.add(first.removeprefix("thread_id:").strip())
    return out
