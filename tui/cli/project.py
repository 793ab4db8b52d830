"""`memdeck project [PATH]`: memory on or off for one project (engine/codex/project_memory.py).
Codex reads `<project>/.codex/config.toml` for a trusted project, so `--use off` keeps the
memory summary out of its sessions and `--generate off` keeps its new sessions from becoming
memories; for a project Codex does not trust, the nearest is `--forget-sessions`."""

from __future__ import annotations

import os

from .base import Add, Context, UsageError, print_json

SWITCH = {"on": True, "off": False}


def register(add: Add) -> None:
    p = add("project", "memory on or off for one project (its .codex/config.toml, as Codex "
                       "reads it), or forget what its sessions taught", cmd_project)
    p.add_argument("path", nargs="?", help="a folder of the project (default: this one)")
    p.add_argument("--use", choices=("on", "off"), help="show the memory to its sessions")
    p.add_argument("--generate", choices=("on", "off"),
                   help="let its new sessions become memories")
    p.add_argument("--forget-sessions", action="store_true",
                   help="forget every session taught in it (memory off for each, its raw "
                        "memory deleted; the next consolidation takes it out)")


def cmd_project(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    path = args.path or os.getcwd()
    values = {key: SWITCH[v] for key, v in (("use_memories", args.use),
                                            ("generate_memories", args.generate)) if v}
    if values and args.forget_sessions:
        raise UsageError("--forget-sessions goes alone, without --use or --generate")
    forgotten = []
    if args.forget_sessions:
        for s in engine.project_sessions(path):
            if s.memory_mode == "enabled" or s.status == "extracted":  # not forgotten yet
                forgotten.append(engine.forget(s.id or s.rollout_path))
    state = engine.set_project_memory(path, values) if values else engine.project_memory(path)
    if ctx.json:
        print_json({**state.to_json(), "forgot": [r.thread_id for r in forgotten]})
        return 0
    if args.forget_sessions:
        print(f"forgot {len(forgotten)} session(s) of {state.folder}"
              + ("; the next consolidation takes what they taught out of MEMORY.md"
                 if any(r.phase2_enqueued for r in forgotten) else ""))
        return 0
    print(state.folder)
    read = ("Codex reads it" if state.trusted else
            "Codex ignores it: the project is not trusted in config.toml" if state.trust is None
            else f"Codex ignores it: trust_level = {state.trust!r}")
    print(f"  {state.config}: {read}")
    for key, what in (("use_memories", "memory shown to its sessions"),
                      ("generate_memories", "its new sessions become memories")):
        where = "this project" if state.trusted and key in state.project_keys else "config.toml"
        print(f"  {what}: {'yes' if state.effective(key) else 'no'} ({key}, from {where})")
    return 0
