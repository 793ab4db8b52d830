"""`memdeck remembered ID`: said vs remembered for one session — what the user and the agent
said, the raw memory extracted from it, the lines of today's memory it fed, and what happened
to each (docs/architecture.md "The read path"). `--json` prints `SaidRemembered.to_json()`,
the data the app's screen shows."""

from __future__ import annotations

from typing import Any

from .base import Add, Context, print_json

INDENT = "    "


def register(add: Add) -> None:
    p = add("remembered", "said vs remembered for one session: its messages, its raw memory, "
                          "the memory lines it fed today, and what was kept, reworded or "
                          "dropped", cmd_remembered)
    p.add_argument("id", help="session id, a unique prefix of it, or the rollout path")


def _mark(v: Any) -> str:
    return f"[{v.verdict}]" if v.verdict else "[-]"


def _indented(text: str) -> list[str]:
    return [INDENT + line for line in text.splitlines()] or [INDENT]


def _verdict_lines(lines: Any) -> list[str]:
    return [f"  {_mark(x.verdict)} {x.line}: {x.text.strip()}  ({x.verdict.note})"
            for x in lines]


def cmd_remembered(ctx: Context) -> int:
    r = ctx.engine.said_remembered(ctx.args.id)
    if ctx.json:
        print_json(r.to_json())
    else:
        print_said_remembered(r)
    return 0


def print_said_remembered(r: Any) -> None:
    c = r.counts()
    head = [f"{r.thread_id or r.rollout_path} · {r.project or '?'} · {r.started_at or '?'}",
            f"  {r.status}: {r.reason}",
            f"  memory {r.version} · {r.root}",
            f"  kept {c['kept']} · reworded {c['reworded']} · dropped {c['dropped']} "
            f"(compared with {r.verdict_basis})"]
    said = [f"said ({len(r.said)} messages)"]
    for m in r.said:
        said.append(f"  {_mark(m.verdict)} {m.kind} · item {m.item_index} · "
                    f"{m.verdict.note}")
        said += _indented(m.text)
    if not r.said:
        said.append("  nothing: the session has no messages of the user or the agent")
    raw = ["raw memory" + (f" (rollout summary, memory {r.version})"
                           if r.raw_memory == "" and r.rollout_summary else "")]
    if r.raw_note:
        raw.append(f"  {r.raw_note}")
    raw += _verdict_lines(r.raw_lines)
    if r.summary_lines:  # v1 keeps both; v2's summary is the raw memory above
        raw.append(f"  rollout summary (memory {r.version} keeps it beside the raw memory)")
        raw += _verdict_lines(r.summary_lines)
    fed = ["fed today"]
    if r.fed_note:
        fed.append(f"  {r.fed_note}")
    for f in r.fed:
        fed.append(f"  {f.location} — {f.why}"
                   + ("" if f.counted else " (not counted in the verdicts)"))
        fed += _indented(f.text)
    print("\n\n".join("\n".join(s) for s in (head, said, raw, fed)))

