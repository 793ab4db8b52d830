"""The commands a session ran and how each one ended, read from structure, never from words.

For each shell call the rollout holds (`shell`, `shell_command`, `exec_command`,
`local_shell_call`, …) this pairs the call with its output by `call_id` and reads the exit code
from the output itself (docs/codex-format.md "Tool outputs": the 0.169 header, with its
`Command:` line in 0.115-0.118, the freeform `Exit code: N` text, the older JSON
`metadata.exit_code`; `codex/tool_output.py`), else from the command's events
(docs/codex-format.md "Rollout files": `exec_command_end.exit_code`, `item_completed`
`CommandExecution.exit_code`; `event_exit_codes`), else from the `write_stdin` call that
collected the rest of a unified-exec command still running. A code-mode `exec` script's
commands are read from its source and paired, in order, with the results it printed
(`_CellRun`, `codex/code_mode.py`). The outcome is:

* `success`: exit code 0;
* `no_match`: a search tool (rg, grep, ag, ack, git grep, find, fd, findstr, Select-String)
  exiting 1, or 0 from find / Select-String, with nothing printed: it found nothing;
* `interrupted`: stopped by the user, not failed: exit code 130 (128 + SIGINT, the shell's),
  -2 (killed by SIGINT, Codex's way of saying a signal), or an output whose last line is `^C`
  (a dev server or a watcher stopped with Ctrl-C);
* `failed`: any other exit code;
* `unknown`: no exit code could be read (an output in a shape memdeck does not know, a command
  still running, no output at all). Unknown is never a failure.

Patches (`apply_patch` as a freeform tool, a function, through the old `shell` tool or a heredoc)
are listed apart, with the files they touch and whether they applied. Nothing here looks at
what a command printed except to say whether it printed anything.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .code_mode import (
    CODE_TOOL,
    SHELL_TOOLS,
    WAIT_TOOL,
    ExecResult,
    NestedCall,
    decode_cell,
    nested_calls,
)
from .rollout import EventMsg, RolloutLine
from .tool_output import decode_output

SUCCESS, FAILED, NO_MATCH, UNKNOWN = "success", "failed", "no_match", "unknown"
INTERRUPTED = "interrupted"
_SIGINT_CODES = frozenset({130, -2})

# tools whose exit code 1 means "nothing matched" (errors are 2 or more)
_GREP_LIKE = frozenset({"rg", "grep", "egrep", "fgrep", "zgrep", "ag", "ack", "findstr",
                        "git grep", "select-string", "sls"})
# tools that exit 0 (or 1) with nothing printed when they find nothing
_FINDERS = frozenset({"find", "fd", "fdfind", "select-string", "sls", "get-childitem", "gci"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish", "ksh", "powershell", "pwsh", "cmd"})
_SHELL_FLAGS = frozenset({"-c", "-lc", "-ic", "-lic", "-command", "/c", "/k"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$", re.M)
_COUNT_LINE = re.compile(r"^(?:.*:)?0$")  # `grep -c` printing a zero count
_OPERATORS = frozenset({"&&", "||", "|", ";", "|&", ";;"})


@dataclass(frozen=True)
class CommandRun:
    """One shell command the session ran, and how it ended."""

    index: int  # position in the items of its output (its call when it has none)
    call_id: str
    command: str  # as the shell ran it, a `bash -lc` / `powershell -Command` wrapper removed
    exit_code: int | None
    output: str  # what it printed, the header or JSON envelope removed
    outcome: str  # SUCCESS | FAILED | NO_MATCH | INTERRUPTED | UNKNOWN

    @property
    def empty(self) -> bool:
        return not self.output.strip()


@dataclass(frozen=True)
class PatchRun:
    """One patch the session applied (or tried to)."""

    index: int
    files: tuple[str, ...]
    applied: bool  # not known to have failed (`_applied`)
    added: tuple[str, ...] = ()  # the lines it adds, `+` removed


@dataclass(frozen=True)
class SessionCommands:
    commands: tuple[CommandRun, ...]
    patches: tuple[PatchRun, ...]


def event_exit_codes(lines: Iterable[RolloutLine]) -> dict[str, int]:
    """call_id → exit code, from `exec_command_end` and `item_completed` CommandExecution
    events (docs/codex-format.md "Rollout files")."""
    codes: dict[str, int] = {}
    for line in lines:
        it = line.item
        if isinstance(it, EventMsg) and it.call_id and it.exit_code is not None:
            codes[it.call_id] = it.exit_code
    return codes


def session_commands(items: list[dict[str, Any]],
                     exit_codes: Mapping[str, int] | None = None) -> SessionCommands:
    """Every command and patch in `items` (phase-1 response items, in session order).
    `exit_codes`: the codes the session's events hold (`event_exit_codes`), used when an
    output does not carry its own."""
    events = exit_codes or {}
    pending: dict[str, tuple[int, str]] = {}  # call_id → (index, command)
    patch_calls: dict[str, tuple[int, str]] = {}  # call_id → (index, patch text)
    stdin_calls: dict[str, int] = {}  # write_stdin call_id → unified-exec session id
    cells: dict[str, _CellRun] = {}  # code-mode `exec` call_id → its script, until it ends
    waits: dict[str, str] = {}  # `wait` call_id → the cell id it collects
    cell_ids: dict[str, str] = {}  # cell id (of a cell that yielded) → its `exec` call_id
    running: dict[int, int] = {}  # session id → position in `runs` of the command it runs
    runs: list[CommandRun] = []
    patches: list[PatchRun] = []
    for i, it in enumerate(items):
        t = it.get("type")
        cid = it.get("call_id")
        if not isinstance(cid, str) or not cid:
            continue
        if t == "custom_tool_call" and it.get("name") == CODE_TOOL:
            cells[cid] = _CellRun(i, nested_calls(str(it.get("input") or "")))
        elif t == "function_call" and it.get("name") == WAIT_TOOL:
            waits[cid] = _wait_cell(it)
        elif t in ("function_call", "local_shell_call", "custom_tool_call"):
            kind, value = _classify_call(it)
            if kind == "command":
                pending[cid] = (i, value)
            elif kind == "patch":
                patch_calls[cid] = (i, value)
            elif kind == "stdin":
                stdin_calls[cid] = int(value)
        elif t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            owner = cid if cid in cells else cell_ids.get(waits.pop(cid, ""))
            if owner in cells:
                cell = cells[owner]
                if cell.take(i, it.get("output")):
                    cell_ids[cell.cell_id or ""] = owner
                else:
                    cells.pop(owner).close(owner, runs, patches, running)
                continue
            out = decode_output(it.get("output"))
            code = out.exit_code
            if code is None:  # for a command still running: the code it ended with
                code = events.get(cid)
            if cid in pending:
                _, cmd = pending.pop(cid)
                runs.append(CommandRun(i, cid, cmd, code, out.text, outcome(cmd, code, out.text)))
                if out.running and out.session_id is not None:
                    running[out.session_id] = len(runs) - 1
            elif cid in patch_calls:
                at, text = patch_calls.pop(cid)
                patches.append(_patch(at, text, _applied(code, out.text)))
            elif cid in stdin_calls:
                _finish(runs, running, stdin_calls.pop(cid), i, out.text, code, out.running)
    for cid, (i, cmd) in pending.items():  # a call with no output: only its events can tell
        code = events.get(cid)
        runs.append(CommandRun(i, cid, cmd, code, "", outcome(cmd, code, "")))
    for cid, (i, text) in patch_calls.items():  # no output: not known to have failed
        patches.append(_patch(i, text, events.get(cid, 0) == 0))
    for cid, cell in cells.items():  # a script that never ended (or whose end is not here)
        cell.close(cid, runs, patches, running)
    runs.sort(key=lambda r: r.index)
    patches.sort(key=lambda p: p.index)
    return SessionCommands(tuple(runs), tuple(patches))


@dataclass
class _CellRun:
    """A code-mode `exec` call (docs/codex-format.md "Tool outputs"): the tools its script
    called, read from its literals (`code_mode.nested_calls`), and the command results it
    printed, from its output and the outputs of the `wait` calls that collected it."""

    index: int  # of the output that ended it (its call while none has)
    calls: tuple[NestedCall, ...]
    results: list[ExecResult] = field(default_factory=list)
    cell_id: str | None = None  # while it runs: the id `wait` names
    patch_failed: bool = False  # it threw on a patch that did not apply

    def take(self, index: int, output: Any) -> bool:
        """One output of the cell; True while the cell runs on."""
        self.index = index
        cell = decode_cell(output)
        if cell is None:  # a shape memdeck does not know: nothing to pair
            self.results.append(ExecResult(None, "", None))
            return False
        self.results += cell.results
        self.patch_failed = cell.status == "failed" and "apply_patch" in cell.text
        self.cell_id = cell.cell_id
        return cell.status == "running" and cell.cell_id is not None

    def close(self, cid: str, runs: list[CommandRun], patches: list[PatchRun],
              running: dict[int, int]) -> None:
        """Each command with the result the script printed for it, paired in order, only
        when it printed one result for each shell call (else their codes are unknown)."""
        shell = [c for c in self.calls if c.tool in SHELL_TOOLS]
        paired = len(shell) == len(self.results)
        started: list[int] = []  # sessions its commands left running
        for k, call in enumerate(shell):
            r = self.results[k] if paired else None
            if call.tool == "exec_command" and call.command is not None:
                code, text = (r.exit_code, r.output) if r else (None, "")
                runs.append(CommandRun(self.index, cid, call.command, code, text,
                                       outcome(call.command, code, text)))
                if r is not None and r.session_id is not None:
                    running[r.session_id] = len(runs) - 1
                    started.append(r.session_id)
            elif call.tool == "write_stdin" and r is not None:
                live = [s for s in started if s in running]
                session = call.session_id if call.session_id is not None else (
                    live[0] if len(live) == 1 else None)
                if session is not None:
                    _finish(runs, running, session, self.index, r.output, r.exit_code,
                            r.session_id is not None)
        patches.extend(_patch(self.index, c.patch, not self.patch_failed)
                       for c in self.calls if c.tool == "apply_patch" and c.patch)


def _wait_cell(item: dict[str, Any]) -> str:
    try:
        args = json.loads(item.get("arguments") or "{}")
    except (TypeError, ValueError):
        return ""
    cell = args.get("cell_id") if isinstance(args, dict) else None
    return str(cell) if isinstance(cell, (str, int)) and not isinstance(cell, bool) else ""


def _patch(index: int, text: str, applied: bool) -> PatchRun:
    files = tuple(dict.fromkeys(_PATCH_FILE.findall(text)))
    added = tuple(ln[1:] for ln in text.splitlines() if ln.startswith("+"))
    return PatchRun(index, files, applied, added)


def _applied(code: int | None, text: str) -> bool:
    """A patch applied unless its exit code, or apply_patch's own report when there is no
    exit code (`Success. Updated the following files:`), says otherwise."""
    if code is not None:
        return code == 0
    return not text.strip() or text.lstrip().startswith("Success")


def _finish(runs: list[CommandRun], running: dict[int, int], session: int, index: int,
            text: str, code: int | None, still_running: bool) -> None:
    """A `write_stdin` chunk of a running command: its output joins the command's; its exit
    code, once there is one, is the command's."""
    at = running.get(session)
    if at is None:
        return
    r = runs[at]
    joined = r.output + text
    code = r.exit_code if code is None else code
    runs[at] = replace(r, output=joined, exit_code=code,
                       outcome=outcome(r.command, code, joined), index=index)
    if not still_running:
        del running[session]


