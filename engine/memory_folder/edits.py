"""The memory folder as a person edits it: list, read, save an edit, add an ad-hoc note.

Every write follows the same rules: the path stays inside the memory root and passes through no
symlink (Codex refuses a symlinked root and deletes symlinks inside it: docs/codex-format.md
"Memory folder layout"); the text holds no secret; the write goes through the memory-folder
writer (writer.py), holding its lock and the global consolidation lease, so a running
consolidation or accept never races the edit; the state found on disk is recorded in history
first (an outside change stays `external`), the file is written into a staged copy of the
root and switched in whole (switch.py: no temp file ever appears in the root, and a change
someone made meanwhile is kept), and the result is committed as the user's.

A save names the version it started from; when the file changed on disk since, nothing is
written and `MemoryConflict` carries what is there now.

The files Codex imported from another agent's memory (codex/external_import.py) are listed as
kind `imported`, each with its project's scope (scope.json), and are read-only: memdeck never
writes there.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Self, get_args

from ..atomic import write_atomic, write_new
from ..codex.external_import import READ_ONLY as IMPORTED_READ_ONLY
from ..codex.external_import import ImportScope, is_imported, scope_of
from ..codex.home import CodexHome
from ..errors import HomeError, MemdeckError, NotFound
from ..redact import find_secrets
from .journal import JournalPaths, RowStep, row_step
from .switch import Switch
from .writer import Change, Lease, MemoryFolderWriter

NOTES_DIR = PurePosixPath("extensions/ad_hoc/notes")
NoteKind = Literal["remember", "forget"]
NOTE_KINDS: tuple[NoteKind, ...] = get_args(NoteKind)
# what a file of the memory root is, by its place (`kind_of`), in the order the list shows
MemoryKind = Literal["summary", "memory", "raw", "skill", "rollout_summary", "note", "imported",
                     "extension", "other"]
SLUG_MAX = 40
MAX_EDIT_BYTES = 4 << 20  # bigger files are shown in part, read-only
# Codex's `add_ad_hoc_note` filename rule (docs/codex-format.md "Extensions and notes"); our
# names always match it.
NOTE_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[a-z0-9][a-z0-9-]{0,79}\.md$")

# the order of the list: what the agent reads first comes first
KIND_ORDER: tuple[MemoryKind, ...] = get_args(MemoryKind)
HINTS = {
    "summary": "injected into every new session (its first line must stay v1)",
    "memory": "the handbook the agent searches; your edits here are authoritative",
    "raw": "rebuilt from the raw memories at every consolidation: edits here do not last",
    "rollout_summary": "rewritten when its session is extracted again",
    "note": "an ad-hoc note: folded into memory at the next consolidation",
}
FOLDED_NOTE_HINT = ("an ad-hoc note, already folded into memory; edit it and the next "
                    "consolidation replaces its line")


class MemoryConflict(MemdeckError):
    """The file changed on disk since the edit began; nothing was written."""

    def __init__(self, path: str, disk_text: str | None, disk_version: str | None) -> None:
        what = "was deleted" if disk_text is None else "changed on disk"
        super().__init__(f"{path} {what} since you opened it; nothing was saved")
        self.path = path
        self.disk_text = disk_text  # None: the file is gone
        self.disk_version = disk_version


class SecretInText(MemdeckError):
    """The text to write holds a secret; nothing was written."""


class InvalidSummary(MemdeckError):
    """A memory_summary.md edit Codex would reject; nothing was written."""


class MemoryPathError(MemdeckError):
    """A path outside the memory root, hidden, or through a symlink."""


@dataclass(frozen=True)
class MemoryFileInfo:
    path: str  # relative to the memory root, with `/`
    kind: MemoryKind
    size: int
    mtime: float
    scope: ImportScope | None = None  # an imported resource's project and folder


@dataclass(frozen=True)
class MemoryFileText:
    path: str
    kind: MemoryKind
    text: str
    version: str  # sha256 of the bytes on disk: a save names it to detect outside changes
    read_only: str | None = None  # why the file cannot be edited here, or None
    hint: str = ""
    scope: ImportScope | None = None  # an imported resource's project and folder


@dataclass(frozen=True)
class MemorySaved:
    path: str
    version: str
    changed: bool  # False: the text was already what is on disk; nothing written
    commit: str | None  # the history commit of the edit


@dataclass(frozen=True)
class MemoryNote:
    path: str
    kind: NoteKind
    text: str
    commit: str | None


def version_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_ROOT_FILE_KINDS: dict[str, MemoryKind] = {
    "memory_summary.md": "summary", "MEMORY.md": "memory", "raw_memories.md": "raw"}


def kind_of(rel: str) -> MemoryKind:
    parts = PurePosixPath(rel).parts
    if len(parts) == 1 and parts[0] in _ROOT_FILE_KINDS:
        return _ROOT_FILE_KINDS[parts[0]]
    if parts[0] == "skills":
        return "skill"
    if parts[0] == "rollout_summaries" and len(parts) == 2 and rel.endswith(".md"):
        return "rollout_summary"
    if parts[:3] == NOTES_DIR.parts and len(parts) == 4 and rel.endswith(".md"):
        return "note"
    if is_imported(rel):
        return "imported"
    if parts[0] == "extensions":
        return "extension"
    return "other"


def _ordered(files: list[MemoryFileInfo]) -> list[MemoryFileInfo]:
    """By kind (what the agent reads first comes first); timestamp-named files newest first."""
    out: list[MemoryFileInfo] = []
    for kind in KIND_ORDER:
        group = sorted((f for f in files if f.kind == kind), key=lambda f: f.path,
                       reverse=kind in ("rollout_summary", "note"))
        out += group
    return out


# -- paths ----------------------------------------------------------------------------------
def _checked_root(home: CodexHome) -> Path:
    root = home.memory_root
    if root.is_symlink():
        raise HomeError(f"{root} is a symlink; memdeck does not follow it (Codex refuses a "
                        "symlinked memory root too)")
    return root


def resolve(home: CodexHome, rel: str) -> tuple[Path, str]:
    """`rel` as a path inside the memory root, refusing `..`, absolute and hidden paths and
    any symlink on the way; returns the path and the normalised relative name."""
    if not isinstance(rel, str) or not rel.strip() or "\0" in rel or "\\" in rel:
        raise MemoryPathError(f"{rel!r} is not a file name in the memory folder")
    pure = PurePosixPath(rel.strip())
    if pure.is_absolute() or any(p in ("..", ".") for p in pure.parts):
        raise MemoryPathError(f"{rel} must stay within the memory folder")
    if any(p.startswith(".") for p in pure.parts):
        raise MemoryPathError(f"{rel}: hidden files are not part of memory")
    root = _checked_root(home)
    path = root
    for part in pure.parts:
        path = path / part
        if path.is_symlink():
            raise MemoryPathError(f"{pure} passes through a symlink; memdeck never writes "
                                  "through one in the memory folder")
    return path, pure.as_posix()


# -- listing and reading ---------------------------------------------------------------------
def list_files(home: CodexHome) -> list[MemoryFileInfo]:
    """Every regular file of the memory root (hidden entries and symlinks left out)."""
    root = _checked_root(home)
    if not root.is_dir():
        return []
    out: list[MemoryFileInfo] = []
    scopes: dict[str, ImportScope] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and not (base / d).is_symlink())
        for name in filenames:
            p = base / name
            if name.startswith("."):
                continue
            try:
                st = p.lstat()
            except OSError:
                continue  # gone while we looked
            if not os.path.isfile(p) or p.is_symlink():
                continue
            rel = p.relative_to(root).as_posix()
            out.append(MemoryFileInfo(rel, kind_of(rel), st.st_size, st.st_mtime,
                                      scope_of(root, rel, scopes)))
    return _ordered(out)


def read_file(home: CodexHome, rel: str) -> MemoryFileText:
    path, rel = resolve(home, rel)
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    if size > MAX_EDIT_BYTES:  # an editor holding 200 MB would freeze the screen
        return _read_head(path, rel, size)
    data = _read_bytes(path, rel)
    if data is None:
        raise NotFound(f"no file {rel} in the memory folder")
    kind = kind_of(rel)
    try:
        text, read_only = data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", errors="replace")
        read_only = (f"not valid UTF-8 (byte {e.start}): bad bytes are shown as \ufffd; "
                     "memdeck will not save over it")
    if kind == "imported":
        read_only = IMPORTED_READ_ONLY
    hint = HINTS.get(kind, "")
    if kind == "note" and in_baseline(home.memory_root, rel, data):
        hint = FOLDED_NOTE_HINT
    return MemoryFileText(rel, kind, text, version_of(data), read_only, hint,
                          scope_of(home.memory_root, rel))


def in_baseline(root: Path, rel: str, data: bytes) -> bool:
    """`rel` holds `data` in Codex's baseline commit: the last consolidation took it in
    (docs/codex-format.md "The workspace diff"), so the next one will not. Read-only: git
    takes no lock and writes nothing."""
    import subprocess

    if not (root / ".git").is_dir():
        return False
    try:
        out = subprocess.run(["git", "ls-tree", "HEAD", "--", rel], cwd=root, timeout=30,
                             capture_output=True, check=True,
                             env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().encode()
    return blob in out


def _read_head(path: Path, rel: str, size: int) -> MemoryFileText:
    """The first MAX_EDIT_BYTES of a huge file, up to its last whole line, read-only."""
    try:
        with path.open("rb") as f:
            head = f.read(MAX_EDIT_BYTES)
    except OSError as e:
        raise HomeError(f"cannot read {rel}: {e.strerror}") from None
    head = head[: head.rfind(b"\n") + 1] or head
    why = (f"{size / (1 << 20):.0f} MiB: the first {MAX_EDIT_BYTES >> 20} MiB are shown; "
           "too large to edit here")
    kind = kind_of(rel)
    return MemoryFileText(rel, kind, head.decode("utf-8", errors="replace"), version_of(head),
                          why, HINTS.get(kind, ""))


def _read_bytes(path: Path, rel: str) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise MemoryPathError(f"{rel} is a folder, not a file") from None
    except OSError as e:
        raise HomeError(f"cannot read {rel}: {e.strerror}") from None


# -- writing ---------------------------------------------------------------------------------
class _FilesOnly(RowStep):
    """A change of files alone: no rows to write, and dropped when no file changed."""

    writes_rows = False

    def to_json(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_json(cls, raw: dict[str, Any], paths: JournalPaths) -> Self:
        return cls()

    def write(self, change: Change, lease: Lease | None) -> None:
        pass


@row_step
@dataclass
class EditRows(_FilesOnly):
    """A person's edit of a memory file."""

    op = "edit"


