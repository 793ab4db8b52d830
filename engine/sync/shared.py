"""What of the memory folder travels to a remote, and how it comes back.

The shared form of a memory root leaves out what only this machine knows: `raw_memories.md`
(rebuilt by every consolidation from this home's database), Codex's baseline `.git`,
memdeck's own folder and imported agents' resources; and in what it keeps, the lines and
fields that name this machine's sessions: a rollout summary's `thread_id:` and
`rollout_path:` header lines, and `thread_id=` / `rollout_path=` in MEMORY.md's and the
summary index's references. Usage counts live in Codex's database, not in files: they
never travel.

Coming back (`unshared`), a file whose shared form is what this machine already has in
shared form is kept as this machine has it, fields and all; only what a merge changed is
written from the shared text.

A remote added with a scope (`--scope PROJECT`) gets only that project: its MEMORY.md task
groups, its rollout summaries, its index blocks, and the General Tips lines that name it;
User Profile and User preferences stay home unless the remote was added with
`--personal`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

LEFT_OUT = ("raw_memories.md",)
LEFT_OUT_DIRS = (".git", "memdeck", "extensions")
_HEADER = re.compile(r"^(thread_id|rollout_path):[^\n]*\n", re.M)
_FIELD = re.compile(r"[,;]?\s*\b(rollout_path|thread_id)=[^,;)\n]*")
_GROUP = re.compile(r"(?m)^# Task Group:")


def read_root(root: Path) -> dict[str, bytes]:
    """The root's files that travel (relative POSIX path → bytes)."""
    out: dict[str, bytes] = {}
    if not root.is_dir():
        return out
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_symlink() or not p.is_file() or rel.parts[0] in LEFT_OUT_DIRS \
                or rel.as_posix() in LEFT_OUT or any(x.startswith(".") for x in rel.parts):
            continue
        out[rel.as_posix()] = p.read_bytes()
    return out


def shared_text(rel: str, text: str) -> str:
    """One file's shared form (module docstring)."""
    if rel.startswith("rollout_summaries/"):
        head, sep, body = text.partition("\n\n")
        return _HEADER.sub("", head + "\n").rstrip("\n") + sep + body
    if rel in ("MEMORY.md", "memory_summary.md"):
        return "\n".join(_FIELD.sub("", ln) if "rollout_summaries/" in ln else ln
                         for ln in text.split("\n"))
    return text


def shared(files: Mapping[str, bytes]) -> dict[str, bytes]:
    out = {}
    for rel, data in files.items():
        try:
            out[rel] = shared_text(rel, data.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:
            out[rel] = data  # not text: travels as it is
    return out


def unshared(merged: Mapping[str, bytes], local: Mapping[str, bytes]) -> dict[str, bytes]:
    """The merged shared files as this machine writes them: a file whose shared form is
    unchanged is this machine's own bytes; in a changed one, a line that is the shared form
    of one of this machine's lines is that line again (its session fields back)."""
    local_shared = shared(local)
    out: dict[str, bytes] = {}
    for rel, data in merged.items():
        if local_shared.get(rel) == data or rel not in local:
            out[rel] = local[rel] if local_shared.get(rel) == data else data
            continue
        try:
            mine = local[rel].decode("utf-8").split("\n")
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            out[rel] = data
            continue
        back = {shared_text(rel, ln): ln for ln in mine if shared_text(rel, ln) != ln}
        out[rel] = "\n".join(back.get(ln, ln) for ln in text.split("\n")).encode("utf-8")
    return out


# -- scope ------------------------------------------------------------------------------------
def _under(cwd: str, project: str) -> bool:
    a, b = cwd.replace("\\", "/").rstrip("/"), project.replace("\\", "/").rstrip("/")
    return a == b or a.startswith(b + "/") or PurePosixPath(a).name == b


def scoped(files: Mapping[str, bytes], project: str, personal: bool = False
           ) -> dict[str, bytes]:
    """Only `project`'s part of the shared files (module docstring)."""
    out: dict[str, bytes] = {}
    for rel, data in files.items():
        text = data.decode("utf-8", errors="replace")
        if rel.startswith("rollout_summaries/"):
            cwd = re.search(r"(?m)^cwd:\s*(.+)$", text)
            if cwd and _under(cwd.group(1).strip(), project):
                out[rel] = data
        elif rel == "MEMORY.md":
            groups = re.split(r"(?m)^(?=# Task Group:)", text)
            kept = [g for g in groups if _GROUP.match(g) and any(
                _under(m.group(1).strip(), project)
                for m in re.finditer(r"(?m)^applies_to:\s*cwd=([^;\n]*)", g))]
            if kept:
                out[rel] = "".join(kept).encode("utf-8")
        elif rel == "memory_summary.md":
            out[rel] = _scoped_summary(text, project, personal).encode("utf-8")
        elif rel.startswith("skills/") and personal:
            out[rel] = data
    return out


def _scoped_summary(text: str, project: str, personal: bool) -> str:
    out: list[str] = []
    section = ""
    keep_block = True
    for line in text.split("\n"):
        if line.startswith("## "):
            section, keep_block = line.strip(), True
            out.append(line)
            continue
        if line.startswith("### "):
            head = line[4:].strip()
            keep_block = head == "Older Memory Topics" or _under(head, project)
            if keep_block:
                out.append(line)
            continue
        if section in ("## User Profile", "## User preferences") and not personal:
            continue
        if section == "## General Tips" and line.startswith("- ") \
                and PurePosixPath(project.replace("\\", "/")).name not in line:
            continue
        if section == "## What's in Memory" and not keep_block:
            continue
        out.append(line)
    return "\n".join(out)
