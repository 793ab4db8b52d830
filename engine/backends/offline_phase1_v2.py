"""The offline phase-1 backend for memory V2: a faithful Markdown account of one session, no
model. Labelled as heuristic, like the V1 extractor (offline.py).

V2 keeps no raw memory; its summary is the record later sessions read
(docs/codex-format.md "Phase 1 output"). This one follows the session in order: one section per
request of the user, with the user's words quoted, the commands that ran and how they exited,
the files changed, and the assistant's last answer, quoted as the assistant's and not as fact.
How a command ended comes from its exit code (`codex/command_outcomes.py`); a failure is told
with the fix that followed it, or once as an open question (`offline_failures.py`), the same
outcomes the V1 extractor uses.
The user's words are what they typed (`codex/user_words.py`: no injected fragment, wrapper or
template; pasted material told apart as evidence); the title keeps their script and the slug
follows Codex's file-name rule (`offline_names.py`); no personal data is kept.
The folder and branch open the record. A session without a request of substance gives no output,
nor does a question answered with no tool run and nothing stated by the user for later.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..codex.citations import strip_citations
from ..codex.command_outcomes import (
    FAILED,
    INTERRUPTED,
    NO_MATCH,
    CommandRun,
    session_commands,
)
from ..codex.pasted import Pasted
from ..codex.user_words import words_of_message
from ..personal_data import scrub_personal
from ..phase1.input_v2 import CONTEXT, FINAL, HUMAN, tier_of
from .offline_failures import OPEN, UNVERIFIED, FailureStory, failure_stories, is_probe, reason
from .offline_names import cut_words, headline, rollout_slug, sentences, word_count
from .offline_proof import proves
from .offline_rules import is_question, standing_rule
from .offline_statements import DURABLE, NOT_DURABLE, project_name

MAX_TASKS = 12
MAX_COMMANDS = 8
QUOTE = 400
RULES_LINE = "- Standing rules the user set (their words):"
_CWD = re.compile(r"<cwd>([^<]+)</cwd>")


@dataclass
class Task:
    request: str
    said: list[str] = field(default_factory=list)  # the user's later words in this task
    commands: list[CommandRun] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    answer: str = ""
    start: int = 0  # index of its request in the items
    stories: list[FailureStory] = field(default_factory=list)  # failures first seen here
    pasted: list[Pasted] = field(default_factory=list)  # evidence the user pasted, not words
    mentioned: list[str] = field(default_factory=list)  # files the Desktop app listed


def _text(item: dict[str, Any]) -> str:
    return "\n".join(p["text"] for p in item.get("content") or ()
                     if isinstance(p, dict) and isinstance(p.get("text"), str)).strip()


def _quote(text: str, limit: int = QUOTE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _tasks(items: list[dict[str, Any]],
           exit_codes: Mapping[str, int] | None) -> tuple[list[Task], list[str]]:
    tasks: list[Task] = []
    folders: list[str] = []
    pasted: list[Pasted] = []
    for i, it in enumerate(items):
        t = it.get("type")
        tier = tier_of(it)
        if t == "message" and tier == CONTEXT:
            folders += [m.strip() for m in _CWD.findall(_text(it))]
        elif t == "message" and tier == HUMAN:
            # the user's own prose (codex/user_words.py): no fragment, wrapper or template
            said = words_of_message(it)
            text = said.text if said else ""
            pasted += said.pasted if said and not NOT_DURABLE.search(text) else ()
            if NOT_DURABLE.search(text):
                tasks.append(Task("", start=i))  # the user asked not to keep this: a gap
            elif tasks and tasks[-1].request and _is_follow_up(text):
                tasks[-1].said.append(text)
            elif text:
                tasks.append(Task(text, start=i))
            if pasted and tasks and tasks[-1].request:
                tasks[-1].pasted += pasted  # a paste belongs to the request it came with
                pasted = []
            if said and said.mentioned and tasks and tasks[-1].request:
                tasks[-1].mentioned += [f for f in said.mentioned if f not in tasks[-1].mentioned]
        elif not tasks:
            continue
        elif t == "message" and tier == FINAL and _text(it):
            tasks[-1].answer = strip_citations(_text(it))[0].strip()
    session = session_commands(items, exit_codes)
    for run in session.commands:
        task = _task_at(tasks, run.index)
        if task is not None:
            task.commands.append(run)
    for patch in session.patches:
        task = _task_at(tasks, patch.index)
        if task is not None and patch.applied:
            task.files += [f for f in patch.files if f not in task.files]
    for story in failure_stories(session):
        task = _task_at(tasks, story.index)
        if task is not None:
            task.stories.append(story)
    return [t for t in tasks if t.request], folders


def _task_at(tasks: list[Task], index: int) -> Task | None:
    """The task an item at `index` belongs to: the last one asked before it."""
    found = None
    for task in tasks:
        if task.start > index:
            break
        found = task
    return found


def _is_follow_up(text: str) -> bool:
    """A short correction or instruction that belongs to the task before it."""
    return len(text) < 200 and any(p.search(s) for s in sentences(text) for _, p in DURABLE)


def _outcome(task: Task) -> str:
    """From exit codes: a failure of this task never resolved, a change never re-run, or no
    command left failing; a failed look-up (`cat`, `rg`…) decides nothing."""
    work = [s for s in task.stories if not s.probe]
    still = next((s for s in work if s.status == OPEN), None)
    if still is not None:
        return (f"not finished: `{_quote(still.command, 120)}` exited with code "
                f"{still.exit_code} and did not pass later")
    unverified = next((s for s in work if s.status == UNVERIFIED), None)
    if unverified is not None:
        return (f"uncertain: `{_quote(unverified.command, 120)}` failed and was not run "
                "again after the change")
    if any(r.exit_code is not None for r in task.commands):
        return "done: no command was left failing"
    return "unknown: no tool result shows how it ended"


def _status(run: CommandRun) -> str:
    if run.exit_code is None:
        return "exit code unknown"
    if run.outcome == NO_MATCH:
        return f"exited with code {run.exit_code} (no match)"
    if run.outcome == INTERRUPTED:
        return "stopped with Ctrl-C (not a failure)"
    why = reason(run.output) if run.outcome == FAILED else ""
    return f"exited with code {run.exit_code}" + (f" ({why})" if why else "")


class Detail(NamedTuple):
    """How much of each task a summary tells; `DETAIL` from the most to the least."""

    answer: bool = True  # the assistant's last answer
    looks: bool = True  # the look-ups line
    pasted: int = 4  # pastes told
    quote: int = QUOTE  # characters of the user's words quoted
    commands: int = MAX_COMMANDS  # commands listed, by what they prove
    tasks: int = MAX_TASKS  # requests described


# Codex cuts a V2 rollout summary to 9,000 bytes (phase1/runner.py); a longer record gives up
# detail in this order, so that nothing is cut in the middle: the assistant's words, the
# look-ups and pastes, then shorter quotes and fewer commands, then the latest requests
DETAIL = (Detail(), Detail(answer=False), Detail(False, False, 2),
          Detail(False, False, 0, 240, 4), Detail(False, False, 0, 160, 3, 8),
          Detail(False, False, 0, 120, 2, 5), Detail(False, False, 0, 100, 1, 3))
SUMMARY_BUDGET = 8_800  # bytes, leaving room for what redaction adds


def _task_lines(n: int, task: Task, detail: Detail = DETAIL[0]) -> list[str]:
    out = [f"## Task {n}: {headline(task.request, 100)}", "",
           f"- The user asked: \"{cut_words(task.request, detail.quote)}\""]
    for said in task.said:
        out.append(f"- The user then said: \"{_quote(said, detail.quote)}\"")
    out += [f"- The user pasted (evidence, not their words): {p.describe()}"
            for p in task.pasted[:detail.pasted]]
    if task.mentioned:
        out.append("- Files the user mentioned: " + ", ".join(f"`{f}`" for f in task.mentioned))
    stated = [s for text in [task.request, *task.said] for s in sentences(text)]
    rules = list(dict.fromkeys(s for s in stated if standing_rule(s)))
    required = list(dict.fromkeys(s for s in stated if s not in rules and not is_question(s)
                                  and any(p.search(s) for _, p in DURABLE)))
    if rules:  # for every later session (offline_rules.py)
        out.append(f"{RULES_LINE} " + "; ".join(f"\"{_quote(s, 160)}\"" for s in rules))
    if required:  # for this task only: never a preference
        out.append("- Required for this task (the user's words): "
                   + "; ".join(f"\"{_quote(s, 160)}\"" for s in required))
    work = sorted((r for r in task.commands if not is_probe(r.command)),
                  key=lambda r: proves(r.command))
    for run in work[:detail.commands]:
        out.append(f"- Ran `{_quote(run.command, 120)}`: {_status(run)}")
    if len(work) > detail.commands:
        out.append(f"- … and {len(work) - detail.commands} more commands")
    looks = [r for r in task.commands if is_probe(r.command)]
    if looks and detail.looks:  # look-ups answer a question: one line, whatever they found
        shown = ", ".join(f"`{_quote(r.command, 60)}`" for r in looks[:3])
        out.append(f"- Looked up ({len(looks)}): {shown}" + (" …" if len(looks) > 3 else ""))
    if task.files:
        out.append("- Changed files: " + ", ".join(f"`{f}`" for f in task.files[:20]))
    for story in task.stories:
        if not story.probe:
            label = {OPEN: "Open problem", UNVERIFIED: "Failure, fix not verified"}.get(
                story.status, "Failure and fix")
            out.append(f"- {label}: {story.text()}")
    if task.answer and detail.answer:
        out.append(f"- The assistant's last answer (its words, not verified): "
                   f"\"{_quote(task.answer)}\"")
    out += [f"- Outcome: {_outcome(task)}", ""]
    return out


def extract_v2(items: list[dict[str, Any]], cwd: str | None, branch: str | None,
               exit_codes: Mapping[str, int] | None = None) -> tuple[str, str | None]:
    """(rollout_summary, rollout_slug); ("", None) when there is nothing worth keeping.
    `exit_codes`: call_id → exit code from the session's events (`Phase1Input.exit_codes`)."""
    tasks, folders = _tasks(items, exit_codes)
    words = sum(word_count(t.request) + sum(word_count(s) for s in t.said) for t in tasks)
    # what the session did: a change, or a command that is more than a look-up (`git log`,
    # `cat`, `rg`: the answer to a question, not work to remember)
    tool_use = any(t.files or any(not is_probe(r.command) for r in t.commands) for t in tasks)
    stated = any(p.search(s) and not is_question(s) for t in tasks
                 for text in [t.request, *t.said] for s in sentences(text) for _, p in DURABLE)
    # a question answered from what the model knows or a look-up, with nothing the user
    # stated for later, is not a memory (the V1 extractor's rule too)
    if not tasks or (not tool_use and (words < 4 or not stated)):
        return "", None
    title = headline(tasks[0].request)  # the user's first request, in their script
    project = project_name(cwd)
    other = [f for f in dict.fromkeys(folders) if f != cwd]
    head = [f"# {title}", "",
            f"Session context: project `{project}`, folder `{cwd or 'unknown'}`, branch "
            f"`{branch or 'unknown'}`."
            + (f" It also worked in: {', '.join(f'`{f}`' for f in other[:5])}." if other
               else ""), ""]
    for detail in DETAIL:
        text = scrub_personal("\n".join(head + _body(tasks, detail)) + "\n")
        if len(text.encode("utf-8")) <= SUMMARY_BUDGET:
            break
    else:  # still too long with the least detail: whole lines go from the end
        lines = text.splitlines()
        while len(lines) > len(head) and len("\n".join(lines).encode("utf-8")) > SUMMARY_BUDGET:
            lines.pop(-2)  # the source line stays last
        text = "\n".join(lines) + "\n"
    files = [f for t in tasks for f in t.files]
    ran = [r.command for t in tasks for r in t.commands if not is_probe(r.command)]
    return text, rollout_slug(title, project, files, ran)


def _body(tasks: list[Task], detail: Detail) -> list[str]:
    lines: list[str] = []
    for n, task in enumerate(tasks[:detail.tasks], 1):
        lines += _task_lines(n, task, detail)
    if len(tasks) > detail.tasks:
        lines += [f"({len(tasks) - detail.tasks} later requests are not described here.)", ""]
    open_ = [(n, s) for n, t in enumerate(tasks[:detail.tasks], 1) for s in t.stories
             if s.status == OPEN and not s.probe]
    if open_:
        lines += ["## Open questions", ""]
        lines += [f"- Task {n}: `{_quote(s.command, 120)}` still failed (exit code "
                  f"{s.exit_code}) when the session ended." for n, s in open_]
        lines.append("")
    lines.append("Source: offline heuristic record (no model).")
    return lines
