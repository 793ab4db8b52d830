"""`memdeck trace FILE:LINE`: a memory line's evidence chain, one block per step
(docs/architecture.md "The read path"). `--json` prints `Trace.to_json()`, the data the app
shows."""

from __future__ import annotations

from typing import Any

from memdeck.engine import iso_utc

from .base import Add, Context, UsageError, print_json


def register(add: Add) -> None:
    p = add("trace", "trace a memory line back to its evidence: task block, rollout summary, "
                     "stage-1 row, session and turn, and who last changed it", cmd_trace)
    p.add_argument("location", metavar="FILE:LINE",
                   help="a file of the memory folder and a 1-based line, e.g. MEMORY.md:42")


def parse_location(text: str) -> tuple[str, int] | None:
    """`MEMORY.md:42` -> ("MEMORY.md", 42); None when it is not FILE:LINE."""
    path, sep, line = text.rpartition(":")
    line = line.strip()
    if not sep or not path.strip() or not line.isdigit() or int(line) < 1:
        return None
    return path.strip(), int(line)


def cmd_trace(ctx: Context) -> int:
    from memdeck.engine import NotFound

    loc = parse_location(ctx.args.location)
    if loc is None:
        raise UsageError(f"{ctx.args.location!r} is not FILE:LINE (a memory file and a line "
                         "from 1, e.g. MEMORY.md:42)")
    try:
        t = ctx.engine.trace(*loc, refresh=True)
    except NotFound as e:  # a missing file, a line out of range, a path outside
        raise UsageError(str(e)) from None
    if ctx.json:
        print_json(t.to_json())
    else:
        print_trace(t)
    return 0


def _lines(r: Any) -> str:
    return f"lines {r[0]}-{r[1]}" if r else ""


def print_trace(t: Any) -> None:
    steps: list[list[str]] = []
    steps.append([f"{t.path}:{t.line} (of {t.lines}, memory {t.version}, {t.root})",
                  f"  {t.text.strip() or '(empty line)'}"])
    b = t.block
    block = [f"block: {b.kind}"]
    if b.group:
        block.append(f"  group: {b.group} ({_lines(b.group_lines)})")
    if b.section:
        block.append(f"  section: {b.section} ({_lines(b.section_lines)})")
    if b.note:
        block.append(f"  {b.note}")
    block.append(f"  rollout summary files: {len(b.refs)}" if b.refs
                 else "  lists no rollout summary file")
    steps.append(block)
    for k, s in enumerate(t.summaries, 1):
        r = s.ref
        head = [f"summary {k}: {r.file}" + ("" if s.exists else "  (missing: no such file "
                                                                 "in the memory folder)")]
        if r.line:
            head.append(f"  listed on line {r.line}"
                        + "".join(f"; {f}={v}" for f, v in (("cwd", r.cwd),
                                                            ("updated_at", r.updated_at))
                                  if v))
        if r.matched_keywords:
            head.append(f"  shares keywords: {', '.join(r.matched_keywords)}")
        head.append(f"  thread: {s.thread_id or '?'}"
                    + (f" (from the {s.thread_id_from})" if s.thread_id_from else ""))
        steps.append(head)
        row = s.stage1
        if row is None:
            steps.append([f"  stage-1 row: {s.stage1_note}"])
        else:
            used = (f"cited {row.usage_count}×, last {iso_utc(row.last_usage)}"
                    if row.usage_count else "never cited")
            sel = "selected for phase 2" if row.selected_for_phase2 else "not selected"
            block = [f"  stage-1 row: {used}; {sel}; extracted {iso_utc(row.generated_at)}"]
            block += [f"    {x}" for x in row.raw_memory_head.splitlines()]
            if row.raw_memory_lines > len(row.raw_memory_head.splitlines()):
                block.append(f"    … {row.raw_memory_lines} lines in all")
            steps.append(block)
        ses = s.session
        block = ([f"  session: {ses.thread_id} · {ses.project} · {ses.started_at or '?'}"
                  + (" (archived)" if ses.archived else ""), f"    {ses.rollout_path}"]
                 if ses else [f"  session: {s.session_note or 'not found'}"])
        if ses and s.session_note:
            block.append(f"    {s.session_note}")
        m = s.turn
        if m.item_index is None:
            block.append(f"  turn: {m.note}")
        else:
            block.append(f"  turn: item {m.item_index} ({m.title}, {m.timestamp or '?'}) "
                         f"[{m.confidence}] {m.note}")
            block.append(f"    {m.excerpt}")
        steps.append(block)
    c = t.change
    if c.commit:
        who = [f"last changed: {c.origin_label} · {c.commit[:12]} · {iso_utc(c.time)}",
               f"  {c.summary}"]
        if c.person_edited:
            who.append("  a person edited this line")
    else:
        who = [f"last changed: {c.note}"]
    steps.append(who)
    print("\n\n".join("\n".join(s) for s in steps))