def outcome(command: str, exit_code: int | None, output: str) -> str:
    if exit_code is None:
        return UNKNOWN
    if exit_code == 0:
        return NO_MATCH if _found_nothing(command, 0, output) else SUCCESS
    if exit_code in _SIGINT_CODES or _ends_with_ctrl_c(output):
        return INTERRUPTED
    return NO_MATCH if exit_code == 1 and _found_nothing(command, 1, output) else FAILED


def _ends_with_ctrl_c(output: str) -> bool:
    tail = output.rstrip()[-200:].splitlines()
    return bool(tail) and tail[-1].strip().endswith("^C")


def _found_nothing(command: str, code: int, output: str) -> bool:
    tool, words = last_tool(command)
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    if tool in _GREP_LIKE and code == 1:
        return all(_COUNT_LINE.match(ln) for ln in lines)
    if tool in _FINDERS and not lines:
        return not ({"-delete", "-exec", "-execdir", "-ok"} & set(words))
    return False


def last_tool(command: str) -> tuple[str, list[str]]:
    """The program whose exit code the shell returns for `command` (the last of a `&&` chain
    or a pipeline), lower-cased, with its words; `git grep` counts as one tool."""
    words, _ = without_redirects(last_segment(command))
    while words and ("=" in words[0] and not words[0].startswith("-")
                     or words[0] in ("sudo", "time", "command", "exec", "env", "nice")):
        words = words[1:]
    if not words:
        return "", []
    name = re.split(r"[\\/]", words[0])[-1].lower().removesuffix(".exe")
    if name == "git" and len(words) > 1:
        return f"git {words[1].lower()}", words
    return name, words


