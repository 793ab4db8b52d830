"""What every `memdeck` command shares, in one place: the exit codes, the one-line errors,
`--home` and `--json`, the `Context` a command runs with, and the JSON printer.

A command is one function `run(ctx) -> int`, registered with its name, help and arguments in
one call (`Add`; the table is tui/cli/commands.py). `ctx.engine` opens the home the first time
it is asked for, so a command that fails on its arguments opens nothing."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memdeck.engine import Engine

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A command was asked for something its arguments cannot mean: one line, exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2
        self.exit(EXIT_USAGE, f"memdeck: {message} (see `memdeck {self._sub_name()}--help`)\n")

    def _sub_name(self) -> str:
        parts = self.prog.split()[1:]
        return (" ".join(parts) + " ") if parts else ""


def common_options(top: bool) -> argparse.ArgumentParser:
    """`--home` and `--json`, for the top parser and again for every subcommand.

    A subparser fills in its own defaults after the top parser has parsed, so the copies on
    subcommands default to SUPPRESS: `memdeck --home H sessions` keeps H, and
    `memdeck sessions --home H` sets it; both mean the same thing."""
    p = argparse.ArgumentParser(add_help=False)
    extra: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    p.add_argument("--home", metavar="PATH",
                   help="Codex home (default: $CODEX_HOME, else ~/.codex)", **extra)
    p.add_argument("--json", action="store_true", help="print one JSON document", **extra)
    return p


@dataclass
class Context:
    """What a command runs with: its parsed arguments and, when it asks, the open home."""

    args: argparse.Namespace
    _engine: Engine | None = field(default=None, repr=False)

    @property
    def json(self) -> bool:
        return bool(self.args.json)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            from memdeck.engine import Engine

            self._engine = Engine.open(self.args.home)
        return self._engine


Run = Callable[[Context], int]
# registers one command: its name, its help line and what runs it; returns its parser, for
# the command's own arguments
Add = Callable[[str, str, Run], argparse.ArgumentParser]


def err(message: str) -> None:
    first = message.strip().splitlines()[0] if message.strip() else "error"
    print(f"memdeck: {first}", file=sys.stderr)


def warn(warnings: tuple[str, ...]) -> None:
    for w in warnings:
        print(f"memdeck: warning: {w}", file=sys.stderr)


def print_json(data: Any) -> None:
    try:
        import orjson
    except ImportError:  # pragma: no cover
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    out = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (redirected in tests)
        sys.stdout.write(out.decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(out)
    buffer.flush()