@row_step
@dataclass
class NoteRows(_FilesOnly):
    """A person's ad-hoc note."""

    op = "note"


@contextmanager
def _writing(writer: MemoryFolderWriter, purpose: str) -> Iterator[Change]:
    """The writer's change of a root that exists, under the global lease."""
    home = writer.home
    home.require_writable_version()
    if not os.path.lexists(home.memory_root):
        # Creating a root is a choice of memory version for Codex
        # (docs/codex-format.md "Memory versions"): only an accepted consolidation makes one.
        raise HomeError(f"{home.memory_root.name}/ does not exist yet: memdeck creates it only "
                        "when you accept a consolidation (`memdeck consolidate`)")
    with writer.change() as change, change.lease(purpose):
        yield change


def refuse_import(rel: str) -> None:
    """Refuse to write in the folder of Codex's import of another agent's memory."""
    if is_imported(rel):
        raise MemdeckError(f"{rel} is {IMPORTED_READ_ONLY}: memdeck does not change it; "
                           "nothing was written")


def refuse_secrets(text: str, where: str) -> None:
    found = find_secrets(text)
    if found:
        s = found[0]
        line = text.count("\n", 0, s.start) + 1
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise SecretInText(f"{where} line {line} holds a secret ({s.kind}){more}; nothing "
                           "was written: remove it and try again")


