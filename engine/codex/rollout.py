"""Rollouts as typed, frozen records (docs/codex-format.md "Rollout files").

Every line becomes a `RolloutLine` whose `item` is one of the records below. Unknown item
types, unknown response-item types and unknown fields are never an error: they are kept in
`raw`, so nothing Codex wrote is lost when memdeck passes items on (phase-1 input keeps the
original JSON of every item it forwards).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import jsonfast
from .code_mode import Cell
from .fragments import (
    is_legacy_meta,
    legacy_meta_payload,
    source_label,
    stored_source,
    user_prompt_from_payload,
)
from .line_problems import (
    BINARY_FILE,
    LineProblem,
    describe_bad_line,
    file_problem,
    no_type,
    not_an_object,
    too_long,
)
from .linestream import MAX_LINE, StreamState, iter_batches, looks_binary, read_head
from .tool_output import decode_output, output_text

# Line types Codex writes that carry nothing for a transcript (bookkeeping, not unknown):
# docs/codex-format.md "Rollout lines"; `dynamic_tools_updated` and `id_allocation` are in the
# line types of the 0.169 and 0.171 binaries.
BOOKKEEPING_TYPES = frozenset({
    "token_usage_record", "world_state", "security_risk_score", "retained_context",
    "realtime_item", "inter_agent_communication_metadata", "dynamic_tools_updated",
    "id_allocation",
})


# --------------------------------------------------------------------------------------
# records


@dataclass(frozen=True)
class GitInfo:
    commit_hash: str | None = None
    branch: str | None = None
    repository_url: str | None = None


@dataclass(frozen=True)
class SessionMeta:
    id: str | None
    session_id: str | None
    timestamp: str | None
    cwd: str | None
    originator: str | None
    cli_version: str | None
    source: str  # as in threads.source: `cli`, or JSON text such as {"subagent":"review"}
    thread_source: str | None
    memory_mode: str | None
    history_mode: str
    forked_from_id: str | None
    parent_thread_id: str | None
    agent_nickname: str | None
    model_provider: str | None
    git: GitInfo | None
    raw: dict[str, Any] = field(repr=False, compare=False)
    agent_role: str | None = None

    @property
    def source_label(self) -> str:
        """What the user ran ("Codex TUI", "exec", "sub-agent: review", …)."""
        return source_label(self.source, self.originator)


@dataclass(frozen=True)
class ContentPart:
    type: str
    text: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Message:
    role: str
    content: tuple[ContentPart, ...]
    phase: str | None
    id: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.content if p.text)


@dataclass(frozen=True)
class Reasoning:
    summary: tuple[str, ...]
    encrypted: bool
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class ToolCall:
    """function_call, custom_tool_call, local_shell_call, tool_search_call, web_search_call."""

    kind: str
    name: str
    call_id: str | None
    arguments: str  # function_call arguments / custom tool input / shell command, as text
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class ToolOutput:
    """function_call_output, custom_tool_call_output, tool_search_output.

    `text` is what the tool printed: a shell header (`Process exited with code N` …
    `Output:`, after a `Command:` line in 0.115-0.118), the older JSON envelope
    (`{"output": …, "metadata": {"exit_code": N}}`) or a code-mode cell (`Script completed` …)
    is decoded into `exit_code` and `duration_s`; `raw` keeps the item as Codex wrote it."""

    kind: str
    call_id: str | None
    text: str
    raw: dict[str, Any] = field(repr=False, compare=False)
    exit_code: int | None = None
    duration_s: float | None = None
    running: bool = False  # a command (or code cell) still running when this was taken
    command: str | None = None  # 0.115-0.118: the header's `Command:` (the shell's argv)
    cell: Cell | None = field(default=None, repr=False, compare=False)  # code mode


@dataclass(frozen=True)
class AgentMessage:
    author: str | None
    recipient: str | None
    text: str
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class OtherResponseItem:
    """A response item memdeck has no special view of (compaction, image generation, new kinds)."""

    type: str
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class TurnContext:
    cwd: str | None
    model: str | None
    approval_policy: Any
    sandbox_policy: Any
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class EventMsg:
    """An `event_msg` line. Legacy rollouts repeat each message as `user_message` /
    `agent_message`; paginated ones (0.169) as `item_completed` with a `UserMessage` /
    `AgentMessage` / `CommandExecution` item. Both repeat what the response items hold."""

    kind: str  # payload.type: user_message, agent_message, item_completed, token_count, …
    message: str | None  # text of user_message / agent_message / item_completed messages
    raw: dict[str, Any] = field(repr=False, compare=False)
    item_type: str | None = None  # item_completed: UserMessage, AgentMessage, CommandExecution…
    call_id: str | None = None  # exec_command_end, item_completed CommandExecution
    exit_code: int | None = None  # the same two, when the command finished


@dataclass(frozen=True)
class Compacted:
    message: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class InterAgentCommunication:
    author: str | None
    recipient: str | None
    content: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Bookkeeping:
    """token_usage_record, world_state and the like: known, kept, never shown."""

    type: str
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class UnknownItem:
    """A line type memdeck does not know (a newer Codex): kept as it was."""

    type: str
    raw: dict[str, Any] = field(repr=False, compare=False)


ResponseItem = Message | Reasoning | ToolCall | ToolOutput | AgentMessage | OtherResponseItem
Item = (
    SessionMeta | ResponseItem | TurnContext | EventMsg | Compacted | InterAgentCommunication
    | Bookkeeping | UnknownItem
)


@dataclass(frozen=True)
class RolloutLine:
    line_no: int
    timestamp: str | None
    type: str  # envelope type: session_meta, response_item, event_msg, …
    item: Item
    metadata: dict[str, Any] | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Rollout:
    path: Path
    format: str  # "jsonl" | "jsonl.zst" | "legacy"
    lines: tuple[RolloutLine, ...]
    problems: tuple[LineProblem, ...]
    pending_bytes: int  # an unterminated last line, not read yet
    file_problem: str | None  # why the file as a whole cannot be used, if it cannot

    @property
    def meta(self) -> SessionMeta | None:
        """The first session_meta with an id: it defines the thread."""
        return thread_meta(self.lines)

    @property
    def memory_mode(self) -> str | None:
        """The last session_meta's memory_mode (a later line switches it)."""
        mode = None
        for line in self.lines:
            if isinstance(line.item, SessionMeta) and line.item.memory_mode:
                mode = line.item.memory_mode
        return mode

    @property
    def bad_lines(self) -> int:
        return len(self.problems)

    @property
    def unknown_types(self) -> tuple[str, ...]:
        """Line types this memdeck does not know (a newer Codex), sorted."""
        return tuple(sorted({x.type for x in self.lines if isinstance(x.item, UnknownItem)}))


