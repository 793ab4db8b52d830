"""The one path rule for everything a consolidation agent names (issue 12, item 8).

A model-given path is normalised once (`normalise`) and then resolved inside the workspace
root (`resolve`); every tool works only on the result, so a spelling (`./x`, `a//b`, a
trailing `/`) can never pass one check and fail another. Refused: anything that is not a
string, empty after trimming only in the sense of "the root" (`.`), absolute paths,
backslashes, `..` anywhere, hidden (`.`) components, NUL and other control characters,
invalid Unicode, a symlink at any point of the path inside the root, and anything whose real
path is outside the root.

What a resolved path may be used for (`PathKind`):

- `memory`: the memory the agent rewrites: read and write;
- `input`: this consolidation's inputs (`raw_memories.md`, `rollout_summaries/`) and the
  workspace diff: read only;
- `note`: the user's ad-hoc notes (`extensions/ad_hoc/notes/`, phase2/notes.py): read only,
  and never deleted;
- `imported`: Codex's import of another agent's memory (`extensions/external_agent_import/`,
  codex/external_import.py): read only, and never deleted;
- a folder that holds inputs or notes (`extensions/`, `extensions/ad_hoc/`) is read only too,
  so that a file written in its place cannot hide them.

Classification ignores case and Unicode normalisation form: on a case-insensitive file
system `Raw_Memories.md` is the same file.

`walk` and `entries` are the only ways a tool looks into a folder: they never follow, list or
descend into a symlink, a hidden entry, or anything that is neither a regular file nor a folder
(a FIFO would hang the reader).
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ..codex.external_import import EXTENSION_DIR
from ..codex.memory_layout import DIFF_FILE, NOTES_PREFIX

INPUT_FILES = ("raw_memories.md", DIFF_FILE)
INPUT_FOLDERS = ("rollout_summaries",)
NOTES_FOLDER = NOTES_PREFIX.rstrip("/")
IMPORT_FOLDER = EXTENSION_DIR.as_posix()
MAX_PATH = 1024  # characters; Linux refuses 4096 bytes, a model never needs this many


class PathRefused(ValueError):
    """Why a tool refused a path, worded for the model (it goes back as the tool result)."""


class PathKind(Enum):
    MEMORY = "memory"
    INPUT = "input"
    NOTE = "note"
    IMPORTED = "imported"
    HOLDS_PROTECTED = "folder of inputs or notes"


@dataclass(frozen=True)
class AgentPath:
    rel: str  # normalised, `/`-separated; "." is the root
    path: Path  # absolute, inside the root
    kind: PathKind

    @property
    def writable(self) -> bool:
        return self.kind is PathKind.MEMORY


def _kind_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _shown(text: str) -> str:
    return repr(text[:80] + ("…" if len(text) > 80 else ""))


def normalise(raw: object) -> str:
    """The path as `a/b/c` ("." for the root), or PathRefused. Pure: touches no file."""
    if raw is None:
        return "."
    if not isinstance(raw, str):
        raise PathRefused(f"path must be a string, got {_kind_of(raw)}")
    text = raw.strip()
    if len(text) > MAX_PATH:
        raise PathRefused(f"path is longer than {MAX_PATH} characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PathRefused("path is not valid Unicode") from None
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise PathRefused(f"path {_shown(text)} holds a NUL or control character")
    if "\\" in text:
        raise PathRefused(f"path {_shown(text)}: use `/` between folders, not `\\`")
    if text.startswith("/") or text.startswith("~"):
        raise PathRefused(f"path {_shown(text)} must be relative to the memory folder")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathRefused("paths must stay within the memory folder (no `..`)")
    if any(p.startswith(".") for p in parts):
        raise PathRefused(f"path {_shown(text)}: hidden files and folders are off limits")
    return "/".join(parts) or "."


def _fold(rel: str) -> str:
    return unicodedata.normalize("NFC", rel).casefold()


def classify(rel: str) -> PathKind:
    """What a normalised path is (see the module docstring)."""
    key = _fold(rel)
    if key == ".":
        return PathKind.HOLDS_PROTECTED
    if key in INPUT_FILES or any(key == f or key.startswith(f + "/") for f in INPUT_FOLDERS):
        return PathKind.INPUT
    if key == NOTES_FOLDER or key.startswith(NOTES_FOLDER + "/"):
        return PathKind.NOTE
    if key == IMPORT_FOLDER or key.startswith(IMPORT_FOLDER + "/"):
        return PathKind.IMPORTED
    if NOTES_FOLDER.startswith(key + "/") or IMPORT_FOLDER.startswith(key + "/"):
        return PathKind.HOLDS_PROTECTED
    return PathKind.MEMORY


def is_user_note(rel: object) -> bool:
    """Whether `rel` (any spelling) names a file of the user's ad-hoc notes. A path that does
    not normalise (`..`, absolute, not a string) is not a note."""
    try:
        rel = normalise(rel)
    except PathRefused:
        return False
    return classify(rel) is PathKind.NOTE and _fold(rel) != NOTES_FOLDER


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def resolve(root: Path, raw: object, *, must_exist: bool = True) -> AgentPath:
    """`raw` normalised and found under `root` (which must itself be a real path), refusing a
    symlink at every step. A missing path is refused when `must_exist`; a missing folder
    along the way is not a symlink, so what is created there stays inside."""
    rel = normalise(raw)
    path = root
    for i, part in enumerate([] if rel == "." else rel.split("/")):
        path = path / part
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if must_exist:
                raise PathRefused(f"{rel}: not found") from None
            break
        except NotADirectoryError:
            raise PathRefused(f"{rel}: {'/'.join(rel.split('/')[:i])} is a file, "
                              "not a folder") from None
        if stat.S_ISLNK(st.st_mode):
            link = "/".join(rel.split("/")[:i + 1])
            raise PathRefused(f"{rel if link == rel else f'{rel}: {link}'} is a symlink; "
                              "symlinks are not followed")
    full = root.joinpath(*([] if rel == "." else rel.split("/")))
    if not _inside(os.path.realpath(full), str(root)):
        raise PathRefused("paths must stay within the memory folder")
    return AgentPath(rel, full, classify(rel))


def regular_file(p: AgentPath) -> AgentPath:
    """`p` if it is a regular file (not a folder, FIFO, socket or device)."""
    try:
        mode = os.lstat(p.path).st_mode
    except FileNotFoundError:
        raise PathRefused(f"{p.rel}: not found") from None
    if stat.S_ISDIR(mode):
        raise PathRefused(f"{p.rel} is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise PathRefused(f"{p.rel} is not a regular file")
    return p


def read_regular(path: Path) -> bytes:
    """The bytes of a regular file, opened without following a symlink and without blocking
    (a symlink or FIFO swapped in after the checks is refused here, not read through)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise PathRefused(f"{path.name} is not a regular file")
        return f.read()


