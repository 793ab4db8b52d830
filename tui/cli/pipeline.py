"""The pipeline's commands of `memdeck`: phase 1 (extract, memories, citations, forget), phase 2
(consolidate, proposals, diff, accept, reject), the watcher, and the memory folder's history,
restores, resets and backups."""

from __future__ import annotations

import json
import sys
from typing import Any

from memdeck.engine import iso_utc, short_id_length, time_of_day

from .base import Add, Context, UsageError, print_json, warn

BACKEND_LABEL = {"offline": "offline (heuristic, no model)", "openai": "openai"}


def register(add: Add) -> None:
    p = add("extract", "phase 1: extract a raw memory from eligible sessions (or the named)",
            cmd_extract)
    p.add_argument("ids", nargs="*", metavar="ID",
                   help="sessions to extract now, whatever their idle time")
    p.add_argument("--backend", choices=("offline", "openai"),
                   help="default: memdeck.backend (auto: openai when configured)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N sessions")
    add("memories", "the raw memories phase 1 produced (stage-1 rows)", cmd_memories)
    add("citations", "which memory lines later sessions cited, and how often", cmd_citations)
    p = add("forget", "forget a session: memories off for it, its raw memory deleted", cmd_forget)
    p.add_argument("id", help="session id, a unique prefix of it, or the rollout path")
    p = add("consolidate", "phase 2 into a proposal to review (nothing changes until you "
                           "accept it)", cmd_consolidate)
    p.add_argument("--backend", choices=("offline", "openai"),
                   help="default: offline; openai runs a tool-using agent on the workspace")
    add("proposals", "consolidation proposals and their status", cmd_proposals)
    p = add("diff", "the changes a proposal would make", cmd_diff)
    p.add_argument("id")
    p = add("accept", "apply a proposal to the memory folder (all of it, or some files)",
            cmd_accept)
    p.add_argument("id")
    p.add_argument("--file", action="append", metavar="PATH", dest="files",
                   help="accept only this file's change (repeatable)")
    p = add("reject", "discard a proposal, with a reason", cmd_reject)
    p.add_argument("id")
    p.add_argument("--reason", metavar="TEXT")
    p = add("watch", "keep the index and history current; with memdeck.auto_extract on, "
                     "extract sessions as they go idle (Ctrl-C stops)", cmd_watch)
    p.add_argument("--tick", type=float, default=60.0, metavar="SECONDS",
                   help="how often idle sessions are looked for (default 60)")
    p = add("history", "the memory folder's history: every state, who made it", cmd_history)
    p.add_argument("action", nargs="?", choices=("show",), help="show one commit's diff")
    p.add_argument("commit", nargs="?", help="with show: the commit")
    p.add_argument("--purge-secret", metavar="TEXT",
                   help="replace TEXT with [REDACTED_SECRET] in every state history keeps, "
                        "Codex's baseline, backups and proposals (remove it from the memory "
                        "folder first)")
    p = add("restore", "make the memory folder what it was at a commit (a new commit)", cmd_restore)
    p.add_argument("commit")
    p = add("reset", "back up, then clear all memories exactly as Codex's reset does", cmd_reset)
    p.add_argument("--yes", action="store_true", help="do not ask")
    add("backups", "the backups taken before each reset or restore", cmd_backups)
    p = add("restore-backup", "put a backup back, byte for byte (the current state is "
                              "backed up first)", cmd_restore_backup)
    p.add_argument("id", help="a backup id from `memdeck backups`")


