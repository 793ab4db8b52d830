"""Sharing memory through git remotes (issue 26): `memdeck remote add|list|remove`,
`memdeck push [NAME]`, `memdeck pull [NAME]` (a proposal, reviewed and accepted like a
consolidation) and `memdeck resolve PROPOSAL N ours|theirs|both` for a pull's conflicts."""

from __future__ import annotations

import argparse

from .base import Add, Context, Parser, UsageError, common_options, print_json


def register(add: Add) -> None:
    p = add("remote", "the git remotes memory is shared with: add, list, remove", cmd_remote)
    common = common_options(top=False)
    sub: argparse._SubParsersAction[argparse.ArgumentParser] = p.add_subparsers(
        dest="action", parser_class=Parser, metavar="ACTION", required=True)
    a = sub.add_parser("add", parents=[common], help="add a remote (a git URL: a bare "
                       "repository over file://, ssh, https, git://)")
    a.add_argument("name")
    a.add_argument("url")
    a.add_argument("--scope", metavar="PROJECT",
                   help="push only this project's blocks (a team remote)")
    a.add_argument("--personal", action="store_true",
                   help="with --scope: User Profile and preferences go too")
    sub.add_parser("list", parents=[common], help="every remote, its URL and scope")
    r = sub.add_parser("remove", parents=[common], help="forget a remote (nothing is deleted "
                       "on it)")
    r.add_argument("name")
    p = add("push", "share the memory folder with a remote (its shared form: no session "
                    "paths or thread ids; refused if a line holds a secret)", cmd_push)
    p.add_argument("remote", nargs="?", help="the remote (default: the only one)")
    p = add("pull", "merge a remote's memory into a proposal to review and accept", cmd_pull)
    p.add_argument("remote", nargs="?", help="the remote (default: the only one)")
    p = add("resolve", "resolve a conflict of a pull's proposal", cmd_resolve)
    p.add_argument("proposal")
    p.add_argument("n", type=int, nargs="?", help="the conflict, from 1 (omit to list them)")
    p.add_argument("take", nargs="?", choices=("ours", "theirs", "both"),
                   help="this machine's lines, the remote's, or both")


def cmd_remote(ctx: Context) -> int:
    eng = ctx.engine
    if ctx.args.action == "add":
        r = eng.remote_add(ctx.args.name, ctx.args.url, ctx.args.scope, ctx.args.personal)
        print(f"added remote {r.name} ({r.shown})" + (f", project {r.scope}" if r.scope else ""))
        return 0
    if ctx.args.action == "remove":
        eng.remote_remove(ctx.args.name)
        print(f"removed remote {ctx.args.name} (nothing was deleted on it)")
        return 0
    remotes = eng.remotes()
    if ctx.json:
        print_json([{"name": r.name, "url": r.shown, "scope": r.scope, "personal": r.personal}
                    for r in remotes])
    elif not remotes:
        print("no remotes: memdeck remote add NAME URL")
    for r in remotes if not ctx.json else ():
        print(f"{r.name}\t{r.shown}" + (f"\tproject {r.scope}" if r.scope else ""))
    return 0


def cmd_push(ctx: Context) -> int:
    r = ctx.engine.push(ctx.args.remote)
    if ctx.json:
        print_json({"remote": r.remote, "commit": r.commit, "files": r.files,
                    "merged_pulls": r.merged_pulls, "message": r.message})
    else:
        print(r.message + (f" ({r.commit[:12]})" if r.commit else ""))
    return 0


def cmd_pull(ctx: Context) -> int:
    p = ctx.engine.pull(ctx.args.remote)
    if ctx.json:
        print_json(None if p is None else p.to_json())
        return 0
    if p is None:
        print("already up to date: this machine has everything the remote has")
        return 0
    print(f"proposal {p.id}: {len(p.files)} files from {p.backend[5:]}; review it in the "
          f"app or with memdeck diff {p.id}, then memdeck accept {p.id}")
    for line in p.problems:
        print(f"  {line}")
    return 0


def cmd_resolve(ctx: Context) -> int:
    eng = ctx.engine
    if ctx.args.n is None:
        left = eng.pull_conflicts(ctx.args.proposal)
    elif ctx.args.take is None:
        raise UsageError("say which lines to take: ours, theirs or both")
    else:
        left = eng.resolve_conflict(ctx.args.proposal, ctx.args.n, ctx.args.take)
        print(f"resolved conflict {ctx.args.n}; {len(left)} left")
    if ctx.json:
        print_json([c.to_json() for c in left])
        return 0
    for i, c in enumerate(left, 1):
        print(f"conflict {i}: {c.path} line {c.at + 1}")
        print("  this machine:\n" + "".join(f"    {x}\n" for x in c.ours).rstrip("\n"))
        print("  the remote:\n" + "".join(f"    {x}\n" for x in c.theirs).rstrip("\n"))
    return 0