def check_change(p: AgentPath, action: str) -> None:
    """Refuse `action` ("write", "edit", "delete") on a path that may not change."""
    if p.kind is PathKind.INPUT:
        raise PathRefused(f"{p.rel} is an input of this consolidation; do not change it")
    if p.kind is PathKind.NOTE:
        raise PathRefused(f"{p.rel}: notes are the user's requests; they are read only and "
                          "never deleted")
    if p.kind is PathKind.IMPORTED:
        raise PathRefused(f"{p.rel}: Codex imported this from another agent's memory; read "
                          "it, but never edit, rename or delete it")
    if p.kind is PathKind.HOLDS_PROTECTED:
        raise PathRefused(f"{p.rel} holds this consolidation's inputs or the user's notes; "
                          f"it cannot be {'deleted' if action == 'delete' else 'replaced'}")


def _visible(entry: os.DirEntry[str]) -> str | None:
    """"file", "dir", or None for what a tool never shows (hidden, symlink, special)."""
    if entry.name.startswith("."):
        return None
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return None
    return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else None


def entries(folder: AgentPath) -> list[str]:
    """A folder's visible entries, sorted, folders with a trailing `/`."""
    with os.scandir(folder.path) as it:
        out = [e.name + ("/" if kind == "dir" else "") for e in it
               if (kind := _visible(e)) is not None]
    return sorted(out)


def walk(base: AgentPath) -> Iterator[tuple[str, Path]]:
    """(normalised path, file) for every visible regular file at or under `base`, sorted."""
    try:
        mode = os.lstat(base.path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode):
        yield base.rel, base.path
        return
    if not stat.S_ISDIR(mode):
        return
    prefix = "" if base.rel == "." else base.rel + "/"
    try:
        with os.scandir(base.path) as it:
            found = sorted((e.name, k) for e in it if (k := _visible(e)) is not None)
    except OSError:
        return
    for name, kind in found:
        child = AgentPath(prefix + name, base.path / name, classify(prefix + name))
        if kind == "file":
            yield child.rel, child.path
        else:
            yield from walk(child)
