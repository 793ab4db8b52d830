"""Codex's code mode (docs/codex-format.md "Tool outputs", code mode): the model's one tool is
`exec`, a freeform tool whose input is JavaScript that calls Codex's other tools
(`await tools.exec_command({cmd: "pytest -q"})`). Measured on 0.146.0 with the `code_mode`
feature on (tests/fixtures/rollouts/codex-0.146-code-mode-exec.jsonl):

* the call is a `custom_tool_call` named `exec`, `input` the script; the tools it calls are
  not recorded as items of their own;
* its output (`custom_tool_call_output`) is a list of `input_text` parts: a header part
  `Script completed` (or `Script failed`, `Script terminated`, `Script running with cell ID
  N`) / `Wall time 0.1 seconds` / `Output:`, then one part per `text(...)` the script made. A
  script that printed an `exec_command` or `write_stdin` result prints its JSON,
  `{"chunk_id":…,"wall_time_seconds":…,"exit_code":1,"original_token_count":…,"output":"…"}`
  (`session_id` instead of `exit_code` while the command runs). A cell that yields is a plain
  string header; a later `wait` function call (`{"cell_id": "N"}`) returns the rest in the
  same shape.

`nested_calls` reads which commands a script ran, `decode_cell` what it printed. Only literal
arguments are read (`{cmd: "pytest -q"}`): a command built at run time is not guessed.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

CODE_TOOL = "exec"  # the freeform tool that runs a script
WAIT_TOOL = "wait"  # the function that collects a cell that yielded
SHELL_TOOLS = frozenset({"exec_command", "write_stdin"})
_HEADER = re.compile(r"Script (completed|failed|terminated|running with cell ID (\S+))\r?\n"
                     r"Wall time (\d+(?:\.\d+)?) seconds?\r?\nOutput:\r?\n?")
_RESULT_KEYS = frozenset({"chunk_id", "wall_time_seconds", "exit_code", "original_token_count",
                          "output", "session_id"})
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


class ExecResult(NamedTuple):
    """One `exec_command` / `write_stdin` result a script printed."""

    exit_code: int | None  # None while the command runs
    output: str
    session_id: int | None  # while it runs: the session a later write_stdin names


class Cell(NamedTuple):
    """What one `exec` (or `wait`) call returned."""

    status: str  # completed | failed | terminated | running
    cell_id: str | None  # running: the id a later `wait` names
    wall_s: float
    parts: tuple[str | ExecResult, ...]  # each `text(...)` of the script, in order

    @property
    def results(self) -> tuple[ExecResult, ...]:
        return tuple(p for p in self.parts if isinstance(p, ExecResult))

    @property
    def text(self) -> str:
        """What the script printed, each command result as the command's own output."""
        out = ""
        for p in self.parts:
            piece = p.output if isinstance(p, ExecResult) else p
            if not piece:
                continue
            if out and not out.endswith("\n"):
                out += "\n"
            out += piece
        return out


class NestedCall(NamedTuple):
    """One `tools.<name>(…)` call in a script, with its literal arguments."""

    tool: str
    command: str | None = None  # exec_command `cmd`
    session_id: int | None = None  # write_stdin `session_id`
    patch: str | None = None  # apply_patch input


def decode_cell(output: Any) -> Cell | None:
    """The cell an `exec` / `wait` output holds; None when it is not in that shape."""
    if isinstance(output, str):
        texts = [output]
    elif isinstance(output, list):
        texts = [p["text"] if isinstance(p.get("text"), str) else "[image]"
                 for p in output if isinstance(p, dict)]
    else:
        return None
    if not texts:
        return None
    m = _HEADER.match(texts[0])
    if m is None:
        return None
    status = "running" if m.group(2) else m.group(1)
    rest = texts[0][m.end():]
    parts = tuple(_part(t) for t in ([rest] if rest else []) + texts[1:])
    return Cell(status, m.group(2), float(m.group(3)), parts)


def _part(text: str) -> str | ExecResult:
    """A printed exec_command / write_stdin result, else the text as it is."""
    if not text.startswith("{"):
        return text
    try:
        obj = json.loads(text)
    except ValueError:
        return text
    if not isinstance(obj, dict) or not set(obj) <= _RESULT_KEYS \
            or not isinstance(obj.get("output"), str) or "wall_time_seconds" not in obj:
        return text
    code, session = obj.get("exit_code"), obj.get("session_id")
    return ExecResult(code if _is_int(code) else None, obj["output"],
                      session if _is_int(session) else None)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- the script ----------------------------------------------------------------------------------

def nested_calls(js: str) -> tuple[NestedCall, ...]:
    """Every `tools.<name>(…)` / `tools["<name>"](…)` call in `js`, in source order; calls
    inside strings and comments are not calls."""
    out: list[NestedCall] = []
    i, n = 0, len(js)
    while i < n:
        c = js[i]
        if c in "'\"`":
            i = _skip_string(js, i)
        elif js.startswith("//", i):
            end = js.find("\n", i)
            i = n if end < 0 else end + 1
        elif js.startswith("/*", i):
            end = js.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif js.startswith("tools", i) and (i == 0 or not _ident_char(js[i - 1])):
            call, i = _tool_call(js, i + 5)
            if call is not None:
                out.append(call)
        else:
            i += 1
    return tuple(out)