def thread_meta(lines: Iterable[RolloutLine]) -> SessionMeta | None:
    """The first session_meta line with an id: it defines the thread."""
    for line in lines:
        if isinstance(line.item, SessionMeta) and line.item.id:
            return line.item
    return None


# --------------------------------------------------------------------------------------
# decoding


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def decode_session_meta(p: dict[str, Any]) -> SessionMeta:
    git = p.get("git")
    gi = (
        GitInfo(_s(git.get("commit_hash")), _s(git.get("branch")), _s(git.get("repository_url")))
        if isinstance(git, dict)
        else None
    )
    return SessionMeta(
        id=_s(p.get("id")),
        session_id=_s(p.get("session_id")) or _s(p.get("id")),
        timestamp=_s(p.get("timestamp")),
        cwd=_s(p.get("cwd")),
        originator=_s(p.get("originator")),
        cli_version=_s(p.get("cli_version")),
        source=stored_source(p),
        thread_source=_s(p.get("thread_source")),
        memory_mode=_s(p.get("memory_mode")),
        history_mode=_s(p.get("history_mode")) or "legacy",
        forked_from_id=_s(p.get("forked_from_id")),
        parent_thread_id=_s(p.get("parent_thread_id")),
        agent_nickname=_s(p.get("agent_nickname")),
        model_provider=_s(p.get("model_provider")),
        git=gi,
        raw=p,
        agent_role=_s(p.get("agent_role")) or _s(p.get("agent_type")),
    )


