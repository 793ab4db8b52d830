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

from ..codex.fragments import is_context_fragment
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
_FAILED = re.compile(r"(exited with code [1-9]\d*|exit code [1-9]|\bFAILED\b|\bError\b|"
                     r"Traceback|error:)", re.I)
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
                if isinstance(text, str) and text.strip() and not is_context_fragment(text):
                    out.append(text.strip())
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


def _failures_and_fixes(items: list[dict[str, Any]]) -> list[str]:
    """A command that failed, then the same command succeeding: what changed in between."""
    calls: dict[str, str] = {}
    runs: list[tuple[str, bool, str, int]] = []  # (command, failed, first error line, index)
    patched: list[tuple[int, str]] = []
    for i, it in enumerate(items):
        t = it.get("type")
        if t in ("function_call", "local_shell_call"):
            cmd = _command_of(it)
            if cmd and it.get("call_id"):
                calls[it["call_id"]] = cmd
        elif t == "function_call_output" and it.get("call_id") in calls:
            text = _output_text(it)
            m = _FAILED.search(text)
            line = next((ln for ln in text.splitlines() if _FAILED.search(ln)), "") if m else ""
            runs.append((calls[it["call_id"]], bool(m), line.strip()[:160], i))
        elif t == "custom_tool_call" and it.get("name") == "apply_patch":
            for f in _PATCH_FILE.findall(it.get("input") or ""):
                patched.append((i, f.strip()))
    out = []
    for cmd, failed, err, i in runs:
        if not failed:
            continue
        later_ok = next((j for c, f, _, j in runs if c == cmd and not f and j > i), None)
        if later_ok is None:
            out.append(f"`{cmd}` failed: {err}" if err else f"`{cmd}` failed")
            continue
        files = sorted({f for k, f in patched if i < k < later_ok})
        fix = f"; fixed by changing {', '.join(files)}" if files else "; passed on a later run"
        out.append(f"`{cmd}` failed ({err}){fix}" if err else f"`{cmd}` failed{fix}")
    return out


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
    fixes = _failures_and_fixes(items)
    if not any(facts.values()) and not fixes:
        return OfflineResult("", "", None)

    project = PurePosixPath(cwd).name if cwd else "unknown"
    request = (_sentences(user[0])[0] if user else "session").rstrip(".!?; ")
    outcome = "partial" if any("failed" in f and "fixed" not in f and "passed" not in f
                               for f in fixes) else "success"
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
