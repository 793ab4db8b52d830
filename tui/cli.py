"""The `memdeck` command.

Every subcommand takes `--home PATH` and `--json` anywhere after its name. Errors print one
line to stderr and exit 1; usage errors exit 2. Imports are deferred: `memdeck sessions
--json` loads neither Textual, Rich, openai nor GitPython.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from memdeck.tui import cli_preview, cli_remembered, cli_trace

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2
        self.exit(EXIT_USAGE, f"memdeck: {message} (see `memdeck {self._sub_name()}--help`)\n")

    def _sub_name(self) -> str:
        parts = self.prog.split()[1:]
        return (" ".join(parts) + " ") if parts else ""


def _common(top: bool) -> argparse.ArgumentParser:
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


def build_parser() -> argparse.ArgumentParser:
    common = _common(top=False)
    parser = _Parser(prog="memdeck", parents=[_common(top=True)],
                     description="See and control Codex's long-term memory.")
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print memdeck's version and the Codex release it is tested with")
    # typed as plain parsers: the parents (_common) are, and argparse only copies their options
    sub: argparse._SubParsersAction[argparse.ArgumentParser] = parser.add_subparsers(
        dest="command", parser_class=_Parser, metavar="COMMAND")

    def add(name: str, help_: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], help=help_, description=help_)

    add("tui", "open the memdeck app on the home (the default)")
    p = add("sessions", "list every session with its memory status and the reason")
    p.add_argument("--status", action="append", metavar="STATUS",
                   help="only sessions with this status (repeatable)")
    p.add_argument("--project", metavar="TEXT", help="only sessions whose cwd contains TEXT")
    p = add("show", "one session: metadata, status, transcript and citations")
    p.add_argument("id", help="session id, a unique prefix of it, or the rollout path")
    p.add_argument("--events", action="store_true", help="include event lines")
    p = add("config", "read or change Codex's memory settings and memdeck's own")
    csub: argparse._SubParsersAction[argparse.ArgumentParser] = p.add_subparsers(
        dest="action", parser_class=_Parser, metavar="ACTION", required=True)
    g = csub.add_parser("get", parents=[common], help="print a value as a TOML literal")
    g.add_argument("key")
    s = csub.add_parser("set", parents=[common], help="change a value (checked first)")
    s.add_argument("key")
    s.add_argument("value")
    csub.add_parser("list", parents=[common], help="every key, its value and what it allows")
    from memdeck.tui import cli_pipeline

    cli_pipeline.add_parsers(add)
    cli_preview.add_parsers(add)
    cli_trace.add_parsers(add)
    cli_remembered.add_parsers(add)
    p = add("demo", "build the demo Codex home and open memdeck on it")
    p.add_argument("--dir", metavar="D", help="where to build it (default: a memdeck data dir)")
    p.add_argument("--keep", action="store_true",
                   help="open the demo home built before as it was left (default: rebuild it)")
    p.add_argument("--no-tui", action="store_true", help="build and list, do not open the app")
    add("redact", "copy stdin to stdout with secrets replaced by [REDACTED_SECRET]")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as e:  # argparse exits 0 for --help, 2 for usage
        return int(e.code or 0)
    command = args.command or "tui"
    handler = COMMANDS[command]
    from memdeck.engine import Engine, MemdeckError, os_error_text

    # what opening the home recovered (a change a killed memdeck left): the user is told
    Engine.announce = lambda done: _err(f"recovered: {done}")

    try:
        return handler(args)
    except MemdeckError as e:
        _err(str(e))
        return EXIT_ERROR
    except UsageError as e:
        _err(str(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        # Leave now: worker threads may be waiting on a model endpoint, and Python would join
        # them at exit. Every write is a transaction or a single append, so stopping here is
        # safe; an extraction left `running` is taken back by the next run (dead worker).
        _err("interrupted")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:  # the machine, not memdeck: a full disk, a read-only folder
        if os.environ.get("MEMDECK_DEBUG"):
            raise
        _err(os_error_text(e))
        return EXIT_ERROR
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        if os.environ.get("MEMDECK_DEBUG"):
            raise
        _err(f"internal error: {type(e).__name__}: {e} (MEMDECK_DEBUG=1 shows the traceback)")
        return EXIT_ERROR


def _err(message: str) -> None:
    first = message.strip().splitlines()[0] if message.strip() else "error"
    print(f"memdeck: {first}", file=sys.stderr)


def _warn(warnings: tuple[str, ...]) -> None:
    for w in warnings:
        print(f"memdeck: warning: {w}", file=sys.stderr)


def _print_json(data: Any) -> None:
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


def _engine(args: argparse.Namespace) -> Any:
    from memdeck.engine import Engine

    return Engine.open(args.home)


# -- commands -------------------------------------------------------------------------


def cmd_sessions(args: argparse.Namespace) -> int:
    from memdeck.engine import STATUSES

    for s in args.status or ():
        if s not in STATUSES:
            raise UsageError(f"unknown status {s!r}; one of: {', '.join(STATUSES)}")
    engine = _engine(args)
    listing = engine.listing()
    sessions = listing.sessions
    if args.status:
        sessions = [s for s in sessions if s.status in args.status]
    if args.project:
        sessions = [s for s in sessions if s.cwd and args.project in s.cwd]
    _warn(listing.warnings)
    if args.json:
        _print_json([s.to_json() for s in sessions])
    else:
        from memdeck.tui.render import print_sessions

        print_sessions(sessions, engine.clock.now(), engine.root)
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    engine = _engine(args)
    detail = engine.session(args.id)
    _warn(detail.warnings)
    if args.json:
        _print_json(detail.to_json())
    else:
        from memdeck.tui.render import print_session

        print_session(detail, engine.clock.now())
    return EXIT_OK


def cmd_config(args: argparse.Namespace) -> int:
    from memdeck.engine import toml_literal

    engine = _engine(args)
    if args.action == "list":
        values = engine.config_all()
        if args.json:
            _print_json([_setting_json(v) for v in values])
        else:
            for v in values:
                lit = toml_literal(v.value) if v.value is not None else "(unset)"
                mark = f"  # {v.adjusted}" if v.adjusted else "" if v.is_set else "  # default"
                print(f"{v.key} = {lit}{mark}")
        return EXIT_OK
    if args.action == "get":
        v = engine.config_get(args.key)
    else:
        v = engine.config_set(args.key, args.value)
    if args.json:
        _print_json(_setting_json(v))
    elif v.value is None:
        from memdeck.engine import MemdeckError

        raise MemdeckError(f"{v.key} is not set (Codex uses the provider's default model)")
    else:
        why = v.note or v.adjusted  # derived (the version) or adjusted (a clamped value)
        print(toml_literal(v.value) + (f"  # {why}" if why else ""))
    return EXIT_OK


def _setting_json(v: Any) -> dict[str, Any]:
    d = {"key": v.key, "value": v.value, "set": v.is_set, "default": v.default,
         "allowed": v.allowed, "help": v.help}
    if v.note:
        d["reason"] = v.note
    if v.adjusted:
        d["reason"] = v.adjusted
    return d


def cmd_demo(args: argparse.Namespace) -> int:
    from memdeck.engine import demo_home

    path = demo_home(args.dir, keep=args.keep)
    print(f"memdeck: demo Codex home at {path}"
          + (" (kept as it was)" if args.keep else " (rebuilt; --keep opens it as left)"),
          file=sys.stderr)
    args.home = str(path)
    if args.no_tui or args.json:
        return cmd_sessions(argparse.Namespace(**{**vars(args), "status": None,
                                                  "project": None}))
    return cmd_tui(args)


def cmd_tui(args: argparse.Namespace) -> int:
    from memdeck.tui import collector

    collector.hold()  # before Textual is imported: tui/collector.py says why
    from memdeck.tui.app import run_app

    return run_app(args.home)


def _pipeline(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from memdeck.tui import cli_pipeline

        return getattr(cli_pipeline, f"cmd_{name}")(args, _engine(args), _print_json)

    return run


def cmd_redact(args: argparse.Namespace) -> int:
    from memdeck.engine import redact_stream

    redact_stream(sys.stdin.buffer, sys.stdout.buffer)  # bytes in, bytes out: nothing re-encoded
    return EXIT_OK


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "extract": _pipeline("extract"),
    "memories": _pipeline("memories"),
    "citations": _pipeline("citations"),
    "forget": _pipeline("forget"),
    "reset": _pipeline("reset"),
    "history": _pipeline("history"),
    "watch": _pipeline("watch"),
    "consolidate": _pipeline("consolidate"),
    "proposals": _pipeline("proposals"),
    "diff": _pipeline("diff"),
    "reject": _pipeline("reject"),
    "accept": _pipeline("accept"),
    "restore": _pipeline("restore"),
    "backups": _pipeline("backups"),
    "restore-backup": _pipeline("restore_backup"),
    "sessions": cmd_sessions,
    "show": cmd_show,
    "config": cmd_config,
    "demo": cmd_demo,
    "tui": cmd_tui,
    "redact": cmd_redact,
    **cli_preview.COMMANDS,
    **cli_trace.COMMANDS,
    **cli_remembered.COMMANDS,
}


if __name__ == "__main__":
    raise SystemExit(main())