def last_segment(command: str) -> list[str]:
    """The words of the last simple command of `command`."""
    parts = simple_commands(command)
    return parts[-1] if parts else []


def simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command in `command`, split at `&&`, `||`, `;`, `|` and line
    breaks outside quotes; redirections stay as words (`>`, `>>`)."""
    out: list[list[str]] = []
    for line in command.replace("\\\n", " ").splitlines():  # `\` continues a line
        if not line.strip():
            continue
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        try:
            tokens = list(lex)
        except ValueError:  # unbalanced quotes (a heredoc body, a cut command): plain split
            tokens = re.sub(r"(&&|\|\||;|\|)", r" \1 ", line).split()
        part: list[str] = []
        for tok in tokens:
            if tok in _OPERATORS:
                if part:
                    out.append(part)
                part = []
            elif tok:
                part.append(tok)
        if part:
            out.append(part)
    return out


def without_redirects(words: list[str]) -> tuple[list[str], list[str]]:
    """(the words, the files written by `>` / `>>`): `ls 2>/dev/null` → (["ls"], [])."""
    kept: list[str] = []
    written: list[str] = []
    k = 0
    while k < len(words):
        w = words[k]
        if w and set(w) <= set("<>&"):
            target = words[k + 1] if k + 1 < len(words) else ""
            if ">" in w and target not in ("/dev/null", "1", "2", "$null", "nul", "NUL"):
                written.append(target)
            if kept and kept[-1].isdigit() and k > 0 and words[k - 1] == kept[-1]:
                kept.pop()
            k += 2
            continue
        kept.append(w)
        k += 1
    return kept, written


def split_words(text: str) -> list[str]:
    try:
        return shlex.split(text, posix=True)
    except ValueError:
        return text.split()


def _classify_call(item: dict[str, Any]) -> tuple[str, str]:
    """("command", text) | ("patch", patch text) | ("stdin", session id) | ("", "")."""
    t = item.get("type")
    if t == "custom_tool_call":
        if item.get("name") == "apply_patch" and isinstance(item.get("input"), str):
            return "patch", item["input"]
        return "", ""
    if t == "local_shell_call":
        action = item.get("action")
        argv = action.get("command") if isinstance(action, dict) else None
        return _command(argv)
    try:
        args = json.loads(item.get("arguments") or "{}")
    except (TypeError, ValueError):
        return "", ""
    if not isinstance(args, dict):
        return "", ""
    name = item.get("name")
    if name == "write_stdin" and isinstance(args.get("session_id"), int):
        return "stdin", str(args["session_id"])
    if name == "apply_patch" and isinstance(args.get("input"), str):
        return "patch", args["input"]
    return _command(args.get("cmd") if "cmd" in args else args.get("command"))


def _command(value: Any) -> tuple[str, str]:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if re.split(r"[\\/]", value[0])[-1] in ("apply_patch", "applypatch") and len(value) > 1:
            return "patch", value[1]
        value = unwrap_shell(value)
    if not isinstance(value, str) or not value.strip():
        return "", ""
    if value.lstrip().startswith(("apply_patch", "applypatch")) and "*** Begin Patch" in value:
        return "patch", value
    return "command", value.strip()


def unwrap_shell(argv: list[str]) -> str:
    """`["bash", "-lc", "pytest -q"]` → `pytest -q`; `["powershell.exe", "-NoProfile",
    "-Command", "Get-ChildItem"]` → `Get-ChildItem`; anything else joined with spaces."""
    name = re.split(r"[\\/]", argv[0])[-1].lower().removesuffix(".exe")
    if name in _SHELLS:
        for k, word in enumerate(argv[1:], 1):
            if word.lower() in _SHELL_FLAGS and k + 1 < len(argv):
                return " ".join(argv[k + 1:])
    return " ".join(argv)
