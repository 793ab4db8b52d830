"""What the user actually said in a session (issue 9, requirement 2).

A user message in a rollout carries much that the user did not type: Codex's injected fragments
and records (AGENTS.md, environment context, user instructions, skills, turn-aborted markers,
`<user_shell_command>` records, …, `fragments.py`), the VS Code extension's and the Desktop
app's wrappers around the request (`# Context from my IDE setup:` / `# Files mentioned by the
user:` … `## My request for Codex:`), prompt templates the user only invoked (a custom prompt's
expansion, such as Spec Kit's `/speckit.specify`), and material the user pasted as evidence
(tracebacks, logs, tables, CSV, data: `pasted.py`). `words_of_message` keeps the user's own
prose (their request and statements), sets the pasted blocks apart, and removes personal data
(`personal_data.py`); only the prose can become a preference, a fact, a command or a name.

A prompt template is recognised by what only a template has: Spec Kit's argument block
(`## User Input` and a fenced block, or `User input:` and a paragraph), or a long structured
block (Markdown headings) with placeholders (`$ARGUMENTS`, `{SCRIPT}`, `[NEEDS CLARIFICATION]`)
or words addressed to the agent about "the user". Only the user's argument text is kept, when
it can be found; a template with none gives no words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..personal_data import scrub_personal
from .fragments import is_context_fragment, is_image_tag, mentioned_files, user_request
from .pasted import Pasted, split_pasted

# Spec Kit's argument blocks, newer (`## User Input` + ```text fence) and older (`User input:`)
_ARGUMENT_BLOCKS = (
    re.compile(r"(?im)^#{1,4}[ \t]*User Input[ \t]*\n\s*(?P<f>`{3,}|~{3,})[\w-]*[ \t]*\n"
               r"(?P<args>.*?)\n[ \t]*(?P=f)[ \t]*$", re.S),
    re.compile(r"(?im)^(?:#{1,4}[ \t]*)?User input:[ \t]*\n\s*\n?(?P<args>.+?)(?:\n[ \t]*\n|\Z)",
               re.S),
    re.compile(r"(?im)^(?:#{1,4}[ \t]*)?(?:Arguments|\$ARGUMENTS)[ \t]*:?[ \t]*\n\s*"
               r"(?P<f>`{3,}|~{3,})[\w-]*[ \t]*\n(?P<args>.*?)\n[ \t]*(?P=f)[ \t]*$", re.S),
)
_HEADING = re.compile(r"(?m)^#{1,6} \S")
_TEMPLATE_SIGNS = re.compile(
    r"\$ARGUMENTS|\{ARGS\}|\{SCRIPT\}|\{\{\s*\w+\s*\}\}|\[NEEDS CLARIFICATION|"
    r"you \*\*must\*\* consider|(?i:\bthe user(?:'s)? (?:input|request|message|typed|provided|"
    r"description)\b)|(?m:^---\n(?:description|name|argument-hint):)")
_UNFILLED = re.compile(r"^\s*(\$ARGUMENTS|\{ARGS\}|\{\{\s*\w+\s*\}\})\s*$")
TEMPLATE_MIN_CHARS = 600
_AGENT_BRIEF = re.compile(r"(?m)^(?:You are|You will|You're|Your (?:task|job|role) is)\b")
_STEPS = re.compile(r"(?m)^[ \t]*\d+[.)][ \t]+\S")
_INLINE_ARGS = re.compile(r"(?im)^[ \t]*[-*]?[ \t]*[^\n:]{0,60}?\b(?:from the user|user input|"
                          r"arguments?)[ \t]*:[ \t]*(?P<args>\S.*)$")


@dataclass(frozen=True)
class UserWords:
    """One user message's own words. `text`: the prose the user wrote (request and
    statements), wrappers, fragments, templates and pasted blocks removed, personal data
    replaced by markers; `pasted`: the blocks set apart, in order; `template`: the message
    was a prompt template the user invoked (its `text` is the user's argument, if any);
    `mentioned`: the names of the files the Desktop app listed as mentioned (context)."""

    text: str
    pasted: tuple[Pasted, ...] = ()
    template: bool = False
    mentioned: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.text or self.pasted)


def template_arguments(text: str) -> tuple[bool, str]:
    """(is this a prompt template the user did not write, the user's argument text in it)."""
    for rx in _ARGUMENT_BLOCKS:
        m = rx.search(text)
        if m and (_TEMPLATE_SIGNS.search(text) or len(_HEADING.findall(text)) >= 2):
            args = m.group("args").strip()
            return True, "" if _UNFILLED.match(args) else args
    structured = len(text) >= TEMPLATE_MIN_CHARS and len(_HEADING.findall(text)) >= 2
    if structured and _TEMPLATE_SIGNS.search(text):
        return True, ""
    if structured and _AGENT_BRIEF.search(text) and len(_STEPS.findall(text)) >= 3:
        # a custom prompt of one's own kind: a brief to the agent ("You are …") in numbered
        # steps; its rules are the template's, only a labelled argument line is the user's
        m = _INLINE_ARGS.search(text)
        return True, m.group("args").strip() if m else ""
    return False, text


def words_of_text(text: str) -> UserWords:
    """The user's own words in one `input_text` part."""
    if is_image_tag(text) or is_context_fragment(text):
        return UserWords("")
    request = user_request(text)
    if not request:
        return UserWords("")
    template, request = template_arguments(request)
    prose, pasted = split_pasted(request)
    mentioned = tuple(scrub_personal(f) for f in mentioned_files(text))
    return UserWords(scrub_personal(_without_pasted_names(prose, pasted)), tuple(pasted),
                     template, mentioned)


_PERSON = re.compile(r"[^\W\d_][\w'’.-]*(?: [^\W\d_][\w'’.-]*){1,3}")


def _without_pasted_names(prose: str, pasted: list[Pasted]) -> str:
    """A person's name from pasted rows (a CSV's or a table's cell such as `Ciarán
    O'Donovan`) is personal data in the user's own sentence too (`invalid name "Ciarán
    O'Donovan"`): replaced by its marker wherever the prose repeats it."""
    names: set[str] = set()
    for block in pasted:
        if block.kind not in ("csv", "table", "data"):
            continue
        for row in block.text.splitlines()[1:]:  # the first line is the header
            for cell in re.split(r"[,\t|;]", row):
                cell = cell.strip().strip('"').strip()
                if _PERSON.fullmatch(cell) and all(w[0].isupper() for w in cell.split()):
                    names.add(cell)
    for name in sorted(names, key=len, reverse=True):
        prose = prose.replace(name, "[REDACTED_NAME]")
    return prose


def words_of_message(item: dict[str, Any]) -> UserWords | None:
    """The user's own words in a user `message` item (None for any other item); parts are
    joined by a blank line."""
    if item.get("type") != "message" or item.get("role") != "user":
        return None
    parts = [words_of_text(c["text"]) for c in item.get("content") or ()
             if isinstance(c, dict) and isinstance(c.get("text"), str)]
    return UserWords("\n\n".join(p.text for p in parts if p.text),
                     tuple(b for p in parts for b in p.pasted), any(p.template for p in parts),
                     tuple(f for p in parts for f in p.mentioned))


def session_words(items: list[dict[str, Any]]) -> list[UserWords]:
    """Each user message's own words, in order; messages with none are left out."""
    out = []
    for it in items:
        words = words_of_message(it)
        if words:
            out.append(words)
    return out


# -- what a `command:` entry may be ----------------------------------------------------------

_LITERALS = frozenset({"true", "false", "none", "null", "nil", "undefined", "yes", "no", "ok",
                       "nan", "on", "off"})
_KNOWN_TOOLS = frozenset("""
make cmake ninja bazel just task pytest tox nox ruff mypy pyright black flake8 isort pylint uv
pip pip3 poetry pdm hatch python python3 node npm npx pnpm yarn bun deno tsc eslint prettier jest
vitest playwright cypress cargo rustc rustup clippy go gofmt golangci-lint gradle gradlew mvn ant
sbt dotnet msbuild nuget docker podman kubectl helm terraform tofu ansible vagrant git gh rake
rails bundle rspec composer php artisan phpunit mix elixir swift xcodebuild pod flutter dart
""".split())
_ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=\S*$")
_PROGRAM = re.compile(r"^(?:\.{1,2}/|~/|/)?[A-Za-z_][\w.+-]*(?:/[\w.+-]+)*$")
_VERSION = re.compile(r"^v?\d+(\.\d+)*[a-z]?$")


def looks_like_command(text: str) -> bool:
    """Whether a backticked span is a command one could run (`make check-quick`,
    `./gradlew test`, `GOFLAGS=-mod=mod go mod tidy`), not a value (`False`), a table rule
    (`|---|`), a file name, an identifier or a format (`inventory: <what changed>`)."""
    s = text.strip()
    if s.startswith("$ "):
        s = s[2:].strip()
    words = s.split()
    while words and _ENV_ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words or s.lower() in _LITERALS:
        return False
    first = words[0]
    if not _PROGRAM.match(first) or first.lower() in _LITERALS:
        return False
    if len(words) == 1:
        return first.lower() in _KNOWN_TOOLS or first.startswith(("./", "../", "~/"))
    if first[0].isupper() and _VERSION.match(words[1]):
        return False  # `MySQL 8.4`, `Go 1.23`: a name and its version
    if "/" in first and not first.startswith(("./", "../", "~/", "/")) and re.search(
            r"\.[A-Za-z]{1,5}$", first) and first.rsplit(".", 1)[1] not in ("sh", "py", "js"):
        return False  # `src/app.ts is …`: a file, not a program
    return True
