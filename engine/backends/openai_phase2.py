"""Phase 2 through an OpenAI-compatible endpoint (`OpenAIPhase2`, a Phase2Backend): the
consolidation agent, a model with six file tools confined to one workspace folder
(docs/codex-format.md "The consolidation agent", "Memory tools"), given Codex's consolidation
prompt.

Paths follow one rule, phase2/paths.py, for every tool: normalised first, then refused when
absolute, escaping, hidden (`.git`), through a symlink or outside the workspace; inputs are
read only and the user's notes are never changed or deleted. Tool errors, whatever the
arguments, go back to the model as tool results, never up as exceptions. The run stops when
the model answers without calling a tool, and fails (one line, nothing kept) past a step
limit or a byte limit on what it may write.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MemdeckError
from ..phase2 import paths
from ..phase2.backend import Phase2Result
from ..phase2.paths import AgentPath, PathRefused
from .openai_client import BackendConfig, OpenAIBackend
from .replies import ModelCallError, ModelReply, text_problem

if TYPE_CHECKING:
    import openai

    from ..codex.memory_layout import SelectedMemory
    from ..store import Store

log = logging.getLogger(__name__)

MAX_STEPS = 60
MAX_WRITE_BYTES = 4 * 1024 * 1024
READ_LIMIT = 80_000  # characters returned by one read
SEARCH_HITS = 200


class AgentError(MemdeckError):
    pass


def _fn(name: str, desc: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": props, "required": required,
        "additionalProperties": False}}}


_S = {"type": "string"}
TOOLS = [
    _fn("list", "List a folder's entries.", {"path": _S}, []),
    _fn("read", "Read a text file, optionally from a 1-based line.",
        {"path": _S, "line_offset": {"type": "integer"}}, ["path"]),
    _fn("search", "Find lines containing any of the queries.",
        {"queries": {"type": "array", "items": _S}, "path": _S}, ["queries"]),
    _fn("write", "Create or replace a file.", {"path": _S, "content": _S}, ["path", "content"]),
    _fn("edit", "Replace the one occurrence of old with new in a file.",
        {"path": _S, "old": _S, "new": _S}, ["path", "old", "new"]),
    _fn("delete", "Delete a file.", {"path": _S}, ["path"]),
]


TOOL_NAMES = tuple(t["function"]["name"] for t in TOOLS)


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class AgentRun:
    steps: int
    summary: str
    input_tokens: int
    output_tokens: int


class Workspace:
    """The agent's six tools over one workspace folder. Every path goes through
    phase2/paths.py (`resolve`, then `check_change` before any change) and every folder is
    looked into through `paths.walk` / `paths.entries`, which never follow a symlink."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self.written = 0

    def resolve(self, raw: object, *, must_exist: bool = True) -> AgentPath:
        return paths.resolve(self.root, raw, must_exist=must_exist)

    def call(self, name: str, args: object) -> str:
        """One tool call; PathRefused / ToolArgumentError / OSError for the model to read."""
        if not isinstance(args, dict):
            raise ToolArgumentError("arguments must be a JSON object")
        tool = getattr(self, f"_tool_{name}", None) if name in TOOL_NAMES else None
        if tool is None:
            raise ToolArgumentError(f"unknown tool {name!r}; the tools are "
                                    f"{', '.join(TOOL_NAMES)}")
        result: str = tool(args)
        return result

    def _tool_list(self, args: dict[str, Any]) -> str:
        folder = self.resolve(args.get("path"))
        if not folder.path.is_dir():
            paths.regular_file(folder)  # a FIFO or device gets its own reason
            raise PathRefused(f"{folder.rel} is a file, not a folder; use read")
        return json.dumps(paths.entries(folder))

    def _tool_read(self, args: dict[str, Any]) -> str:
        p = paths.regular_file(self.resolve(_required(args, "path")))
        offset = args.get("line_offset")
        if offset is not None and (isinstance(offset, bool) or not isinstance(offset, int)):
            raise ToolArgumentError("line_offset must be an integer")
        lines = _read_text(p).splitlines()
        start = max(1, offset or 1)
        text = "\n".join(f"{i}: {ln}" for i, ln in enumerate(lines[start - 1:], start))
        return text[:READ_LIMIT] + ("\n[truncated]" if len(text) > READ_LIMIT else "")

    def _tool_search(self, args: dict[str, Any]) -> str:
        queries = args.get("queries")
        if isinstance(queries, str):
            queries = [queries]
        if (not isinstance(queries, list) or not queries
                or not all(isinstance(q, str) and q for q in queries)):
            raise ToolArgumentError("queries must be a list of non-empty strings")
        base = self.resolve(args.get("path"))
        if not base.path.is_dir():
            paths.regular_file(base)
        hits: list[str] = []
        for rel, f in paths.walk(base):
            try:
                text = paths.read_regular(f).decode("utf-8", errors="replace")
            except (OSError, PathRefused):
                continue
            hits += [f"{rel}:{i}: {ln}" for i, ln in enumerate(text.splitlines(), 1)
                     if any(q in ln for q in queries)]
            if len(hits) >= SEARCH_HITS:
                break
        return "\n".join(hits[:SEARCH_HITS]) or "no matches"

    def _tool_write(self, args: dict[str, Any]) -> str:
        p = self.resolve(_required(args, "path"), must_exist=False)
        content = _text_arg(args, "content")
        paths.check_change(p, "write")  # also refuses the root itself
        if p.path.exists() or p.path.is_symlink():
            paths.regular_file(p)
        self._count(content)
        p.path.parent.mkdir(parents=True, exist_ok=True)
        _write_text(p.path, content)
        return "ok"

    def _tool_edit(self, args: dict[str, Any]) -> str:
        p = paths.regular_file(self.resolve(_required(args, "path")))
        old, new = _text_arg(args, "old"), _text_arg(args, "new")
        paths.check_change(p, "edit")
        if not old:
            raise ToolArgumentError("`old` must not be empty")
        text = _read_text(p)
        if text.count(old) != 1:
            raise ToolArgumentError(f"`old` occurs {text.count(old)} times in {p.rel}; "
                                    "it must occur exactly once")
        self._count(new)
        _write_text(p.path, text.replace(old, new))
        return "ok"

    def _tool_delete(self, args: dict[str, Any]) -> str:
        p = self.resolve(_required(args, "path"))
        paths.check_change(p, "delete")
        paths.regular_file(p)
        p.path.unlink()
        return "ok"

    def _count(self, text: str) -> None:
        self.written += len(text.encode("utf-8"))
        if self.written > MAX_WRITE_BYTES:
            raise AgentError(f"the consolidation agent wrote more than "
                             f"{MAX_WRITE_BYTES // 2**20} MiB; stopped")


