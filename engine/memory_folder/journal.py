"""The journal of a change of the memory folder (`memdeck/change.journal`, switch.py).

Written once the change is decided, read back by whichever command finds it after a crash.
What it names is checked before anything follows it, so that a journal edited by hand (or
by someone else) can never make memdeck touch a file outside the home:

- paths are written relative to the home (a root: `memories`), to the staging folder (the
  change's folder: its id) or to the change's folder (a staged root), so the journal means
  the same whether the home is spelled through a symlink, with `..` or as its real path;
- a root must be one of this home's memory roots, a staged path must sit in the change's
  own staging folder, and the paths an operation's rows step uses (the pipeline databases a
  reset clears, the backup it took, the rows a restore-backup writes, the rollout a forget
  appends to) must be the ones this home has for them;
- a journal of a newer memdeck (a version this one does not know) is refused, not guessed.

Journals of memdecks before version 2 held absolute paths; they are read by their real path.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..codex.home import CodexHome

VERSION = 2
OPS = ("accept", "restore", "reset", "restore-backup", "forget", "edit", "note")
STATES = ("committed", "reverting")


class JournalError(ValueError):
    """A journal memdeck cannot follow: damaged, or naming a path that is not this home's
    (written atomically before anything moved, so nothing of it happened)."""


class NewerJournal(JournalError):
    """A journal of a newer memdeck: its change may be half done, and only that memdeck knows
    how to finish it; it is left as it is."""


@dataclass
class RootChange:
    root: Path  # a memory root of the home
    staged: Path  # its new state, in the change's staging folder; after the switch, the old
    base: str | None  # the root's state the change was decided on (None: it did not exist)
    new: str | None = None  # the staged state


@dataclass
class Journal:
    op: str
    id: str
    dir: Path  # memdeck/staging/<id>
    roots: list[RootChange]
    what: str
    history: dict[str, Any]  # origin, message, trailers
    finish: dict[str, Any] = field(default_factory=dict)
    state: str = "committed"
    kept: dict[str, str | None] = field(default_factory=dict)  # root -> state kept (reverting)

    # -- writing ---------------------------------------------------------------------------
    def dumps(self, home: CodexHome) -> str:
        return json.dumps({
            "version": VERSION, "op": self.op, "id": self.id, "what": self.what,
            "state": self.state, "history": self.history,
            "roots": [{"root": r.root.name, "staged": r.staged.name, "base": r.base,
                       "new": r.new} for r in self.roots],
            "kept": {Path(k).name: v for k, v in self.kept.items()},
            "finish": _relative_finish(self.op, self.finish, home, self.dir),
        }, ensure_ascii=False)

    # -- reading ---------------------------------------------------------------------------
    @classmethod
    def loads(cls, text: str, home: CodexHome, staging: Path) -> Journal:
        """The journal in `text`, its paths made absolute in this home's spelling; raises
        `JournalError` for anything memdeck must not follow."""
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise JournalError("not a journal of memdeck's")
            version = raw.get("version", 1)
            if isinstance(version, int) and version > VERSION:
                raise NewerJournal(f"version {version}, this memdeck knows {VERSION}")
            if version not in (1, VERSION):
                raise JournalError(f"an unknown version ({version!r})")
            op, ident = str(raw["op"]), str(raw["id"])
            if op not in OPS:
                raise JournalError(f"an operation memdeck does not know ({op!r})")
            if str(raw.get("state", "committed")) not in STATES:
                raise JournalError("a state memdeck does not know")
            if version == 1:
                folder = _inside(Path(raw["dir"]), staging, "the staging folder")
            else:
                folder = staging / _name(ident)
            if folder.name != _name(ident):
                raise JournalError("its folder is not its id's")
            roots = [_root(r, home, folder, version) for r in raw["roots"]]
            kept = {str(_root_path(k, home, version)): v
                    for k, v in dict(raw.get("kept") or {}).items()}
            history = dict(raw["history"])
            finish = _absolute_finish(op, dict(raw.get("finish") or {}), home, folder, version)
            return cls(op, ident, folder, roots, str(raw["what"]), history, finish,
                       str(raw.get("state", "committed")), kept)
        except JournalError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise JournalError(f"damaged ({type(e).__name__})") from None


def _name(text: object) -> str:
    """One path component, nothing that climbs or descends."""
    s = str(text)
    if not s or s in (".", "..") or "/" in s or "\\" in s or "\0" in s:
        raise JournalError(f"{s!r} is not a name")
    return s


def _real(p: Path) -> str:
    return os.path.realpath(p)


def _inside(p: Path, folder: Path, what: str) -> Path:
    """`p` (absolute, any spelling) as the entry of `folder` it really is; refused when it is
    not directly inside `folder`."""
    if not p.is_absolute() or _real(p.parent) != _real(folder):
        raise JournalError(f"names a path outside {what}")
    return folder / _name(p.name)


def _root_path(text: str, home: CodexHome, version: int) -> Path:
    allowed = {r.name: r for r in (*home.memory_roots_for_reset, home.memory_root)}
    if version == 1:
        real = _real(Path(text))
        for r in allowed.values():
            if _real(r) == real:
                return r
        raise JournalError("names a folder that is not one of this home's memory roots")
    root = allowed.get(_name(text))
    if root is None:
        raise JournalError("names a folder that is not one of this home's memory roots")
    return root


def _root(r: dict[str, Any], home: CodexHome, folder: Path, version: int) -> RootChange:
    root = _root_path(str(r["root"]), home, version)
    staged = _inside(Path(r["staged"]), folder, "its staging folder") if version == 1 \
        else folder / _name(r["staged"])
    base, new = r.get("base"), r.get("new")
    if base is not None and not isinstance(base, str) or new is not None and \
            not isinstance(new, str):
        raise JournalError("a state that is not a digest")
    return RootChange(root, staged, base, new)


# -- the paths an operation's rows step uses ---------------------------------------------------
def pipeline_dbs(home: CodexHome) -> list[Path]:
    """Every pipeline database a reset may clear: Codex's two and memdeck's own copies."""
    return [home.sqlite_home / "memories_1.sqlite", home.sqlite_home / "memories_v2_1.sqlite",
            home.memdeck_dir / "memories.sqlite", home.memdeck_dir / "memories_v2.sqlite"]


def _one_of(text: str, allowed: list[Path], what: str) -> Path:
    real = _real(Path(text))
    for p in allowed:
        if str(p) == text or _real(p) == real:
            return p
    raise JournalError(f"names {what} that is not this home's")


def _in_sessions(text: str, home: CodexHome) -> Path:
    p = Path(text)
    real = _real(p)
    for base in (home.sessions_dir, home.archived_dir):
        b = _real(base)
        if real.startswith(b + os.sep) and real.endswith(".jsonl"):
            return p
    raise JournalError("names a rollout outside this home's sessions")


def _absolute_finish(op: str, finish: dict[str, Any], home: CodexHome, folder: Path,
                     version: int) -> dict[str, Any]:
    out = dict(finish)
    if op == "reset":
        out["clear"] = [_one_of(str(p), pipeline_dbs(home), "a database")
                        for p in finish.get("clear", [])]
        out["clear"] = [str(p) for p in out["clear"]]
        if finish.get("backup") is not None:
            b = Path(str(finish["backup"]))
            out["backup"] = str(_inside(b if b.is_absolute() else home.backups_dir / b,
                                        home.backups_dir, "memdeck's backups"))
    elif op == "restore-backup" and "rows" in finish:
        rows = Path(str(finish["rows"]))
        out["rows"] = str(_inside(rows if rows.is_absolute() else folder / rows, folder,
                                  "its staging folder"))
    elif op == "forget":
        out["path"] = str(_in_sessions(str(finish["path"]), home))
    return out


def _relative_finish(op: str, finish: dict[str, Any], home: CodexHome,
                     folder: Path) -> dict[str, Any]:
    out = dict(finish)
    if op == "restore-backup" and "rows" in finish:
        out["rows"] = Path(finish["rows"]).name
    elif op == "reset" and finish.get("backup") is not None:
        out["backup"] = Path(finish["backup"]).name
    return out  # databases and rollouts are checked against the home's own list on reading