def cmd_extract(ctx: Context) -> int:
    """Exit 0 when every chosen session was done (or had nothing to do), 1 when one failed or
    was refused, or when sessions remain because no extraction slot came free. Sessions past
    `--limit` are counted and named on stderr, but they are what the user asked for: exit 0."""
    args = ctx.args
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    engine = ctx.engine
    interactive = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int, r: Any) -> None:
        if interactive:
            print(f"\r  {done}/{total} sessions", end="", file=sys.stderr, flush=True)

    def waiting(what: str) -> None:  # a run that waits says why, instead of looking hung
        if interactive:
            print(f"\r\033[K  {what}", file=sys.stderr, flush=True)

    report = engine.extract(args.ids or None, args.backend, args.limit, progress=progress,
                            on_wait=waiting)
    if interactive and report.results:
        print(file=sys.stderr)
    warn(report.warnings)
    past_limit = report.past_limit
    remain = _remaining(report, past_limit, args.limit)
    if args.json:
        print_json({
            "backend": report.backend, "model": report.model, "version": report.version,
            "pipeline_db": report.pipeline_db, "pruned": report.pruned,
            "pruned_threads": list(report.pruned_threads),
            "cancelled": report.cancelled,
            "remaining": report.remaining + past_limit, "remaining_reason": remain,
            "results": [{"thread_id": r.thread_id, "rollout_path": r.rollout_path,
                         "outcome": r.outcome, "detail": r.detail, "remains": r.remains}
                        for r in report.results],
        })
    else:
        print(f"backend: {BACKEND_LABEL.get(report.backend, report.backend)}, model "
              f"{report.model} · memory {report.version} · pipeline DB {report.pipeline_db}")
        width = short_id_length(r.thread_id for r in report.results)
        for r in report.results:
            print(f"{r.outcome:10} {r.thread_id[:width]:{width}}  {r.detail}")
        counts = ", ".join(f"{report.count(k)} {k.replace('_', ' ')}" for k in
                           ("extracted", "no_output", "failed", "skipped", "refused")
                           if report.count(k))
        if report.remaining + past_limit:
            counts += f"; {report.remaining + past_limit} remain"
        print(counts or "nothing to extract: no session is eligible "
                        "(see `memdeck sessions --status eligible`)")
        if report.pruned:
            print(f"pruned {report.pruned} raw memor{'y' if report.pruned == 1 else 'ies'} "
                  "unused for more than max_unused_days (`memdeck sessions --status pruned`)")
    failed = [r for r in report.results if r.outcome in ("failed", "refused")]
    for r in failed[:1]:
        print(f"memdeck: {r.outcome} {r.thread_id[:8]}: {r.detail}", file=sys.stderr)
    if remain:
        print(f"memdeck: {remain}", file=sys.stderr)
    return 1 if failed or report.remaining else 0


def _remaining(report: Any, past_limit: int, limit: int | None) -> str:
    """One line: how many sessions remain and why; "" when none does."""
    waited = report.remaining
    total = waited + past_limit
    if not total:
        return ""
    noun = "session remains" if total == 1 else "sessions remain"
    parts = []
    if past_limit:
        parts.append(f"{past_limit} past --limit {limit}" if waited else f"--limit {limit}")
    if waited:
        why = report.gave_up or next(r.detail for r in report.results if r.remains)
        parts.append(f"{waited} because {why}" if past_limit else why)
    return (f"{total} {noun}: {'; '.join(parts)}; run `memdeck extract` again"
            + (" once those leases end" if waited else ""))