class ToolArgumentError(ValueError):
    """A tool call's arguments are unusable; the model reads why."""


def _required(args: dict[str, Any], key: str) -> object:
    if key not in args:
        raise ToolArgumentError(f"`{key}` is required")
    return args[key]


def _text_arg(args: dict[str, Any], key: str) -> str:
    value = _required(args, key)
    problem = text_problem(value)
    if problem:
        raise ToolArgumentError(f"`{key}` {problem}")
    return str(value)


def _read_text(p: AgentPath) -> str:
    try:
        return paths.read_regular(p.path).decode("utf-8")
    except UnicodeDecodeError:
        raise PathRefused(f"{p.rel} is not UTF-8 text") from None


def _write_text(path: Path, text: str) -> None:
    # O_NOFOLLOW: a symlink put there after the check is refused, not written through
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


class ToolsIgnored(Exception):
    """The endpoint has no tool calling (`auto`: phase2_files_json.py takes over)."""

    def __init__(self, input_tokens: int = 0, output_tokens: int = 0) -> None:
        super().__init__("no tool calling")
        self.input_tokens, self.output_tokens = input_tokens, output_tokens


def run_agent(client: openai.OpenAI, cfg: BackendConfig, prompt: str, root: Path,
              max_steps: int | None = None, *, detect_no_tools: bool = False) -> AgentRun:
    """The agent loop. With `detect_no_tools`, a refused `tools` parameter or a first answer
    without a tool call (nothing read yet) raises ToolsIgnored instead."""
    from .openai_client import ModelCallError, chat_with_tools, tool_result

    max_steps = max_steps or MAX_STEPS
    ws = Workspace(root)
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    tin = tout = 0
    for step in range(1, max_steps + 1):
        try:
            turn = chat_with_tools(client, cfg, messages=messages, tools=TOOLS)
        except ModelCallError as e:
            if detect_no_tools and step == 1 and e.kind == "rejected" and "tool" in str(e):
                raise ToolsIgnored() from None
            raise
        tin, tout = tin + turn.input_tokens, tout + turn.output_tokens
        if not turn.tool_calls:
            if detect_no_tools and step == 1:
                raise ToolsIgnored(tin, tout)
            lines = (turn.text or "").strip().splitlines()
            return AgentRun(step, lines[0] if lines else "", tin, tout)
        messages.append(turn.assistant_message())
        for call in turn.tool_calls:
            if call.error:
                result = f"error: {call.error}"
            else:
                try:
                    result = ws.call(call.name, call.arguments)
                except AgentError:
                    raise
                except Exception as e:  # noqa: BLE001 - whatever the model sends, the run goes on
                    if not isinstance(e, (ValueError, OSError)):
                        log.warning("tool %s failed unexpectedly", call.name, exc_info=True)
                    result = f"error: {_one_line(str(e) or type(e).__name__)}"
            messages.append(tool_result(call.id, result))
    raise AgentError(f"the consolidation agent did not finish within {max_steps} steps; "
                     "nothing was kept")


