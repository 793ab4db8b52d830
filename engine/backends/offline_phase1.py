"""The offline phase-1 backend: deterministic heuristics, no network. Labelled as such.

It keeps what would change future behaviour and has direct evidence: the user's own
statements of conventions, commands, tools and versions, names of systems, prohibitions;
and from the tools, a command that failed and what fixed it, read from exit codes
(`offline_failures.py`), or the failure once as an open problem when nothing fixed it. The
assistant's words are never a source (they are speculation until a tool confirms them). A
session with none of this gives no output, exactly as the model is asked to do.

"The user's own" means what the user typed (`codex/user_words.py`): never Codex's injected
fragments, the IDE or Desktop wrappers or a prompt template; material the user pasted (logs,
tracebacks, tables, data) is told as evidence, never a preference, a fact or a command. The
title is the request in the user's script, the slug follows Codex's file-name rule
(`offline_names.py`), and nothing kept holds personal data (`personal_data.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..codex.command_outcomes import session_commands
from ..codex.user_words import UserWords, looks_like_command, session_words
from ..personal_data import scrub_personal
from ..phase1.backend import Phase1Output
from .offline_failures import (
    OPEN,
    UNVERIFIED,
    changed_files,
    checks,
    failure_stories,
    is_probe,
    remembered,
)
from .offline_names import cut, cut_words, fallback_title, rollout_slug, sentences, title_of
from .offline_reasons import NOTHING_DURABLE, empty_reason
from .offline_rules import is_question, standing_rule
from .offline_statements import DURABLE, NOT_DURABLE, project_name

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..index.sessions import Session
    from ..phase1.input_v1 import Phase1Input

BACKEND_NAME = "offline"
MODEL_NAME = "offline-heuristic-v1"

_COMMAND = re.compile(r"`([^`\n]{2,120})`")


@dataclass(frozen=True)
class OfflineResult:
    raw_memory: str
    rollout_summary: str
    rollout_slug: str | None


def _user_words(items: list[dict[str, Any]]) -> list[UserWords]:
    """What the user said, message by message: their own prose, with Codex's fragments, the
    IDE and Desktop wrappers and prompt templates removed and pasted material set apart
    (`codex/user_words.py`). Only the prose is ever a preference, a fact or a command."""
    return session_words(items)


def _said(words: list[UserWords]) -> tuple[str, list[str], list[str]]:
    """(the user's request in their words, what they said in later messages, what they
    pasted: one line each); a message asking not to be remembered is left out."""
    spoken = [w for w in words if w.text and not NOT_DURABLE.search(w.text)]
    later = [cut(w.text, 300) for w in spoken[1:]
             if len(w.text.split()) >= 3 or len(w.text) >= 8 and not w.text.isascii()]
    pasted = [p.describe() for w in words if not NOT_DURABLE.search(w.text) for p in w.pasted]
    asked = cut_words(spoken[0].text, 400) if spoken else ""
    mentioned = list(dict.fromkeys(f for w in spoken for f in w.mentioned))
    if asked and mentioned:  # the Desktop app's file mentions: what "this file" refers to
        asked += f" (files the user mentioned: {', '.join(mentioned[:5])})"
    return asked, later[:3], pasted[:4]


def _quote_cmd(command: str) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= 120 else flat[:119] + "…"


def _kept(raw: str, summary: str, slug: str | None) -> OfflineResult:
    """What the backend keeps, with no personal data in it (`personal_data.py`)."""
    return OfflineResult(scrub_personal(raw), scrub_personal(summary),
                         scrub_personal(slug) if slug else None)


def extract(items: list[dict[str, Any]], cwd: str | None, branch: str | None,
            exit_codes: Mapping[str, int] | None = None) -> OfflineResult:
    """Phase 1 without a model. Empty fields mean: nothing durable in this session.
    `exit_codes`: call_id → exit code from the session's events (`Phase1Input.exit_codes`)."""
    words = _user_words(items)
    user = [w.text for w in words if w.text]
    facts: dict[str, list[str]] = {"rule": [], "prohibition": [], "convention": [],
                                   "system": [], "version": []}
    commands: list[str] = []
    for text in user:
        if NOT_DURABLE.search(text):
            continue
        for sentence in sentences(text):
            if is_question(sentence):  # asked, not stated: neither a rule nor a fact
                continue
            if standing_rule(sentence):  # a rule for later sessions (offline_rules.py)
                if sentence not in facts["rule"]:
                    facts["rule"].append(sentence)
            else:
                for kind, pattern in DURABLE:
                    if pattern.search(sentence) and sentence not in facts[kind]:
                        facts[kind].append(sentence)
                        break
            for cmd in _COMMAND.findall(sentence):
                if looks_like_command(cmd) and cmd not in commands and any(
                        sentence in v for v in facts.values()):
                    commands.append(cmd)
    session = session_commands(items, exit_codes)
    stories = failure_stories(session)
    kept = remembered(stories)
    changed = changed_files(session)  # what the session did, by its tools' own record
    if not any(facts.values()) and not kept and not changed:
        return OfflineResult("", "", None)

    project = project_name(cwd)
    ran = [r.command for r in session.commands if not is_probe(r.command)]
    spoken = [w for w in words if not NOT_DURABLE.search(w.text)]
    request = title_of(spoken) or fallback_title(project, changed, ran)  # the user's script
    slug = rollout_slug(title_of(spoken), project, changed, ran)
    asked, later, pasted = _said(words)
    statuses = {s.status for s in kept}
    outcome = ("partial" if OPEN in statuses else "uncertain" if UNVERIFIED in statuses
               else "success")
    keywords = sorted({*commands, project, *(w for w in re.findall(
        r"\b[A-Z][\w.+-]*\s+\d+(?:\.\d+)+\b", " ".join(facts["version"])))})[:12]
    keywords += [f for f in changed[:4] if f not in keywords]
    prefs = facts["rule"]
    # what the user required of this task only: kept with the task, never a preference
    required = facts["convention"] + facts["prohibition"]
    knowledge = facts["system"] + facts["version"]

    raw = ["---", f"description: {request}", f"task: {slug or project}",
           f"task_group: {project}", f"task_outcome: {outcome}", f"cwd: {cwd or ''}",
           f"keywords: {', '.join(keywords)}", "---", "", f"### Task 1: {request}"]
    raw += [f"- user request: {asked}"] if asked else []
    raw += [f"- user then said: {t}" for t in later]
    raw += [f"- evidence the user pasted: {p}" for p in pasted]
    raw += [f"- user preference: {p}" for p in prefs]
    raw += [f"- task requirement: {p}" for p in required]
    raw += [f"- fact: {k}" for k in knowledge]
    raw += [f"- command: `{c}`" for c in commands]
    # `- failure:` bullets go to MEMORY.md's "Failures and how to do differently"
    # (offline_memory_md.py); a failure nothing fixed stays an open problem of this session
    raw += [f"- failure: {s.text()}" for s in kept if s.status != OPEN]
    raw += [f"- open problem: {s.text()}" for s in kept if s.status == OPEN]

    summary = [f"# {request}", "",
               f"Rollout context: {cwd or 'unknown folder'}"
               + (f", branch {branch}" if branch else "") + ".", "",
               f"## Task 1: {cut(request, 100)}, {outcome}", f"- Outcome: {outcome}"]
    summary += [f"- User request (their words): {asked}"] if asked else []
    summary += [f"- The user then said: {t}" for t in later]
    summary += [f"- Evidence the user pasted (not their words): {p}" for p in pasted]
    summary += [f"- Preference signals: \"{p}\" -> follow this by default" for p in prefs]
    summary += [f"- Required for this task (the user's words): \"{p}\"" for p in required]
    summary += [f"- Reusable knowledge: {k}" for k in knowledge]
    summary += [f"- Key steps: ran `{c}`" for c in commands]
    if changed:
        summary.append("- Key steps: changed " + ", ".join(f"`{f}`" for f in changed[:8])
                       + (f" and {len(changed) - 8} more files" if len(changed) > 8 else ""))
    summary += [f"- Key steps: `{_quote_cmd(r.command)}` passed (exit code 0)"
                for r in checks(session)]
    summary += [f"- Failures and how to do differently: {s.text()}" for s in kept
                if s.status != OPEN]
    summary += [f"- Open problem (not resolved in the session): {s.text()}" for s in kept
                if s.status == OPEN]
    summary += [f"- References: {s.text()} (a look-up)" for s in stories if s.probe]
    summary += ["- Source: offline heuristic extraction (no model)"]
    return _kept("\n".join(raw) + "\n", "\n".join(summary) + "\n", slug)


class OfflinePhase1:
    """Phase1Backend for the heuristic extractor."""

    name = BACKEND_NAME
    model = MODEL_NAME

    def extract(self, inp: Phase1Input, session: Session) -> Phase1Output:
        unread = empty_reason(inp.items)
        if unread != NOTHING_DURABLE:  # not in a form it reads: nothing kept, and why
            return Phase1Output("", "", None, MODEL_NAME, empty_reason=unread)
        if inp.version == "v2":  # V2: a summary only (offline_v2.py)
            from .offline_phase1_v2 import extract_v2

            summary, slug = extract_v2(inp.items, session.cwd, session.git_branch,
                                       inp.exit_codes)
            why = "" if summary else NOTHING_DURABLE
            return Phase1Output("", summary, slug, MODEL_NAME, empty_reason=why)
        r = extract(inp.items, session.cwd, session.git_branch, inp.exit_codes)
        why = "" if r.raw_memory and r.rollout_summary else NOTHING_DURABLE
        return Phase1Output(r.raw_memory, r.rollout_summary, r.rollout_slug, MODEL_NAME,
                            empty_reason=why)