def cmd_memories(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    memories = engine.memories()
    rows = memories.rows
    warn(memories.warnings)
    if args.json:
        print_json([{
            "thread_id": m.thread_id, "rollout_slug": m.rollout_slug,
            "raw_memory": m.raw_memory, "rollout_summary": m.rollout_summary,
            "generated_at": iso_utc(m.generated_at), "usage_count": m.usage_count or 0,
            "last_usage": iso_utc(m.last_usage),
            "selected_for_phase2": m.selected_for_phase2,
            "citation_note": m.citation_note or None,  # why usage_count is lower, as the app says
        } for m in rows])
        return 0
    if not rows:
        print("no raw memories yet (run `memdeck extract`)")
        return 0
    where = engine.home_info()
    print(f"memory {where.memory_version} · {where.pipeline_db}", file=sys.stderr)
    width = short_id_length(m.thread_id for m in rows)
    for m in rows:
        sel = "in memory" if m.selected_for_phase2 else "pending consolidation"
        first = next((ln for ln in m.raw_memory.splitlines()
                      if ln.startswith("description:")), "").removeprefix("description: ")
        if not m.raw_memory.strip():  # v2 keeps only the summary: show its first line
            first = next((ln.lstrip("# ").strip() for ln in m.rollout_summary.splitlines()
                          if ln.strip()), "")
        print(f"{m.thread_id[:width]}  {iso_utc(m.generated_at)}  cited {m.usage_count or 0}×  "
              f"{sel:21}  {m.rollout_slug or '-'}  {first[:60]}")
        if m.citation_note:
            print(f"{'':{width}}  {m.citation_note}")
    return 0


def cmd_citations(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    report = engine.citations()
    if args.json:
        print_json(report.to_json())
        return 0
    if not report.events:
        print("no session has cited memory yet")
        return 0
    print(f"{len(report.events)} citing message(s); memory lines by use:")
    for u in sorted(report.lines, key=lambda u: (-u.count, u.path, u.line_start)):
        print(f"  {u.count:>3}×  {u.path}:{u.line_start}-{u.line_end}  "
              f"last {iso_utc(u.last_cited)}")
    if report.threads:
        print("raw memories (threads) cited:")
        for tid, n in sorted(report.threads.items(), key=lambda kv: -kv[1]):
            print(f"  {n:>3}×  {tid}")
    return 0


def cmd_forget(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    r = engine.forget(args.id)
    if args.json:
        print_json({"thread_id": r.thread_id, "rollout_path": r.rollout_path,
                    "had_memory": r.had_memory, "phase2_enqueued": r.phase2_enqueued,
                    "already_disabled": r.already_disabled})
        return 0
    mode = ("memory mode was already disabled" if r.already_disabled
            else "memory mode set to disabled in its rollout")
    mem = ("its raw memory was deleted" if r.had_memory else "it had no raw memory")
    tail = ("; it was in the consolidated memory, so the next consolidation removes it"
            if r.phase2_enqueued else "")
    print(f"forgot {r.thread_id}: {mode}, {mem}{tail}")
    return 0


def cmd_reset(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    if not args.yes:
        if not sys.stdin.isatty():
            from memdeck.engine import MemdeckError

            raise MemdeckError("reset needs confirmation: run it on a terminal or pass --yes")
        print(f"This deletes every memory in {engine.root} (memories/, memories_v2/, "
              "their .git baselines, raw memories and jobs). A backup is taken first.",
              file=sys.stderr)
        answer = input("Type 'reset' to confirm: ").strip()
        if answer != "reset":
            print("memdeck: not reset", file=sys.stderr)
            return 1
    b = engine.reset()
    if args.json:
        print_json({"backup": {"id": b.id, "created_at": iso_utc(b.created_at),
                               "path": str(b.path)}})
    else:
        print(f"reset done; backup {b.id} at {b.path} (`memdeck restore-backup {b.id}`)")
    return 0


def cmd_backups(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    rows = engine.backups()
    if args.json:
        print_json([{"id": b.id, "created_at": iso_utc(b.created_at), "reason": b.reason,
                     "path": str(b.path)} for b in rows])
    elif not rows:
        print("no backups yet (one is taken before every reset)")
    else:
        for b in rows:
            print(f"{b.id}  {iso_utc(b.created_at)}  {b.reason_text}  {b.path}")
    return 0


def cmd_restore_backup(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    safety = engine.restore_backup(args.id)
    if args.json:
        print_json({"restored": args.id, "previous_state_backup": safety.id})
    else:
        print(f"restored {args.id}; the state it replaced is backup {safety.id}")
    return 0


def cmd_history(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    if args.purge_secret is not None:
        done = engine.purge_secret(args.purge_secret)
        if args.json:
            print_json({"commits": done.commits, "backups": done.backups, "files": done.files})
        else:
            print(f"purged: {done.commits} commits rewritten, {done.backups} backups and "
                  f"{done.files} proposal files; no copy of it is left in memdeck's folder")
        return 0
    if args.action == "show":
        if not args.commit:
                raise UsageError("history show needs a COMMIT")
        entry, patch = engine.history_show(args.commit)
        if args.json:
            print_json({"commit": entry.commit, "time": iso_utc(entry.time),
                        "origin": entry.origin, "summary": entry.summary, "diff": patch})
        else:
            print(f"{entry.commit[:12]}  {iso_utc(entry.time)}  {entry.origin_label}: "
                  f"{entry.summary}\n\n{patch}")
        return 0
    engine.record_outside_edits()  # the root as it is now, if the history does not hold it
    rows = engine.history()
    if args.json:
        print_json([{"commit": e.commit, "time": iso_utc(e.time), "origin": e.origin,
                     "summary": e.summary} for e in rows])
    else:
        for e in rows:
            print(f"{e.commit[:12]}  {iso_utc(e.time)}  {e.origin_label:13}  {e.summary}")
    return 0


def cmd_restore(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    new = engine.restore(args.commit)
    if args.json:
        print_json({"restored": args.commit, "commit": new})
    else:
        print(f"restored the memory folder to {args.commit[:12]} (new commit {new[:12]})")
    return 0


def _stat(p: Any) -> str:
    counts = {k: sum(1 for f in p.files if f["change"] == k) for k in "AMD"}
    return ", ".join(f"{n} {w}" for n, w in ((counts["A"], "added"), (counts["M"], "changed"),
                                                (counts["D"], "deleted")) if n) or "no files"


def cmd_consolidate(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    p = engine.consolidate(args.backend)
    if p is None:
        if args.json:
            print_json(None)
        else:
            print("nothing to consolidate: the memory already reflects every raw memory")
        return 0
    if args.json:
        print_json(p.to_json())
        return 0
    print(f"backend: {BACKEND_LABEL.get(p.backend, p.backend)}")
    print(f"proposal {p.id}: {_stat(p)} from {len(p.threads)} raw memories")
    for f in p.files:
        print(f"  {f['change']} {f['path']}")
    for s in p.secrets:
        print(f"  SECRET {s['kind']} at {s['path']}:{s['line']} ({s['preview']}): "
              "this proposal cannot be accepted as it is")
    for problem in p.problems:
        print(f"  INVALID: {problem}")
    if p.status == "accepted":
        print("auto-accepted (memdeck.auto_accept is on): the memory folder holds it now")
    else:
        print(f"review it with `memdeck diff {p.id}`, then `memdeck accept {p.id}` or "
              f"`memdeck reject {p.id}`")
    return 0


def cmd_proposals(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    rows = engine.proposals()
    if args.json:
        print_json([p.to_json() for p in rows])
    elif not rows:
        print("no proposals yet (run `memdeck consolidate`)")
    else:
        for p in rows:
            print(f"{p.id}  {p.status:9} {iso_utc(p.created_at)}  {p.backend:8} {_stat(p)}"
                  + (f"  ({len(p.secrets)} secrets)" if p.secrets else ""))
    return 0


def cmd_diff(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    text = engine.proposal_diff(args.id)
    if args.json:
        print_json({"id": args.id, "diff": text})
    else:
        sys.stdout.write(text)
    return 0


def cmd_reject(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    p = engine.reject(args.id, args.reason)
    if args.json:
        print_json(p.to_json())
    else:
        print(f"rejected {p.id}" + (f": {p.reason}" if p.reason else ""))
    return 0


def cmd_accept(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    p = engine.accept(args.id, args.files)
    if args.json:
        print_json(p.to_json())
    else:
        which = f"{len(args.files)} of its files" if args.files else "all of it"
        print(f"accepted {p.id} ({which}); the memory folder now holds it, with Codex's "
              "baseline reset and the change in `memdeck history`")
    return 0


def cmd_watch(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    def show(event: Any) -> None:
        now = engine.clock.now()
        if args.json:
            sys.stdout.write(json.dumps({"time": iso_utc(now), "kind": event.kind,
                                         "detail": event.detail}) + "\n")
        else:
            sys.stdout.write(f"{time_of_day(now)}  {event.kind:15} {event.detail}\n")
        sys.stdout.flush()

    auto = engine.config_get("memdeck.auto_extract").value
    print(f"memdeck: watching {engine.root} (auto_extract {'on' if auto else 'off'}); "
          "Ctrl-C stops", file=sys.stderr)
    engine.watcher(show, tick=max(1.0, args.tick)).run()
    return 0
