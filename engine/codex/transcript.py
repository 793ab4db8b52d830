"""A session's transcript, flattened for display and JSON: roles, tool calls and outputs,
injected context marked, citation blocks parsed.

Each turn is shown once, from the response items. The events that repeat them — legacy
`user_message` / `agent_message`, 0.169's `item_completed` `UserMessage` / `AgentMessage` /
`CommandExecution` — are not turns; they only lend a tool output the exit code its own text
does not carry.

Three things are shown as less than Codex wrote (docs/codex-format.md "Transcript markers"):
the base instructions (the session_meta's `base_instructions`, repeated as the first
developer message) keep their text but get the title `base instructions`; an attached image
is one `marker` entry `[image]`, its `<image …>` / `</image>` wrapper parts dropped; a
compaction (`compacted` line, `context_compacted` event, one marker for the pair) is a
`marker` entry "context compacted here"."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from .citations import CitationJSON, MemoryCitation, citation_json, parse_message
from .code_mode import Cell
from .fragments import is_context_fragment, is_image_tag, is_instructions_fragment
from .rollout import (
    AgentMessage,
    Compacted,
    ContentPart,
    EventMsg,
    Message,
    Reasoning,
    Rollout,
    SessionMeta,
    ToolCall,
    ToolOutput,
    TurnContext,
)


class ToolExtra(TypedDict, total=False):
    """What a tool call or output entry carries besides its text."""

    call_id: str | None
    type: str  # tool_call: the item's type (function_call, custom_tool_call, …)
    exit_code: int | None  # tool_output: from its own text, else from the command's event
    command: str  # tool_output of 0.115-0.118: the header's `Command:` line


class TranscriptItemJSON(TypedDict):
    """One entry as `memdeck show --json` prints it."""

    line: int
    timestamp: str | None
    kind: str
    title: str
    text: str
    context: NotRequired[bool]  # present (true) for harness context
    citation: NotRequired[CitationJSON]
    call_id: NotRequired[str | None]  # tool_call and tool_output
    exit_code: NotRequired[int | None]  # tool_output
    command: NotRequired[str]  # tool_output whose header names its command (0.115-0.118)


@dataclass(frozen=True)
class TranscriptEntry:
    line_no: int
    timestamp: str | None
    kind: str  # user | assistant | developer | context | tool_call | tool_output | reasoning |
    #            event | meta | agent | marker (image, compaction) | other
    title: str
    text: str
    dim: bool = False  # harness context: environment, AGENTS.md, skills
    citation: MemoryCitation | None = None
    extra: ToolExtra = field(default_factory=ToolExtra)

    def to_json(self) -> TranscriptItemJSON:
        d: TranscriptItemJSON = {"line": self.line_no, "timestamp": self.timestamp,
                                 "kind": self.kind, "title": self.title, "text": self.text}
        if self.dim:
            d["context"] = True
        if self.citation is not None:
            d["citation"] = citation_json(self.citation)
        if self.kind in ("tool_call", "tool_output"):
            d["call_id"] = self.extra.get("call_id")
        if self.kind == "tool_output":
            d["exit_code"] = self.extra.get("exit_code")
            if "command" in self.extra:
                d["command"] = self.extra["command"]
        return d


def command_exit_codes(rollout: Rollout) -> dict[str, int]:
    """call_id → exit code, from `exec_command_end` and `item_completed` CommandExecution."""
    codes: dict[str, int] = {}
    for line in rollout.lines:
        it = line.item
        if isinstance(it, EventMsg) and it.call_id and it.exit_code is not None:
            codes[it.call_id] = it.exit_code
    return codes


def output_title(exit_code: int | None, running: bool = False,
                 cell: Cell | None = None) -> str:
    """"exit code 1"; a code-mode cell that printed several results: "exit codes 1, 0"; a
    script that threw: "script failed"; "still running"; else "output"."""
    if exit_code is not None:
        return f"exit code {exit_code}"
    codes = [r.exit_code for r in cell.results if r.exit_code is not None] if cell else []
    if len(codes) > 1:
        return "exit codes " + ", ".join(map(str, codes))
    if cell is not None and cell.status == "failed":
        return "script failed"
    return "still running" if running else "output"


BASE_INSTRUCTIONS = "base instructions"  # title of the developer entry that holds them
IMAGE_MARKER = "[image]"
COMPACTION_MARKER = "context compacted here"
_IMAGE_PART_TYPES = frozenset({"input_image", "image"})
_ONLY_IMAGE_TAGS = re.compile(r"(?:\s*</?image(?:\s[^<>]*)?>)+\s*", re.IGNORECASE)
_IMAGE_OPEN = re.compile(r"<image[\s>]", re.IGNORECASE)


def base_instructions_text(rollout: Rollout) -> str | None:
    """The first session_meta's `base_instructions` (`{"text": …}` or a bare string)."""
    for line in rollout.lines:
        if isinstance(line.item, SessionMeta):
            value: Any = line.item.raw.get("base_instructions")
            if isinstance(value, dict):
                value = value.get("text")
            return value.strip() if isinstance(value, str) and value.strip() else None
    return None


