"""Phase 2 for a server without tool calling: the model gets the workspace's files in its
prompt and returns the files it changes, whole, as one JSON object.

llama-cpp-python's server (without a function-calling chat format) and many small local models
ignore `tools`: the agent's first step comes back as plain text, no file read. When that
happens at step 1 (a model that can call tools reads its inputs first; Codex's prompt asks it
to), or when the server refuses the `tools` parameter outright, the run goes on in this mode.
`memdeck.tools`: `auto` (that rule), `on` (always the agent), `off` (always this).

Each returned file is written through the agent's own `write` and `delete` tools
(openai_phase2.Workspace), so the same rules hold: paths confined to the workspace, inputs and
the user's notes never changed, the byte limit. The files are listed by priority (the diff of
inputs, the memory files, then the rollout summaries and skills, newest names last) and cut to
the input budget: a file that does not fit is named as left out, never cut in the middle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .replies import ModelOutputError

FILES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "files": {"type": "array", "items": {
            "type": "object", "properties": {"path": {"type": "string"},
                                             "content": {"type": "string"}},
            "required": ["path", "content"], "additionalProperties": False}},
        "deleted": {"type": "array", "items": {"type": "string"}},
        "summary": {"type": "string"},
    },
    "required": ["files", "deleted", "summary"],
    "additionalProperties": False,
}
FIRST = ("phase2_workspace_diff.md", "raw_memories.md", "MEMORY.md", "memory_summary.md")

INSTRUCTIONS = """

You cannot call tools in this run. Every file of the memory folder you work in is below, each
after a line `=== path ===` (paths relative to the folder). Do the consolidation described
above and reply with one JSON object and nothing else:
{"files": [{"path": "...", "content": "..."}], "deleted": ["..."], "summary": "..."}
- `files`: every file you create or change, with its whole new content;
- `deleted`: the paths of files to delete;
- `summary`: one line saying what you changed.
Files you leave unchanged are not listed.
"""


def parse_files(text: str) -> dict[str, Any]:
    """The model's reply, checked: a files list of {path, content}, a deleted list."""
    import json

    try:
        obj = json.loads(text)
    except ValueError as e:
        raise ModelOutputError(f"the reply is not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise ModelOutputError("the reply is not a JSON object")
    files, deleted = obj.get("files"), obj.get("deleted", [])
    if not isinstance(files, list) or not all(
            isinstance(f, dict) and isinstance(f.get("path"), str)
            and isinstance(f.get("content"), str) for f in files):
        raise ModelOutputError('"files" must be a list of {"path": …, "content": …}')
    if not isinstance(deleted, list) or not all(isinstance(d, str) for d in deleted):
        raise ModelOutputError('"deleted" must be a list of paths')
    summary = obj.get("summary")
    return {"files": files, "deleted": deleted,
            "summary": summary if isinstance(summary, str) else ""}


def files_prompt(prompt: str, files: Iterable[tuple[str, Path]], budget_chars: int) -> str:
    """Codex's consolidation prompt, the instructions of this mode, and the workspace's
    `files` (relative path, file: `paths.walk`) by priority, the files within `budget_chars`
    (the prompt itself is on top: it is Codex's, about 4,000 tokens, and always sent)."""
    ordered = sorted(files, key=lambda f: (f[0] not in FIRST,
                                           FIRST.index(f[0]) if f[0] in FIRST else 0, f[0]))
    parts, used, left_out = [prompt, INSTRUCTIONS], 0, []
    for rel, path in ordered:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # not text: the model could not use it either
        block = f"\n=== {rel} ===\n{text}\n"
        if used + len(block) > budget_chars:
            left_out.append(rel)
            continue
        parts.append(block)
        used += len(block)
    if left_out:
        parts.append(f"\n(left out, over the input budget: {', '.join(left_out)})\n")
    return "".join(parts)


def apply_files(reply: dict[str, Any], call: Callable[[str, dict[str, Any]], str]) -> list[str]:
    """Write and delete what the reply says through the agent's tools (`call(name, args)`);
    returns a line per refused change (the rest is applied)."""
    refused = []
    for f in reply["files"]:
        try:
            call("write", {"path": f["path"], "content": f["content"]})
        except (ValueError, OSError) as e:
            refused.append(f"{f['path']}: {e}")
    for rel in reply["deleted"]:
        try:
            call("delete", {"path": rel})
        except (ValueError, OSError) as e:
            refused.append(f"{rel}: {e}")
    return refused
