"""The offline phase-1 backend for memory V2: a faithful Markdown account of one session, no
model. Labelled as heuristic, like the V1 extractor (offline.py).

V2 keeps no raw memory; its summary is the record later sessions read
(docs/codex-format.md "Phase 1 output"). This one follows the session in order: one section per
request of the user, with the user's words quoted, the commands that ran and how they exited,
the files changed, and the assistant's last answer, quoted as the assistant's and not as fact.
The folder and branch open the record. A session without a request of substance gives no output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from ..codex.citations import strip_citations
from ..codex.tool_output import decode_tool_output
from ..phase1.input_v2 import CONTEXT, FINAL, HUMAN, tier_of
from .offline_phase1 import _DURABLE, _NOT_DURABLE, _command_of, _output_text, _sentences, _slug

MAX_TASKS = 12
MAX_COMMANDS = 8
QUOTE = 400
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
_CWD = re.compile(r"<cwd>([^<]+)</cwd>")


@dataclass
class Task:
    request: str
    said: list[str] = field(default_factory=list)  # the user's later words in this task
    commands: list[tuple[str, int | None, str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    answer: str = ""


def _text(item: dict[str, Any]) -> str:
    return "\n".join(p["text"] for p in item.get("content") or ()
                     if isinstance(p, dict) and isinstance(p.get("text"), str)).strip()


def _quote(text: str, limit: int = QUOTE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _first_error(output: str) -> str:
    for line in output.splitlines():
        s = line.strip()
        if s and not s.lower().startswith(("process exited", "chunk id", "wall time",
                                           "original token count", "output:")):
            if re.search(r"error|fail|traceback|not found|denied", s, re.I):
                return _quote(s, 160)
    return ""


def _tasks(items: list[dict[str, Any]]) -> tuple[list[Task], list[str]]:
    tasks: list[Task] = []
    folders: list[str] = []
    calls: dict[str, tuple[Task, str]] = {}
    for it in items:
        t = it.get("type")
        tier = tier_of(it)
        if t == "message" and tier == CONTEXT:
            folders += [m.strip() for m in _CWD.findall(_text(it))]
        elif t == "message" and tier == HUMAN:
            text = _text(it)
            if _NOT_DURABLE.search(text):
                tasks.append(Task(""))  # the user asked not to keep this request: a gap
            elif tasks and tasks[-1].request and _is_follow_up(text):
                tasks[-1].said.append(text)
            elif text:
                tasks.append(Task(text))
        elif not tasks:
            continue
        elif t == "message" and tier == FINAL and _text(it):
            tasks[-1].answer = strip_citations(_text(it))[0].strip()
        elif t in ("function_call", "local_shell_call"):
            cmd = _command_of(it)
            if cmd and it.get("call_id"):
                calls[it["call_id"]] = (tasks[-1], cmd)
        elif t == "custom_tool_call" and it.get("name") == "apply_patch":
            for f in _PATCH_FILE.findall(it.get("input") or ""):
                if f.strip() not in tasks[-1].files:
                    tasks[-1].files.append(f.strip())
        elif t == "function_call_output" and it.get("call_id") in calls:
            task, cmd = calls.pop(it["call_id"])
            out = decode_tool_output(_output_text(it))  # 0.169 header or the older JSON
            task.commands.append((cmd, out.exit_code, _first_error(out.text)))
    return [t for t in tasks if t.request], folders


def _is_follow_up(text: str) -> bool:
    """A short correction or instruction that belongs to the task before it."""
    return len(text) < 200 and any(p.search(s) for s in _sentences(text) for _, p in _DURABLE)


def _outcome(task: Task) -> str:
    codes = [c for _, c, _ in task.commands if c is not None]
    if codes and codes[-1] != 0:
        return f"not finished: the last command exited with code {codes[-1]}"
    if codes:
        return "done: the last command succeeded"
    return "unknown: no tool result shows how it ended"


def _task_lines(n: int, task: Task) -> list[str]:
    head = (_sentences(task.request) or [task.request])[0].rstrip(".!?;: ")
    out = [f"## Task {n}: {_quote(head, 100)}", "", f"- The user asked: \"{_quote(task.request)}\""]
    for said in task.said:
        out.append(f"- The user then said: \"{_quote(said)}\"")
    durable = [s for text in [task.request, *task.said]
               for s in _sentences(text) if any(p.search(s) for _, p in _DURABLE)]
    if durable:
        out.append("- Stated by the user (their words): "
                   + "; ".join(f"\"{_quote(s, 160)}\"" for s in dict.fromkeys(durable)))
    for cmd, code, err in task.commands[:MAX_COMMANDS]:
        status = "exit code unknown" if code is None else f"exited with code {code}"
        out.append(f"- Ran `{_quote(cmd, 120)}`: {status}" + (f" ({err})" if err else ""))
    if len(task.commands) > MAX_COMMANDS:
        out.append(f"- … and {len(task.commands) - MAX_COMMANDS} more commands")
    if task.files:
        out.append("- Changed files: " + ", ".join(f"`{f}`" for f in task.files[:20]))
    if task.answer:
        out.append(f"- The assistant's last answer (its words, not verified): "
                   f"\"{_quote(task.answer)}\"")
    out += [f"- Outcome: {_outcome(task)}", ""]
    return out


def extract_v2(items: list[dict[str, Any]], cwd: str | None,
               branch: str | None) -> tuple[str, str | None]:
    """(rollout_summary, rollout_slug); ("", None) when there is nothing worth keeping."""
    tasks, folders = _tasks(items)
    words = sum(len(t.request.split()) + sum(len(s.split()) for s in t.said) for t in tasks)
    tool_use = any(t.commands or t.files for t in tasks)
    if not tasks or (words < 4 and not tool_use):
        return "", None
    first = _sentences(tasks[0].request)
    title = _quote((first[0] if first else tasks[0].request).rstrip(".!?; "), 120)
    project = PurePosixPath(cwd).name if cwd else "unknown"
    other = [f for f in dict.fromkeys(folders) if f != cwd]
    lines = [f"# {title}", "",
             f"Session context: project `{project}`, folder `{cwd or 'unknown'}`, branch "
             f"`{branch or 'unknown'}`."
             + (f" It also worked in: {', '.join(f'`{f}`' for f in other[:5])}." if other
                else ""), ""]
    for n, task in enumerate(tasks[:MAX_TASKS], 1):
        lines += _task_lines(n, task)
    if len(tasks) > MAX_TASKS:
        lines += [f"({len(tasks) - MAX_TASKS} later requests are not described here.)", ""]
    open_ = [n for n, t in enumerate(tasks[:MAX_TASKS], 1) if _outcome(t).startswith("not")]
    if open_:
        lines += ["## Open questions", ""]
        lines += [f"- Task {n} did not end with a passing command." for n in open_]
        lines.append("")
    lines.append("Source: offline heuristic record (no model).")
    return "\n".join(lines) + "\n", _slug(title)