def is_base_instructions(text: str, base: str | None) -> bool:
    """A developer message that is the model's base instructions: the session_meta's text, or
    (a rollout without it) Codex's own opening words."""
    t = text.strip()
    if base is not None:
        return t == base
    return t.startswith("You are Codex") and t.count("\n") >= 20


def _user_parts(line_no: int, ts: str | None, parts: tuple[ContentPart, ...]
                ) -> list[TranscriptEntry]:
    """A user message's parts: text as user or context, one `[image]` per attached image
    (its wrapper tags and the image itself make one marker)."""
    out: list[TranscriptEntry] = []
    wrapped = 0  # `<image …>` tags whose image part has not come yet
    for part in parts:
        if part.type in _IMAGE_PART_TYPES:
            if wrapped:
                wrapped -= 1
            else:
                out.append(TranscriptEntry(line_no, ts, "marker", "image", IMAGE_MARKER, True))
            continue
        if not part.text:
            continue
        if _ONLY_IMAGE_TAGS.fullmatch(part.text) or is_image_tag(part.text):
            opened = len(_IMAGE_OPEN.findall(part.text))
            closed = part.text.lower().count("</image>")
            out.extend(TranscriptEntry(line_no, ts, "marker", "image", IMAGE_MARKER, True)
                       for _ in range(opened))
            wrapped = max(0, wrapped + opened - closed)
            continue
        ctx = is_instructions_fragment(part.text) or is_context_fragment(part.text)
        out.append(TranscriptEntry(line_no, ts, "context" if ctx else "user",
                                   "context" if ctx else "user", part.text, ctx))
    return out


def transcript(rollout: Rollout, include_events: bool = False) -> list[TranscriptEntry]:
    out: list[TranscriptEntry] = []
    codes = command_exit_codes(rollout)
    base = base_instructions_text(rollout)
    compacted_at: int | None = None  # index of the last compaction marker
    for line in rollout.lines:
        it = line.item
        ts = line.timestamp
        if isinstance(it, Message):
            if it.role == "user":
                out.extend(_user_parts(line.line_no, ts, it.content))
            elif it.role == "assistant":
                cit = parse_message(it.text)
                out.append(TranscriptEntry(line.line_no, ts, "assistant",
                                           f"assistant{' · ' + it.phase if it.phase else ''}",
                                           it.text, citation=cit))
            else:
                title = BASE_INSTRUCTIONS if is_base_instructions(it.text, base) else it.role
                out.append(TranscriptEntry(line.line_no, ts, "developer", title, it.text, True))
        elif isinstance(it, ToolCall):
            out.append(TranscriptEntry(line.line_no, ts, "tool_call", it.name, it.arguments,
                                       extra={"call_id": it.call_id, "type": it.kind}))
        elif isinstance(it, ToolOutput):
            code = it.exit_code
            if code is None and it.call_id and not it.running and it.cell is None:
                code = codes.get(it.call_id)
            extra: ToolExtra = {"call_id": it.call_id, "exit_code": code}
            if it.command is not None:
                extra["command"] = it.command
            out.append(TranscriptEntry(line.line_no, ts, "tool_output",
                                       output_title(code, it.running, it.cell), it.text,
                                       extra=extra))
        elif isinstance(it, Reasoning):
            if it.summary:
                out.append(TranscriptEntry(line.line_no, ts, "reasoning", "reasoning",
                                           "\n".join(it.summary), True))
        elif isinstance(it, AgentMessage):
            out.append(TranscriptEntry(line.line_no, ts, "agent",
                                       f"{it.author or '?'} → {it.recipient or '?'}", it.text))
        elif isinstance(it, SessionMeta):
            if it.memory_mode:
                out.append(TranscriptEntry(line.line_no, ts, "meta", "session_meta",
                                           f"memory_mode = {it.memory_mode}", True))
        elif isinstance(it, TurnContext):
            continue
        elif isinstance(it, Compacted) or (isinstance(it, EventMsg)
                                           and it.kind == "context_compacted"):
            # Codex writes both for one compaction: the second is the same marker
            if compacted_at is None or any(e.kind != "event" for e in out[compacted_at + 1:]):
                compacted_at = len(out)
                out.append(TranscriptEntry(line.line_no, ts, "marker", "compaction",
                                           COMPACTION_MARKER, True))
        elif isinstance(it, EventMsg):
            if include_events:
                out.append(TranscriptEntry(line.line_no, ts, "event", it.kind, it.message or "",
                                           True))
    return out
