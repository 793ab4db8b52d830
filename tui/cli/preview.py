"""Read-path commands of `memdeck`: preview (the next session's memory), usage (a memory
file's gutter, and the sessions that cited one line)."""

from __future__ import annotations

from memdeck.engine import iso_utc

from .base import Add, Context, print_json


def register(add: Add) -> None:
    add("preview", "what the agent will be given at the start of its next session, and how "
                   "it differs from what the last session received", cmd_preview)
    p = add("usage", "how often each line of a memory file was cited, and when it drops out",
            cmd_usage)
    p.add_argument("file", help="a file of the memory folder, e.g. MEMORY.md")
    p.add_argument("--line", type=int, metavar="N",
                   help="instead: the sessions that cited line N")


def cmd_preview(ctx: Context) -> int:
    args = ctx.args
    p = ctx.engine.preview()
    if args.json:
        print_json(p.to_json())
        return 0
    n = p.next_session
    print(f"memory {n.version} · {p.root}")
    print(n.note)
    if n.text:
        print()
        print(n.text)
        print()
    print(p.comparison)
    if p.diff:
        print(p.diff, end="")
    return 0


def cmd_usage(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    if args.line is not None:
        cited = engine.citing_sessions(args.file, args.line)
        if args.json:
            print_json([{"thread_id": c.thread_id, "time": iso_utc(c.time),
                         "project": c.project, "message": c.message,
                         "item_index": c.item_index, "note": c.note,
                         "rollout_path": c.rollout_path} for c in cited])
            return 0
        if not cited:
            print(f"no session has cited {args.file}:{args.line}")
        for c in cited:
            print(f"{iso_utc(c.time) or '?':20}  {c.thread_id or '?'}  {c.project or '-'}  "
                  f"item {c.item_index}  [{c.note}]  {c.message}")
        return 0
    u = engine.line_usage(args.file)
    if args.json:
        print_json(u.to_json())
        return 0
    print(f"{u.path} · memory {u.version} · {u.events} citing messages"
          + (f", mapped from {u.history_versions} older versions" if u.history_versions else ""))
    for s in u.lines:
        count = "·" if s.never_cited else f"{s.count}×"
        last = (iso_utc(s.last_cited) or "")[:10]
        print(f"{s.line:>5} {count:>5} {last:10}  {s.text}")
    drops = sorted({s.drop_note for s in u.lines if s.drop_note})
    for note in drops:
        first = next(s.line for s in u.lines if s.drop_note == note)
        print(f"from line {first}: {note}")
    for r in u.removed:
        where = f"lines {r.line_start}-{r.line_end}" + (f" of {r.commit[:12]}" if r.commit
                                                       else "")
        text = r.text.splitlines()[0] if r.text else "(past the end of the file)"
        print(f"cited, since removed: {where}, {r.count}×, last "
              f"{(iso_utc(r.last_cited) or '?')[:10]}: {text}")
    return 0