def decode_response_item(p: dict[str, Any]) -> ResponseItem:
    t = p.get("type")
    if t == "message":
        parts = tuple(
            ContentPart(str(c.get("type", "")), _s(c.get("text")), c)
            for c in _list(p.get("content"))
            if isinstance(c, dict)
        )
        return Message(str(p.get("role", "")), parts, _s(p.get("phase")), _s(p.get("id")), p)
    if t == "reasoning":
        summary = tuple(
            s["text"] for s in _list(p.get("summary")) if isinstance(s, dict) and _s(s.get("text"))
        )
        return Reasoning(summary, bool(p.get("encrypted_content")), p)
    if t == "function_call":
        args = p.get("arguments")
        name = str(p.get("name", ""))
        if _s(p.get("namespace")):
            name = f"{p['namespace']}.{name}"
        return ToolCall(t, name, _s(p.get("call_id")), args if isinstance(args, str) else "", p)
    if t == "custom_tool_call":
        name = str(p.get("name", ""))
        return ToolCall(t, name, _s(p.get("call_id")), _s(p.get("input")) or "", p)
    if t == "local_shell_call":
        action = p.get("action")
        cmd = action.get("command") if isinstance(action, dict) else None
        text = " ".join(map(str, cmd)) if isinstance(cmd, list) else str(cmd or "")
        return ToolCall(t, "shell", _s(p.get("call_id")), text, p)
    if t in ("tool_search_call", "web_search_call"):
        detail = p.get("action") if t == "web_search_call" else p.get("arguments")
        text = json.dumps(detail, ensure_ascii=False) if detail is not None else ""
        return ToolCall(t, t.removesuffix("_call"), _s(p.get("call_id")), text, p)
    if t in ("function_call_output", "custom_tool_call_output"):
        out = decode_output(p.get("output"))
        return ToolOutput(t, _s(p.get("call_id")), out.text, p, out.exit_code, out.duration_s,
                          out.running, out.command, out.cell)
    if t == "tool_search_output":
        tools = p.get("tools")
        return ToolOutput(t, _s(p.get("call_id")), json.dumps(tools, ensure_ascii=False), p)
    if t == "agent_message":
        return AgentMessage(
            _s(p.get("author")), _s(p.get("recipient")), output_text(p.get("content")), p
        )
    return OtherResponseItem(str(t), p)


def decode_item(kind: str, payload: Any) -> Item:
    p = payload if isinstance(payload, dict) else {"value": payload}
    if kind == "session_meta":
        return decode_session_meta(p)
    if kind == "response_item":
        return decode_response_item(p)
    if kind == "turn_context":
        return TurnContext(_s(p.get("cwd")), _s(p.get("model")), p.get("approval_policy"),
                           p.get("sandbox_policy"), p)
    if kind == "event_msg":
        return decode_event(p)
    if kind == "compacted":
        return Compacted(_s(p.get("message")), p)
    if kind == "inter_agent_communication":
        content = p.get("content")
        return InterAgentCommunication(
            _s(p.get("author")), _s(p.get("recipient")),
            content if isinstance(content, str) else output_text(content), p,
        )
    if kind in BOOKKEEPING_TYPES:
        return Bookkeeping(kind, p)
    return UnknownItem(kind, p)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def decode_event(p: dict[str, Any]) -> EventMsg:
    kind = str(p.get("type", ""))
    if kind == "item_completed" and isinstance(p.get("item"), dict):
        item = p["item"]
        itype = _s(item.get("type"))
        text = None
        if itype in ("UserMessage", "AgentMessage"):
            text = "\n".join(c["text"] for c in _list(item.get("content"))
                             if isinstance(c, dict) and isinstance(c.get("text"), str))
        call_id = _s(item.get("id")) if itype == "CommandExecution" else None
        return EventMsg(kind, text, p, itype, call_id, _int(item.get("exit_code")))
    if kind == "exec_command_end":
        return EventMsg(kind, None, p, None, _s(p.get("call_id")), _int(p.get("exit_code")))
    return EventMsg(kind, _s(p.get("message")), p)


