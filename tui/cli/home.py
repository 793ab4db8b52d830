"""The home's own commands of `memdeck`: the app (`tui`, `demo`), the session list and one
session (`sessions`, `show`), the settings (`config`) and `redact`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .base import EXIT_OK, Add, Context, Parser, UsageError, common_options, print_json, warn


def register(add: Add) -> None:
    add("tui", "open the memdeck app on the home (the default)", cmd_tui)
    p = add("sessions", "list every session with its memory status and the reason",
            cmd_sessions)
    p.add_argument("--status", action="append", metavar="STATUS",
                   help="only sessions with this status (repeatable)")
    p.add_argument("--project", metavar="TEXT", help="only sessions whose cwd contains TEXT")
    p = add("show", "one session: metadata, status, transcript and citations", cmd_show)
    p.add_argument("id", help="session id, a unique prefix of it, or the rollout path")
    p.add_argument("--events", action="store_true", help="include event lines")
    p = add("config", "read or change Codex's memory settings and memdeck's own", cmd_config)
    common = common_options(top=False)
    csub: argparse._SubParsersAction[argparse.ArgumentParser] = p.add_subparsers(
        dest="action", parser_class=Parser, metavar="ACTION", required=True)
    g = csub.add_parser("get", parents=[common], help="print a value as a TOML literal")
    g.add_argument("key")
    s = csub.add_parser("set", parents=[common], help="change a value (checked first)")
    s.add_argument("key")
    s.add_argument("value")
    csub.add_parser("list", parents=[common], help="every key, its value and what it allows")


def register_last(add: Add) -> None:
    """After every other command in `memdeck --help`: the demo, and the redaction filter."""
    p = add("demo", "build the demo Codex home and open memdeck on it", cmd_demo)
    p.add_argument("--dir", metavar="D", help="where to build it (default: a memdeck data dir)")
    p.add_argument("--keep", action="store_true",
                   help="open the demo home built before as it was left (default: rebuild it)")
    p.add_argument("--no-tui", action="store_true", help="build and list, do not open the app")
    add("redact", "copy stdin to stdout with secrets replaced by [REDACTED_SECRET]",
        cmd_redact)


def cmd_sessions(ctx: Context) -> int:
    from memdeck.engine import STATUSES

    args = ctx.args
    for s in args.status or ():
        if s not in STATUSES:
            raise UsageError(f"unknown status {s!r}; one of: {', '.join(STATUSES)}")
    engine = ctx.engine
    listing = engine.listing()
    sessions = listing.sessions
    if args.status:
        sessions = [s for s in sessions if s.status in args.status]
    if args.project:
        sessions = [s for s in sessions if s.cwd and args.project in s.cwd]
    warn(listing.warnings)
    if ctx.json:
        print_json([s.to_json() for s in sessions])
    else:
        from memdeck.tui.render import print_sessions

        print_sessions(sessions, engine.clock.now(), engine.root)
    return EXIT_OK


def cmd_show(ctx: Context) -> int:
    engine = ctx.engine
    detail = engine.session(ctx.args.id)
    warn(detail.warnings)
    if ctx.json:
        print_json(detail.to_json())
    else:
        from memdeck.tui.render import print_session

        print_session(detail, engine.clock.now())
    return EXIT_OK


def cmd_config(ctx: Context) -> int:
    from memdeck.engine import toml_literal

    args, engine = ctx.args, ctx.engine
    if args.action == "list":
        values = engine.config_all()
        if ctx.json:
            print_json([_setting_json(v) for v in values])
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
    if ctx.json:
        print_json(_setting_json(v))
    elif v.value is None:
        from memdeck.engine import MemdeckError

        raise MemdeckError(f"{v.key} is not set: {v.help}")
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


def cmd_demo(ctx: Context) -> int:
    from memdeck.engine import demo_home

    args = ctx.args
    path = demo_home(args.dir, keep=args.keep)
    print(f"memdeck: demo Codex home at {path}"
          + (" (kept as it was)" if args.keep else " (rebuilt; --keep opens it as left)"),
          file=sys.stderr)
    shown = argparse.Namespace(**{**vars(args), "home": str(path), "status": None,
                                  "project": None})
    if args.no_tui or args.json:
        return cmd_sessions(Context(shown))
    return cmd_tui(Context(shown))


def cmd_tui(ctx: Context) -> int:
    from memdeck.tui import collector

    collector.hold()  # before Textual is imported: tui/collector.py says why
    from memdeck.tui.app import run_app

    return run_app(ctx.args.home)


def cmd_redact(ctx: Context) -> int:
    from memdeck.engine import redact_stream

    redact_stream(sys.stdin.buffer, sys.stdout.buffer)  # bytes in, bytes out: nothing re-encoded
    return EXIT_OK
