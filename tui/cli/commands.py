"""The one command table of `memdeck`: every command's name, help line, arguments and the
function that runs it, registered together (a command cannot have a parser without a runner,
or the reverse). The order here is the order of `memdeck --help`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import home, pipeline, preview, project, remembered, scope, sync, trace
from .base import EXIT_OK, Parser, Run, common_options

REGISTRARS = (home.register, pipeline.register, preview.register, trace.register,
              remembered.register, scope.register, project.register, sync.register,
              home.register_last)


def version_line() -> str:
    """`memdeck 0.1.0 (tested with Codex 0.171.0)`: what a bug report needs first."""
    from importlib.metadata import PackageNotFoundError, version

    from memdeck.engine import TESTED_CODEX

    try:
        mine = version("memdeck")
    except PackageNotFoundError:  # run from a checkout that was never installed
        mine = "(not installed)"
    return f"memdeck {mine} (tested with Codex {TESTED_CODEX})"


class _Version(argparse.Action):
    """`--version`, its line made only when asked (reading the installed package's metadata
    cost every command 15 ms)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        sys.stdout.write(version_line() + "\n")
        parser.exit(EXIT_OK)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Run]]:
    """The parser, and what runs each command by name."""
    common = common_options(top=False)
    parser = Parser(prog="memdeck", parents=[common_options(top=True)],
                    description="See and control Codex's long-term memory.")
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print memdeck's version and the Codex release it is tested with")
    # typed as plain parsers: the parents (common_options) are, and argparse only copies
    # their options
    sub: argparse._SubParsersAction[argparse.ArgumentParser] = parser.add_subparsers(
        dest="command", parser_class=Parser, metavar="COMMAND")
    runs: dict[str, Run] = {}

    def add(name: str, help_: str, run: Run) -> argparse.ArgumentParser:
        if name in runs:
            raise ValueError(f"two commands are named {name!r}")
        runs[name] = run
        return sub.add_parser(name, parents=[common], help=help_, description=help_)

    for register in REGISTRARS:
        register(add)
    return parser, runs