def legacy_meta(header: dict[str, Any]) -> SessionMeta:
    """The session_meta of a pre-envelope rollout, from its bare header line."""
    return decode_session_meta(legacy_meta_payload(header))


# --------------------------------------------------------------------------------------
# reading a whole rollout (show, phase 1, citations)


def read_rollout(path: str | Path, max_line: int = MAX_LINE) -> Rollout:
    """Read every line into records; tolerant: problems are collected, never raised.

    A line is valid by the same rule the index scanner uses (`jsonfast.line_type`), so the
    listing and the transcript always agree on what is a bad line.
    """
    path = Path(path)
    fmt = "jsonl.zst" if str(path).endswith(".zst") else "jsonl"
    if looks_binary(read_head(path)):
        return Rollout(path, fmt, (), (), 0, BINARY_FILE)
    state = StreamState()
    lines: list[RolloutLine] = []
    problems: list[LineProblem] = []
    legacy: bool | None = None  # the first non-blank line decides
    seen_content = False
    n = 0
    for batch in iter_batches(path, state, max_line=max_line):
        if batch.oversized:
            n += 1
            problems.append(LineProblem(n, *too_long(batch.oversized, max_line)))
            continue
        for raw_line in batch.lines:
            n += 1
            if jsonfast.is_blank(raw_line):
                continue
            seen_content = True
            parsed = _parse_line(raw_line)
            if parsed is None:
                problems.append(LineProblem(n, *describe_bad_line(raw_line)))
                legacy = False if legacy is None else legacy
                continue
            t, obj = parsed
            if legacy is None:
                if t is None and is_legacy_meta(obj):
                    legacy = True
                    fmt = "legacy"
                    lines.append(RolloutLine(n, _s(obj.get("timestamp")), "session_meta",
                                             legacy_meta(obj)))
                    continue
                legacy = False
            decoded = _decode_line(n, obj, legacy, t)
            if isinstance(decoded, LineProblem):
                problems.append(decoded)
            elif decoded is not None:
                lines.append(decoded)
    problems.sort(key=lambda p: p.line_no)
    has_thread = thread_meta(lines) is not None
    return Rollout(path, fmt, tuple(lines), tuple(problems), state.pending_bytes,
                   file_problem(state.error, has_thread, seen_content, state.pending_bytes))


def _parse_line(line: bytes) -> tuple[str | None, Any] | None:
    """(the type as the validator read it, the decoded JSON) of a valid line; None when the
    validator or the strict decoder refuses it."""
    t = jsonfast.line_type(line)
    if t is False:
        return None
    try:
        return t, jsonfast.loads(line)
    except ValueError:
        return None


def _decode_line(n: int, obj: Any, legacy: bool,
                 t: str | None) -> RolloutLine | LineProblem | None:
    """`t` is the line's type as the validator read it (with a duplicated key, the first)."""
    if not isinstance(obj, dict):
        return LineProblem(n, *not_an_object(obj))
    if legacy:
        if "record_type" in obj:  # {"record_type":"state"} markers
            return None
        if not isinstance(t, str):
            return LineProblem(n, *no_type())
        return RolloutLine(n, None, "response_item", decode_response_item(obj))
    if not isinstance(t, str):
        return LineProblem(n, *no_type())
    if t == "response_item" and isinstance(obj.get("payload"), dict):
        if obj["payload"].get("type") == "ghost_snapshot":  # legacy, dropped by Codex too
            return None
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else None
    return RolloutLine(n, _s(obj.get("timestamp")), t, decode_item(t, obj.get("payload")), meta)


# --------------------------------------------------------------------------------------
# fragments Codex injects into user messages (docs/codex-format.md "Injected fragments")


def user_prompt_text(msg: Message) -> str:
    """The user's own words in a user message, fragments removed ('' when there are none)."""
    return user_prompt_from_payload(msg.raw)
