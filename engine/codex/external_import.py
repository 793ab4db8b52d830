"""Codex's import of another agent's memory, the `external_agent_import` extension
(docs/codex-format.md "External-agent memory import").

Codex 0.171 (feature `external_agent_memory_import`) copies a Claude Code project's memory
into `<root>/extensions/external_agent_import/resources/<project key>/`, the source files as
they were plus a `scope.json` (`{"cwd":"<the project's folder>"}`), and writes the extension's
`instructions.md`. Its consolidation reads them and must never change them; its next import of
a project replaces that project's folder whole. So for memdeck these files are Codex's:
shown with their scope, never edited, and carried through every change of the folder as they
are (`carry_over`), except reset, which clears them as Codex's reset does.

What counts as imported (`is_imported`): the extension's `instructions.md` and every file in a
project folder under `resources/`. A file lying directly in `resources/` is not one Codex's
import writes: it is an ordinary extension resource, pruned by age like any other
(docs/codex-format.md "Extensions and notes").
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

EXTENSION = "external_agent_import"
EXTENSION_DIR = PurePosixPath("extensions") / EXTENSION
RESOURCES_DIR = EXTENSION_DIR / "resources"
INSTRUCTIONS = (EXTENSION_DIR / "instructions.md").as_posix()
SCOPE_FILE = "scope.json"
SCOPE_MAX = 64 * 1024  # bytes of scope.json read; Codex writes one short line
# why memdeck shows an imported file read-only and refuses to write it
READ_ONLY = "imported by Codex from another agent's memory; its next import replaces it"


@dataclass(frozen=True)
class ImportScope:
    """Which project an imported file belongs to, and the folder its memory applies to."""

    project: str  # the source project's key: its folder under resources/
    cwd: str | None  # scope.json's `cwd`; None when it could not be read
    problem: str | None = None  # why not (no scope.json, not JSON, no cwd), else None


def is_imported(rel: str) -> bool:
    """Whether `rel` (relative to the memory root, `/`-separated) is a file Codex's import
    wrote: the extension's instructions.md or a file inside a project folder."""
    parts = PurePosixPath(rel).parts
    return rel == INSTRUCTIONS or (len(parts) >= 5 and parts[:3] == RESOURCES_DIR.parts)


def project_of(rel: str) -> str | None:
    """The project key of an imported resource, None for anything else."""
    parts = PurePosixPath(rel).parts
    return parts[3] if len(parts) >= 5 and parts[:3] == RESOURCES_DIR.parts else None


def read_scope(root: Path, project: str) -> ImportScope:
    """`resources/<project>/scope.json` of `root`, read without following a symlink."""
    path = root.joinpath(*RESOURCES_DIR.parts, project, SCOPE_FILE)
    where = f"{RESOURCES_DIR.as_posix()}/{project}/{SCOPE_FILE}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return ImportScope(project, None, f"no {where}")
    except OSError as e:
        return ImportScope(project, None, f"cannot read {where}: {e.strerror or e}")
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return ImportScope(project, None, f"{where} is not a regular file")
        data = f.read(SCOPE_MAX + 1)
    try:
        value = json.loads(data.decode("utf-8")) if len(data) <= SCOPE_MAX else None
    except (UnicodeDecodeError, ValueError):
        value = None
    cwd = value.get("cwd") if isinstance(value, dict) else None
    if not isinstance(cwd, str) or not cwd:
        return ImportScope(project, None, f"{where} names no cwd")
    return ImportScope(project, cwd)


def scope_of(root: Path, rel: str, known: dict[str, ImportScope] | None = None
             ) -> ImportScope | None:
    """The scope of the imported resource `rel`, None for any other file; `known` caches
    each project's scope.json across the files of one listing."""
    project = project_of(rel)
    if project is None:
        return None
    known = {} if known is None else known
    if project not in known:
        known[project] = read_scope(root, project)
    return known[project]


def imported_files(root: Path) -> dict[str, bytes]:
    """Every imported regular file under `root` (relative path → bytes). Symlinks are
    neither followed nor listed (Codex refuses them in the memory folder)."""
    out: dict[str, bytes] = {}
    ext = root.joinpath(*EXTENSION_DIR.parts)
    if not _real_dir(root.joinpath(*EXTENSION_DIR.parts[:1])) or not _real_dir(ext):
        return out
    instructions = root / INSTRUCTIONS
    if _regular(instructions):
        out[INSTRUCTIONS] = instructions.read_bytes()
    resources = root.joinpath(*RESOURCES_DIR.parts)
    if not _real_dir(resources):
        return out
    for project in sorted(resources.iterdir()):
        if not _real_dir(project):
            continue
        for dirpath, dirnames, filenames in os.walk(project):
            base = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if _real_dir(base / d))
            for name in sorted(filenames):
                if _regular(base / name):
                    out[(base / name).relative_to(root).as_posix()] = (base / name).read_bytes()
    return out


def import_changes(live: Path, new: Path) -> list[str]:
    """What `new` (a workspace or a staged root) does to the imported files of `live`: one
    line per file it deletes, changes or adds (docs/codex-format.md "External-agent memory
    import": a consolidation never edits, renames or deletes them)."""
    before, after = imported_files(live), imported_files(new)
    out = [f"deletes the imported file {rel}" for rel in before if rel not in after]
    out += [f"changes the imported file {rel}" for rel in before
            if rel in after and after[rel] != before[rel]]
    out += [f"adds {rel} to Codex's import" for rel in after if rel not in before]
    return out


def carry_over(live: Path, staged: Path) -> None:
    """Make `staged`'s imported files exactly `live`'s: the staged ones (from a history
    commit, say) removed, the live ones copied in byte for byte."""
    resources = staged.joinpath(*RESOURCES_DIR.parts)
    _remove(staged / INSTRUCTIONS)
    if _real_dir(resources):
        for project in resources.iterdir():
            if _real_dir(project):
                shutil.rmtree(project)
    for rel, data in imported_files(live).items():
        target = staged.joinpath(*PurePosixPath(rel).parts)
        for parent in reversed(target.relative_to(staged).parents[:-1]):
            p = staged / parent
            if p.is_symlink() or (p.exists() and not p.is_dir()):
                _remove(p)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        shutil.copystat(live.joinpath(*PurePosixPath(rel).parts), target)


def _real_dir(p: Path) -> bool:
    return p.is_dir() and not p.is_symlink()


def _regular(p: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(p).st_mode)
    except OSError:
        return False


def _remove(p: Path) -> None:
    if _real_dir(p):
        shutil.rmtree(p)
    elif os.path.lexists(p):
        p.unlink()
