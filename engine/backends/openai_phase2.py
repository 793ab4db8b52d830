"""Phase 2 through an OpenAI-compatible endpoint (`OpenAIPhase2`, a Phase2Backend): the
consolidation agent, a model with six file tools confined to one workspace folder
(docs/codex-format.md "The consolidation agent", "Memory tools"), given Codex's consolidation
prompt.

Paths are relative to the workspace; `..`, absolute paths, hidden components (`.git`) and
symlinks are refused. Tool errors go back to the model as tool results, never up as
exceptions. The run stops when the model answers without calling a tool, and fails (one
line, nothing kept) past a step limit or a byte limit on what it may write.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import MemdeckError
from ..phase2.backend import Phase2Result
from .openai_client import BackendConfig, OpenAIBackend

if TYPE_CHECKING:
    import openai

    from ..codex.memory_layout import SelectedMemory
    from ..store import Store

MAX_STEPS = 60
MAX_WRITE_BYTES = 4 * 1024 * 1024
READ_LIMIT = 80_000  # characters returned by one read
PROTECTED = ("raw_memories.md", "rollout_summaries/")


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


@dataclass(frozen=True)
class AgentRun:
    steps: int
    summary: str
    input_tokens: int
    output_tokens: int


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.written = 0

    def resolve(self, rel: str | None, *, must_exist: bool = True) -> Path:
        rel = (rel or ".").strip()
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts:
            raise ValueError("paths must stay within the memory folder")
        if any(part.startswith(".") for part in pure.parts if part != "."):
            raise ValueError(f"{rel}: not found")
        path = self.root.joinpath(*[p for p in pure.parts if p != "."])
        cur = self.root
        for part in path.relative_to(self.root).parts:
            cur = cur / part
            if cur.is_symlink():
                raise ValueError(f"{rel}: symlinks are not allowed")
        if must_exist and not path.exists():
            raise ValueError(f"{rel}: not found")
        return path

    def call(self, name: str, args: dict[str, Any]) -> str:
        if name == "list":
            d = self.resolve(args.get("path"))
            return json.dumps([p.name + ("/" if p.is_dir() else "") for p in sorted(d.iterdir())
                               if not p.name.startswith(".") and not p.is_symlink()])
        if name == "read":
            lines = self.resolve(args["path"]).read_text(encoding="utf-8").splitlines()
            start = max(1, int(args.get("line_offset") or 1))
            text = "\n".join(f"{i}: {ln}" for i, ln in enumerate(lines[start - 1:], start))
            return text[:READ_LIMIT] + ("\n[truncated]" if len(text) > READ_LIMIT else "")
        if name == "search":
            base = self.resolve(args.get("path"))
            files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if
                                                         p.is_file() and ".git" not in p.parts)
            hits = [f"{f.relative_to(self.root)}:{i}: {ln}" for f in files
                    for i, ln in enumerate(f.read_text(encoding="utf-8", errors="replace")
                                           .splitlines(), 1)
                    if any(q in ln for q in args["queries"])]
            return "\n".join(hits[:200]) or "no matches"
        rel = str(args.get("path", ""))
        if any(rel == p or rel.startswith(p) for p in PROTECTED):
            raise ValueError(f"{rel} is an input of this consolidation; do not change it")
        if name == "write":
            path = self.resolve(rel, must_exist=False)
            self._count(args["content"])
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(args["content"], encoding="utf-8")
            return "ok"
        if name == "edit":
            path = self.resolve(rel)
            text = path.read_text(encoding="utf-8")
            if text.count(args["old"]) != 1:
                raise ValueError(f"`old` occurs {text.count(args['old'])} times in {rel}; "
                                 "it must occur exactly once")
            self._count(args["new"])
            path.write_text(text.replace(args["old"], args["new"]), encoding="utf-8")
            return "ok"
        if name == "delete":
            path = self.resolve(rel)
            if rel.startswith("extensions/ad_hoc/notes/"):
                raise ValueError("notes are the user's requests and are never deleted")
            path.unlink()
            return "ok"
        raise ValueError(f"unknown tool {name}")

    def _count(self, text: str) -> None:
        self.written += len(text.encode("utf-8"))
        if self.written > MAX_WRITE_BYTES:
            raise AgentError(f"the consolidation agent wrote more than "
                             f"{MAX_WRITE_BYTES // 2**20} MiB; stopped")


def run_agent(client: openai.OpenAI, cfg: BackendConfig, prompt: str, root: Path,
              max_steps: int | None = None) -> AgentRun:
    from .openai_client import chat_with_tools, tool_result

    max_steps = max_steps or MAX_STEPS
    ws = Workspace(root)
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    tin = tout = 0
    for step in range(1, max_steps + 1):
        turn = chat_with_tools(client, cfg, messages=messages, tools=TOOLS)
        tin, tout = tin + turn.input_tokens, tout + turn.output_tokens
        if not turn.tool_calls:
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
                except (ValueError, KeyError, TypeError, OSError) as e:
                    result = f"error: {e}"
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
            run = run_agent(self.client, self.cfg, prompt, workspace)
        except MemdeckError as e:
            error = str(e)
            raise
        finally:
            log_call(self.store.conn(), backend=self.name, purpose="phase2", prompt_name=name,
                     prompt_hash=prompt_hash(prompt), model=self.model, thread_id=None,
                     input_tokens=run.input_tokens if run else 0,
                     output_tokens=run.output_tokens if run else 0,
                     duration_ms=int((time.perf_counter() - started) * 1000), error=error)
        return Phase2Result(self.model, run.input_tokens, run.output_tokens, prompt_hash(prompt))
