"""The `memdeck` command.

Every subcommand takes `--home PATH` and `--json` anywhere after its name. Errors print one
line to stderr and exit 1; usage errors exit 2. Imports are deferred: `memdeck sessions
--json` loads neither Textual, Rich, openai nor GitPython.

base.py      what every command shares: exit codes, errors, --home/--json, Context, JSON
commands.py  the one command table (name, help, arguments, runner), in --help order
entry.py     main(): parse, run, one line per failure
home.py, pipeline.py, preview.py, trace.py, remembered.py   the commands, by what they touch
"""

from .base import UsageError
from .commands import build_parser, version_line
from .entry import main

__all__ = ["UsageError", "build_parser", "main", "version_line"]