def _ident_char(c: str) -> bool:
    return c.isalnum() or c in "_$."


def _tool_call(js: str, i: int) -> tuple[NestedCall | None, int]:
    """The call after `tools` at `i` (`.name(` or `["name"](`), and where to go on."""
    i = _space(js, i)
    name = None
    if js.startswith(".", i):
        m = _IDENT.match(js, _space(js, i + 1))
        if m:
            name, i = m.group(0), m.end()
    elif js.startswith("[", i):
        value, j = _value(js, _space(js, i + 1))
        j = _space(js, j)
        if isinstance(value, str) and js.startswith("]", j):
            name, i = value, j + 1
    i = _space(js, i)
    if name is None or not js.startswith("(", i):
        return None, i
    arg, _ = _value(js, _space(js, i + 1))
    if name == "exec_command":
        cmd = arg.get("cmd") if isinstance(arg, dict) else None
        return NestedCall(name, command=cmd if isinstance(cmd, str) else None), i + 1
    if name == "write_stdin":
        sid = arg.get("session_id") if isinstance(arg, dict) else None
        return NestedCall(name, session_id=sid if _is_int(sid) else None), i + 1
    if name == "apply_patch":
        patch = arg.get("input") if isinstance(arg, dict) else arg
        return NestedCall(name, patch=patch if isinstance(patch, str) else None), i + 1
    return NestedCall(name), i + 1


_NOT_LITERAL = object()


def _value(js: str, i: int) -> tuple[Any, int]:
    """A literal JS value at `i` (string, number, object of literals), else _NOT_LITERAL with
    the position after the expression."""
    if i < len(js) and js[i] in "'\"`":
        end = _skip_string(js, i)
        return _string(js[i + 1:end - 1], js[i]), end
    if js.startswith("{", i):
        return _object(js, i + 1)
    m = _NUMBER.match(js, i)
    if m and not _ident_char(js[m.end():m.end() + 1] or " "):
        text = m.group(0)
        return (float(text) if "." in text else int(text)), m.end()
    return _NOT_LITERAL, _skip_expression(js, i)


def _object(js: str, i: int) -> tuple[Any, int]:
    out: dict[str, Any] = {}
    while True:
        i = _space(js, i)
        if js.startswith("}", i):
            return out, i + 1
        if i >= len(js):
            return _NOT_LITERAL, i
        key: Any = None
        m = _IDENT.match(js, i)
        if m:
            key, i = m.group(0), m.end()
        elif js[i] in "'\"":
            key, i = _value(js, i)
        i = _space(js, i)
        if not isinstance(key, str) or not js.startswith(":", i):  # spread, shorthand, method
            return _NOT_LITERAL, _skip_expression(js, i, closing="}") + 1
        value, i = _value(js, _space(js, i + 1))
        out[key] = value
        i = _space(js, i)
        if js.startswith(",", i):
            i += 1
        elif not js.startswith("}", i):
            return _NOT_LITERAL, _skip_expression(js, i, closing="}") + 1


def _skip_expression(js: str, i: int, closing: str = "") -> int:
    """The position of the `,` or closing bracket that ends the expression at `i`."""
    depth = 0
    n = len(js)
    while i < n:
        c = js[i]
        if c in "'\"`":
            i = _skip_string(js, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif c in ",;" and depth == 0 and not closing:
            return i
        i += 1
    return n


def _skip_string(js: str, i: int) -> int:
    """The position just after the string or template literal opening at `i`."""
    quote, j, n = js[i], i + 1, len(js)
    while j < n:
        c = js[j]
        if c == "\\":
            j += 2
            continue
        if c == quote:
            return j + 1
        if quote == "`" and js.startswith("${", j):
            j = _skip_expression(js, j + 2, closing="}") + 1
            continue
        j += 1
    return n


def _string(body: str, quote: str) -> Any:
    """The value of a string literal's body; a template with `${…}` is no literal."""
    if quote == "`" and "${" in body:
        return _NOT_LITERAL
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
        elif e == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i:i + 2]):
            out.append(chr(int(body[i:i + 2], 16)))
            i += 2
        elif e == "u" and re.match(r"\{[0-9a-fA-F]{1,6}\}", body[i:]):
            end = body.index("}", i)
            out.append(chr(min(int(body[i + 1:end], 16), 0x10FFFF)))
            i = end + 1
        elif e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i:i + 4]):
            out.append(chr(int(body[i:i + 4], 16)))
            i += 4
        elif e in "\r\n":  # a line continuation
            if e == "\r" and body.startswith("\n", i):
                i += 1
        else:
            out.append(e)
    # JS strings are UTF-16: join surrogate pairs, and replace a lone half
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _space(js: str, i: int) -> int:
    while i < len(js) and js[i].isspace():
        i += 1
    return i
