"""`memdeck scope`: the scope map, every block of the memory with the projects it applies to
and was taught in, and the ones that leak (engine/read_path/scope_map.py). `--json` prints
the blocks as the app gets them; `--leaks` only the blocks that leak."""

from __future__ import annotations

from .base import Add, Context, print_json


def register(add: Add) -> None:
    p = add("scope", "the projects each memory block applies to and was taught in, and the "
                     "blocks that leak from one project into another", cmd_scope)
    p.add_argument("--leaks", action="store_true", help="only the blocks that leak")
    way = p.add_mutually_exclusive_group()
    way.add_argument("--narrow", type=int, metavar="LINE",
                     help="propose the MEMORY.md task group at LINE for the projects it was "
                          "taught in only (reviewed like any change)")
    way.add_argument("--widen", type=int, metavar="LINE",
                     help="propose the MEMORY.md task group at LINE for every project")


def cmd_scope(ctx: Context) -> int:
    line = ctx.args.narrow or ctx.args.widen
    if line is not None:
        p = ctx.engine.rescope(line, "narrow" if ctx.args.narrow else "widen")
        if ctx.json:
            print_json(p.to_json())
        else:
            print(f"proposal {p.id}: MEMORY.md:{line} {p.backend.split(':')[1]}ed; review it "
                  f"with `memdeck diff {p.id}`, then `memdeck accept {p.id}` (or Review in "
                  "the app)")
        return 0
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
