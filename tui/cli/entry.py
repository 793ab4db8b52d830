"""`memdeck`'s entry point: parse, run the command, and turn every failure into one line on
stderr (exit 1; usage errors exit 2). Never a traceback unless MEMDECK_DEBUG is set."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from .base import EXIT_ERROR, EXIT_OK, EXIT_USAGE, Context, UsageError, err
from .commands import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser, runs = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as e:  # argparse exits 0 for --help, 2 for usage
        return int(e.code or 0)
    run = runs[args.command or "tui"]
    from memdeck.engine import Engine, MemdeckError, os_error_text

    # what opening the home recovered (a change a killed memdeck left): the user is told
    Engine.announce = lambda done: err(f"recovered: {done}")

    try:
        return run(Context(args))
    except MemdeckError as e:
        err(str(e))
        return EXIT_ERROR
    except UsageError as e:
        err(str(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        # Leave now: worker threads may be waiting on a model endpoint, and Python would join
        # them at exit. Every write is a transaction or a single append, so stopping here is
        # safe; an extraction left `running` is taken back by the next run (dead worker).
        err("interrupted")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:  # the machine, not memdeck: a full disk, a read-only folder
        if os.environ.get("MEMDECK_DEBUG"):
            raise
        err(os_error_text(e))
        return EXIT_ERROR
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        if os.environ.get("MEMDECK_DEBUG"):
            raise
        err(f"internal error: {type(e).__name__}: {e} (MEMDECK_DEBUG=1 shows the traceback)")
        return EXIT_ERROR
