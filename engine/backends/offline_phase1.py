"""The offline phase-1 backend: deterministic heuristics, no network. Labelled as such.

It keeps what would change future behaviour and has direct evidence: the user's own
statements of conventions, commands, tools and versions, names of systems, prohibitions;
and from the tools, a command that failed and what fixed it. The assistant's words are
never a source (they are speculation until a tool confirms them). A session with none of
this gives no output, exactly as the model is asked to do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..codex.fragments import is_context_fragment, user_request
from ..codex.tool_output import decode_tool_output
from ..phase1.backend import Phase1Output

if TYPE_CHECKING:
    from ..index.sessions import Session
    from ..phase1.input_v1 import Phase1Input

BACKEND_NAME = "offline"
MODEL_NAME = "offline-heuristic-v1"

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_DURABLE = [
    ("prohibition", re.compile(r"\b(never|don't|do not|must not|avoid)\b", re.I)),
    ("convention", re.compile(
        r"\b(always|we use|we're using|we are using|we pin|we run|prefer|instead of|"
        r"goes through|go through|must|should)\b", re.I)),
    ("system", re.compile(r"\b(is called|are called|is named|lives (in|on|at)|runs on|"
                          r"the \w+ (cluster|server|database|environment|bucket|host) is)\b",
                          re.I)),
    ("version", re.compile(r"\b[A-Z][\w.+-]*\s+v?\d+(\.\d+)+\b")),
]
_NOT_DURABLE = re.compile(r"\b(don't|do not|never) (remember|store|save|memori[sz]e)\b", re.I)
_COMMAND = re.compile(r"`([^`\n]{2,120})`")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)


@dataclass(frozen=True)
class OfflineResult:
    raw_memory: str
    rollout_summary: str
    rollout_slug: str | None


def _user_texts(items: list[dict[str, Any]]) -> list[str]:
    out = []
    for it in items:
        if it.get("type") == "message" and it.get("role") == "user":
            for c in it.get("content") or ():
                text = c.get("text") if isinstance(c, dict) else None
                words = user_request(text) if isinstance(text, str) else ""
                if words and not is_context_fragment(words):
                    out.append(words)
    return out


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if len(s.strip()) > 3]


def _command_of(item: dict[str, Any]) -> str | None:
    if item.get("type") == "function_call":
        try:
            args = json.loads(item.get("arguments") or "{}")
        except ValueError:
            return None
        cmd = args.get("cmd") or args.get("command") if isinstance(args, dict) else None
        if isinstance(cmd, list):
            cmd = " ".join(map(str, cmd))
        return cmd if isinstance(cmd, str) else None
    if item.get("type") == "local_shell_call":
        cmd = (item.get("action") or {}).get("command")
        return " ".join(map(str, cmd)) if isinstance(cmd, list) else None
    return None


def _output_text(item: dict[str, Any]) -> str:
    out = item.get("output")
    if isinstance(out, str):
        return out
    if isinstance(out, list):
        return "\n".join(p.get("text", "") for p in out if isinstance(p, dict))
    return ""


_SEARCH_TOOLS = {"rg", "grep", "egrep", "fgrep", "ag", "ack", "git grep", "Select-String"}
_ERROR_LINE = re.compile(r"(error|failed|failure|traceback|exception|assert|denied|not found)",
                         re.I)


def _no_match(cmd: str, exit_code: int, text: str) -> bool:
    """A search tool exiting 1 with nothing printed found nothing: not a failure."""
    words = cmd.replace("|", " ").split()
    head = " ".join(words[:2]) if words[:1] == ["git"] else (words[0] if words else "")
    return exit_code == 1 and not text.strip() and (
        head in _SEARCH_TOOLS or PurePosixPath(head).name in _SEARCH_TOOLS)


def _error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return next((ln for ln in lines if _ERROR_LINE.search(ln)), lines[-1] if lines else "")[:160]


def _runs(items: list[dict[str, Any]]) -> tuple[list[tuple[str, bool, str, int]],
                                                 list[tuple[int, str]]]:
    """Each command with whether it failed (by its exit code, never by its text) and the
    files patched, in session order. No exit code (an output memdeck cannot decode): not a
    failure."""
    calls: dict[str, str] = {}
    runs: list[tuple[str, bool, str, int]] = []  # (command, failed, error line, index)
    patched: list[tuple[int, str]] = []
    for i, it in enumerate(items):
        t = it.get("type")
        if t in ("function_call", "local_shell_call"):
            cmd = _command_of(it)
            if cmd and it.get("call_id"):
                calls[it["call_id"]] = cmd
        elif t == "function_call_output" and it.get("call_id") in calls:
            cmd = calls[it["call_id"]]
            out = decode_tool_output(_output_text(it))
            code = out.exit_code
            failed = code is not None and code != 0 and not _no_match(cmd, code, out.text)
            runs.append((cmd, failed, _error_line(out.text) if failed else "", i))
        elif t == "custom_tool_call" and it.get("name") == "apply_patch":
            for f in _PATCH_FILE.findall(it.get("input") or ""):
                patched.append((i, f.strip()))
    return runs, patched


def _failures_and_fixes(items: list[dict[str, Any]]) -> tuple[list[str], bool]:
    """A command that failed and what fixed it (the files changed before the same command
    passed); a failure never fixed, once. Second: whether the session ended with a command
    still failing (its last run failed)."""
    runs, patched = _runs(items)
    out: list[str] = []
    seen: set[str] = set()
    for cmd, failed, err, i in runs:
        if not failed or cmd in seen:
            continue
        seen.add(cmd)
        later_ok = next((j for c, f, _, j in runs if c == cmd and not f and j > i), None)
        if later_ok is None:
            out.append(f"`{cmd}` failed: {err}" if err else f"`{cmd}` failed")
            continue
        files = sorted({f for k, f in patched if i < k < later_ok})
        fix = f"; fixed by changing {', '.join(files)}" if files else "; passed on a later run"
        out.append(f"`{cmd}` failed ({err}){fix}" if err else f"`{cmd}` failed{fix}")
    last: dict[str, bool] = {}
    for cmd, failed, _, _ in runs:
        last[cmd] = failed
    return out, any(last.values())


def _slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:6]
    return "_".join(words)[:80] or "session"


def extract(items: list[dict[str, Any]], cwd: str | None, branch: str | None) -> OfflineResult:
    """Phase 1 without a model. Empty fields mean: nothing durable in this session."""
    user = _user_texts(items)
    facts: dict[str, list[str]] = {"prohibition": [], "convention": [], "system": [],
                                   "version": []}
    commands: list[str] = []
    for text in user:
        if _NOT_DURABLE.search(text):
            continue
        for sentence in _sentences(text):
            for kind, pattern in _DURABLE:
                if pattern.search(sentence) and sentence not in facts[kind]:
                    facts[kind].append(sentence)
                    break
            for cmd in _COMMAND.findall(sentence):
                if cmd not in commands and any(sentence in v for v in facts.values()):
                    commands.append(cmd)
    fixes, unresolved = _failures_and_fixes(items)
    if not any(facts.values()) and not fixes:
        return OfflineResult("", "", None)

    project = PurePosixPath(cwd).name if cwd else "unknown"
    request = (_sentences(user[0])[0] if user else "session").rstrip(".!?; ")
    outcome = "partial" if unresolved else "success"
    keywords = sorted({*commands, project, *(w for w in re.findall(
        r"\b[A-Z][\w.+-]*\s+\d+(?:\.\d+)+\b", " ".join(facts["version"])))})[:12]
    prefs = facts["convention"] + facts["prohibition"]
    knowledge = facts["system"] + facts["version"]

    raw = ["---", f"description: {request[:120]}", f"task: {_slug(request)}",
           f"task_group: {project}", f"task_outcome: {outcome}", f"cwd: {cwd or ''}",
           f"keywords: {', '.join(keywords)}", "---", "", f"### Task 1: {request[:120]}"]
    raw += [f"- user preference: {p}" for p in prefs]
    raw += [f"- fact: {k}" for k in knowledge]
    raw += [f"- command: `{c}`" for c in commands]
    raw += [f"- failure: {f}" for f in fixes]

    summary = [f"# {request[:120]}", "",
               f"Rollout context: {cwd or 'unknown folder'}"
               + (f", branch {branch}" if branch else "") + ".", "",
               f"## Task 1: {request[:100]}, {outcome}", f"- Outcome: {outcome}"]
    summary += [f"- Preference signals: \"{p}\" -> follow this by default" for p in prefs]
    summary += [f"- Reusable knowledge: {k}" for k in knowledge]
    summary += [f"- Key steps: ran `{c}`" for c in commands]
    summary += [f"- Failures and how to do differently: {f}" for f in fixes]
    summary += ["- Source: offline heuristic extraction (no model)"]
    return OfflineResult("\n".join(raw) + "\n", "\n".join(summary) + "\n", _slug(request))


class OfflinePhase1:
    """Phase1Backend for the heuristic extractor."""

    name = BACKEND_NAME
    model = MODEL_NAME

    def extract(self, inp: Phase1Input, session: Session) -> Phase1Output:
        if inp.version == "v2":  # V2: a summary only (offline_v2.py)
            from .offline_phase1_v2 import extract_v2

            summary, slug = extract_v2(inp.items, session.cwd, session.git_branch)
            return Phase1Output("", summary, slug, MODEL_NAME)
        r = extract(inp.items, session.cwd, session.git_branch)
        return Phase1Output(r.raw_memory, r.rollout_summary, r.rollout_slug, MODEL_NAME)