def refuse_bad_summary(text: str) -> None:
    """Codex fails a consolidation whose memory_summary.md does not start with the line `v1`
    (docs/codex-format.md "Validation"), in v1 and v2: such an edit is refused, not saved."""
    first = text.split("\n", 1)[0].rstrip("\r")
    if first != "v1":
        shown = repr(first[:40]) if first else "empty"
        raise InvalidSummary(f"memory_summary.md must start with the line `v1` (Codex fails "
                             f"the next consolidation otherwise); its first line is {shown}; "
                             "nothing was written")


def _encode(text: str, rel: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise MemdeckError(f"the text for {rel} cannot be written as UTF-8") from None


def save_file(writer: MemoryFolderWriter, rel: str, text: str,
              base_version: str | None) -> MemorySaved:
    """Write a user's edit of `rel`, made from the version `base_version` (None: a new file).

    Raises `MemoryConflict` (nothing written) when the file on disk is no longer that
    version, `SecretInText` when the text holds a secret."""
    writer.recover()  # an interrupted accept is dealt with before anything else
    home = writer.home
    path, rel = resolve(home, rel)
    refuse_import(rel)
    refuse_secrets(text, rel)
    if kind_of(rel) == "summary":
        refuse_bad_summary(text)
    new = _encode(text, rel)
    with _writing(writer, f"save {rel}") as change:
        path, rel = resolve(home, rel)  # again, under the lock: nothing swapped in since
        current = _read_bytes(path, rel)
        current_version = None if current is None else version_of(current)
        if current_version != base_version:
            disk = None if current is None else current.decode("utf-8", errors="replace")
            raise MemoryConflict(rel, disk, current_version)
        if current is not None:
            try:
                current.decode("utf-8")
            except UnicodeDecodeError:
                raise MemdeckError(f"{rel} on disk is not valid UTF-8; memdeck will not "
                                   "save over it") from None
        if current == new:
            return MemorySaved(rel, version_of(new), False, None)
        sw = Switch(change)
        staged = sw.copy_of(home.memory_root)
        try:
            write_atomic(staged / path.relative_to(home.memory_root), new)
        except OSError as e:
            sw.discard()
            raise MemdeckError(f"cannot write {rel}: {e.strerror or e}") from None
        out = sw.commit(EditRows(), origin="user", message=f"edit {rel}", what=f"save {rel}")
        return MemorySaved(rel, version_of(new), True, out.commit)


def note_slug(text: str) -> str:
    """The first words of a note as `a-z0-9-`, at most SLUG_MAX characters, cut at a word."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for w in words:
        nxt = f"{slug}-{w}" if slug else w
        if len(nxt) > SLUG_MAX:
            if not slug:
                slug = w[:SLUG_MAX]
            break
        slug = nxt
    return slug or "note"


def note_body(text: str, kind: str) -> str:
    """What the note file says: `Remember: …` or `Forget: …`, as the demo's note does."""
    return f"{kind.capitalize()}: {text.strip()}\n"


def add_note(writer: MemoryFolderWriter, text: str, kind: str) -> MemoryNote:
    """Write `extensions/ad_hoc/notes/<YYYY-MM-DDTHH-MM-SS>-<slug>.md` (Codex's name,
    docs/codex-format.md "Extensions and notes"), create-new, so two notes never overwrite each
    other."""
    writer.recover()  # an interrupted accept is dealt with before anything else
    home = writer.home
    if kind not in NOTE_KINDS:
        raise MemdeckError(f"a note is either remember or forget, not {kind!r}")
    if not text.strip():
        raise MemdeckError("the note is empty; nothing was written")
    body = note_body(text, kind)
    refuse_secrets(body, "the note")
    _encode(body, "the note")
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(int(writer.now())))
    slug = note_slug(text)
    with _writing(writer, "add a note") as change:
        resolve(home, NOTES_DIR.as_posix())  # no symlink on the way in the live root
        sw = Switch(change)
        notes = sw.copy_of(home.memory_root) / NOTES_DIR
        try:
            notes.mkdir(parents=True, exist_ok=True)
            n = 1
            while True:
                name = f"{stamp}-{slug}.md" if n == 1 else f"{stamp}-{slug}-{n}.md"
                if write_new(notes / name, body):
                    break
                n += 1
        except OSError as e:
            sw.discard()
            raise MemdeckError(f"cannot write the note: {e.strerror or e}") from None
        rel = (NOTES_DIR / name).as_posix()
        out = sw.commit(NoteRows(), origin="user", message=f"note: {slug}", what="add a note")
        return MemoryNote(rel, kind, body, out.commit)