class OpenAIPhase2(OpenAIBackend):
    """Phase2Backend: Codex's consolidation prompt for the memory version, run by the agent in
    the workspace. Every run, failed or not, is recorded in memdeck's model-call log."""

    def __init__(self, cfg: BackendConfig, store: Store,
                 client: openai.OpenAI | None = None) -> None:
        super().__init__(cfg, client)
        self.model = cfg.consolidation_model
        self.store = store

    def consolidate(self, workspace: Path, selected: list[SelectedMemory], now: float,
                    version: str) -> Phase2Result:
        from memdeck import prompts

        from ..call_log import log_call, prompt_hash
        from ..phase2.workspace import DIFF_FILE

        ext = (workspace / "extensions").is_dir()
        name = "consolidation_v2" if version == "v2" else "consolidation"
        prompt = prompts.render(
            name, memory_root=str(workspace), phase2_workspace_diff_file=DIFF_FILE,
            extensions_block=("\nRead every `extensions/<name>/instructions.md` before you "
                              "start, and remove memories that come only from deleted extension "
                              "resources.\n") if ext else "")
        started = time.perf_counter()
        error: str | None = None
        run: AgentRun | None = None
        try:
            mode = self.cfg.tools_mode
            try:
                if mode == "off":
                    raise ToolsIgnored()
                run = run_agent(self.client, self.cfg, prompt, workspace,
                                detect_no_tools=mode == "auto")
            except ToolsIgnored as no_tools:
                log.info("%s: no tool calling; the files go in the prompt", self.cfg.endpoint)
                run = run_files_json(self, prompt, Workspace(workspace), no_tools.input_tokens,
                                     no_tools.output_tokens)
        except MemdeckError as e:
            error = str(e)
            raise
        finally:
            log_call(self.store.conn(), backend=self.name, purpose="phase2", prompt_name=name,
                     prompt_hash=prompt_hash(prompt), model=self.model, thread_id=None,
                     input_tokens=run.input_tokens if run else 0,
                     output_tokens=run.output_tokens if run else 0,
                     duration_ms=int((time.perf_counter() - started) * 1000), error=error,
                     started_at=now)
        return Phase2Result(self.model, run.input_tokens, run.output_tokens, prompt_hash(prompt))


def _refit(e: ModelCallError, sent_chars: int, files_chars: int) -> int:
    """The files' character budget that fits a request the server refused as over its
    context (its message states the context and the tokens sent), or `e` again: not such a
    refusal, or the prompt alone leaves the files no room."""
    from .server_context import REPLY_TOKENS, stated_overflow

    over = stated_overflow(str(e)) if e.kind == "rejected" else None
    if over is None:
        raise e
    context, asked = over
    asked = asked or context + 1
    per_token = sent_chars / asked
    # room for the reply, and a twentieth for what an estimate misses (the note of the
    # files left out, a tokenizer's unevenness)
    keep = (context - min(REPLY_TOKENS, context // 4)) * 19 // 20
    fitted = files_chars - int((asked - keep) * per_token)
    if fitted < 256 * per_token:
        alone = asked - int(files_chars / per_token)
        raise ModelCallError(f"the consolidation prompt alone is about {alone:,} tokens, more "
                             f"than the model's context of {context:,} leaves beside a reply: "
                             "consolidate with a model of a longer context",
                             kind="rejected") from e
    log.info("the server's context is %s tokens: the memory files cut to %s characters",
             context, fitted)
    return fitted


def run_files_json(backend: OpenAIPhase2, prompt: str, ws: Workspace, input_tokens: int = 0,
                   output_tokens: int = 0) -> AgentRun:
    """Phase 2 without tools (phase2_files_json.py): one JSON call with the files in the
    prompt, its changes applied through the agent's own tools on `ws`."""
    from dataclasses import replace

    from .phase2_files_json import FILES_SCHEMA, apply_files, files_prompt, parse_files
    from .server_context import budget_for

    cfg = replace(backend.cfg, extract_model=backend.cfg.consolidation_model)
    asker = OpenAIBackend(cfg, backend.client)
    asker.output_mode = backend.output_mode
    context = asker.context_length()
    # the files' share: memdeck.input_budget, else what the stated context holds beside the
    # prompt, else Codex's phase-1 figure
    tokens = cfg.input_budget or (max(256, budget_for(context) - len(prompt) // 4) if context
                                  else 150_000)

    def ask(text: str) -> ModelReply:
        return asker.extract_json(system="You consolidate a coding agent's memory folder.",
                                  user=text, schema=FILES_SCHEMA, schema_name="memory_files",
                                  parse=parse_files)

    files = list(paths.walk(ws.resolve(None)))
    text = files_prompt(prompt, files, tokens * 4)
    try:
        reply = ask(text)
    except ModelCallError as e:  # over a context the server did not state before: once more
        fitted = _refit(e, len(text), len(text) - len(files_prompt(prompt, (), 0)))
        reply = ask(files_prompt(prompt, files, fitted))
    backend.output_mode = asker.output_mode
    refused = apply_files(reply.parsed, ws.call)
    if refused and len(refused) == len(reply.parsed["files"]) + len(reply.parsed["deleted"]):
        raise AgentError(f"the model's changes were all refused: {refused[0]}")
    summary = reply.parsed["summary"].strip().splitlines()
    return AgentRun(1, summary[0] if summary else "", input_tokens + reply.input_tokens,
                    output_tokens + reply.output_tokens)
