"""`memdeck scope`: the scope map, every block of the memory with the projects it applies to
and was taught in, and the ones that leak (engine/read_path/scope_map.py). `--json` prints
the blocks as the app gets them; `--leaks` only the blocks that leak."""

from __future__ import annotations

from .base import Add, Context, print_json


def register(add: Add) -> None:
    p = add("scope", "the projects each memory block applies to and was taught in, and the "
                     "blocks that leak from one project into another", cmd_scope)
    p.add_argument("--leaks", action="store_true", help="only the blocks that leak")


def cmd_scope(ctx: Context) -> int:
    blocks = [b for b in ctx.engine.scope_map() if b.leaks or not ctx.args.leaks]
    if ctx.json:
        print_json([b.to_json() for b in blocks])
        return 0
    if not blocks:
        print("no block leaks" if ctx.args.leaks else "the memory folder has no blocks")
        return 0
    for b in blocks:
        applies = "every project" if b.applies_to == ["*"] else ", ".join(b.applies_to)
        print(f"{b.path}:{b.line}  {b.title}")
        print(f"  applies to: {applies}")
        if b.taught_in:
            print(f"  taught in: {', '.join(b.taught_in)}")
        for leak in b.leaks:
            print(f"  LEAKS: {leak}")
    leaking = sum(1 for b in blocks if b.leaks)
    print(f"\n{len(blocks)} blocks, {leaking} leaking")
    return 0
