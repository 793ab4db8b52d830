"""The journal of a change of the memory folder (`memdeck/change.journal`, switch.py), typed.

A `Journal` is what every change has (its roots, their states, its history entry) and its
operation's rows step: one dataclass per operation (`RowStep`: accept.py `AcceptRows`,
restore.py `RestoreRows`, backup.py `ResetRows` and `RestoreBackupRows`, forget_change.py
`ForgetRows`, edits.py `EditRows` and `NoteRows`), which knows its own fields, how to write
and read them, and how to write its rows once the roots are live. Each is registered under
its operation's name with `@row_step`; the switch calls the step of the journal it holds and
never names an operation, and recovery.py imports every operation so a journal found after
a crash finds its step.

Written once the change is decided, read back by whichever command finds it after a crash.
What it names is checked before anything follows it, so that a journal edited by hand (or
by someone else) can never make memdeck touch a file outside the home:

- paths are written relative to the home (a root: `memories`), to the staging folder (the
  change's folder: its id) or to the change's folder (a staged root), so the journal means
  the same whether the home is spelled through a symlink, with `..` or as its real path;
- a root must be one of this home's memory roots, a staged path must sit in the change's
  own staging folder, and the paths an operation's rows step uses (the pipeline databases a
  reset clears, the backup it took, the rows a restore-backup writes, the rollout a forget
  appends to) must be the ones this home has for them (`JournalPaths`).

A journal memdeck does not know (a newer memdeck's version, an operation or an origin this one
does not have) is refused and left as it is (`UnknownJournal`): only the memdeck that wrote
it knows how to finish it. One that is damaged or names what is not this home's is
`JournalError`: written atomically before anything moved, so nothing of it happened.

Versions: 3 (this one) keeps the rows step's fields under `rows`; 2 kept the same fields
under `finish`; 1 also held absolute paths, read by their real path. All three are read.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, TypeVar, get_args

from ..codex.home import CodexHome
from .origins import Origin, is_origin

if TYPE_CHECKING:
    from .writer import Change, Lease

VERSION = 3
READS = (1, 2, VERSION)
JournalState = Literal["committed", "reverting"]
STATES: tuple[JournalState, ...] = get_args(JournalState)


class JournalError(ValueError):
    """A journal memdeck cannot follow: damaged, or naming a path that is not this home's
    (written atomically before anything moved, so nothing of it happened)."""


class UnknownJournal(JournalError):
    """A journal this memdeck does not know how to finish: its change may be half done, and
    only the memdeck that wrote it knows the rest; it is left as it is."""


class NewerJournal(UnknownJournal):
    """A journal of a newer memdeck (a version this one does not know)."""


@dataclass
class RootChange:
    root: Path  # a memory root of the home
    staged: Path  # its new state, in the change's staging folder; after the switch, the old
    base: str | None  # the root's state the change was decided on (None: it did not exist)
    new: str | None = None  # the staged state


@dataclass(frozen=True)
class HistoryNote:
    """The history entry the change commits once its rows are written."""

    origin: Origin
    message: str
    trailers: dict[str, str] = field(default_factory=dict)


class JournalPaths:
    """What the paths of a rows step are checked against: this home's own, and the change's
    staging folder. Reading takes both spellings (a name, or an older memdeck's absolute
    path); anything else is `JournalError`."""

    def __init__(self, home: CodexHome, folder: Path) -> None:
        self.home = home
        self.folder = folder  # memdeck/staging/<id>

    def database(self, text: str) -> Path:
        """One of the pipeline databases a reset may clear."""
        return _one_of(text, pipeline_dbs(self.home), "a database")

    def backup(self, text: str) -> Path:
        b = Path(text)
        return _inside(b if b.is_absolute() else self.home.backups_dir / b,
                       self.home.backups_dir, "memdeck's backups")

    def staged_file(self, text: str) -> Path:
        p = Path(text)
        return _inside(p if p.is_absolute() else self.folder / p, self.folder,
                       "its staging folder")

    def rollout(self, text: str) -> Path:
        p = Path(text)
        real = _real(p)
        for base in (self.home.sessions_dir, self.home.archived_dir):
            b = _real(base)
            if real.startswith(b + os.sep) and real.endswith(".jsonl"):
                return p
        raise JournalError("names a rollout outside this home's sessions")


Step = TypeVar("Step", bound="RowStep")


class RowStep(ABC):
    """An operation's rows: the fields its journal holds and the step that writes them once
    its roots are live (Codex's and memdeck's rows; nothing for an edit). The step runs
    again safely: a command that finds the journal after a crash runs it once more."""

    op: ClassVar[str]  # the operation's name in the journal
    writes_rows: ClassVar[bool] = True  # False: a change of files only, dropped when none

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The fields as the journal holds them (paths as names where they have one)."""

    @classmethod
    @abstractmethod
    def from_json(cls, raw: dict[str, Any], paths: JournalPaths) -> Self:
        """The fields read back, every path checked (`JournalError` when one is not the
        home's); raises KeyError, TypeError or ValueError on damage."""

    @abstractmethod
    def write(self, change: Change, lease: Lease | None) -> None:
        """Write the rows. `lease`: the global lease the change holds (None when a recovery
        finishes it: the step takes one itself if it needs one)."""


ROW_STEPS: dict[str, type[RowStep]] = {}


def row_step(cls: type[Step]) -> type[Step]:
    """Register an operation's rows step under its name (`cls.op`), for the journal reader."""
    if ROW_STEPS.get(cls.op, cls) is not cls:
        raise ValueError(f"two row steps for {cls.op!r}")
    ROW_STEPS[cls.op] = cls
    return cls


@dataclass
class Journal:
    id: str
    dir: Path  # memdeck/staging/<id>
    roots: list[RootChange]
    what: str
    history: HistoryNote
    rows: RowStep
    state: JournalState = "committed"
    kept: dict[str, str | None] = field(default_factory=dict)  # root -> state kept (reverting)

    @property
    def op(self) -> str:
        return self.rows.op

    # -- writing ---------------------------------------------------------------------------
    def dumps(self) -> str:
        return json.dumps({
            "version": VERSION, "op": self.op, "id": self.id, "what": self.what,
            "state": self.state,
            "history": {"origin": self.history.origin, "message": self.history.message,
                        "trailers": self.history.trailers},
            "roots": [{"root": r.root.name, "staged": r.staged.name, "base": r.base,
                       "new": r.new} for r in self.roots],
            "kept": {Path(k).name: v for k, v in self.kept.items()},
            "rows": self.rows.to_json(),
        }, ensure_ascii=False)

    # -- reading ---------------------------------------------------------------------------
    @classmethod
    def loads(cls, text: str, home: CodexHome, staging: Path,
              steps: dict[str, type[RowStep]] | None = None) -> Journal:
        """The journal in `text`, its paths made absolute in this home's spelling; raises
        `UnknownJournal` for one this memdeck does not know, `JournalError` for anything
        else it must not follow. `steps`: the registered row steps (`ROW_STEPS`)."""
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise JournalError("not a journal of memdeck's")
            version = raw.get("version", 1)
            if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
                raise NewerJournal(f"version {version}, this memdeck knows {VERSION}")
            if version not in READS:
                raise JournalError(f"an unknown version ({version!r})")
            ident = str(raw["id"])
            state = str(raw.get("state", "committed"))
            if state not in STATES:
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
            history = _history(dict(raw["history"]))
            op = str(raw["op"])
            step = (ROW_STEPS if steps is None else steps).get(op)
            if step is None:
                raise UnknownJournal(f"an operation this memdeck does not know ({op!r})")
            fields = raw.get("rows" if version == VERSION else "finish") or {}
            rows = step.from_json(dict(fields), JournalPaths(home, folder))
            return cls(ident, folder, roots, str(raw["what"]), history, rows,
                       state, kept)
        except JournalError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise JournalError(f"damaged ({type(e).__name__})") from None


def _history(h: dict[str, Any]) -> HistoryNote:
    origin = str(h["origin"])
    if not is_origin(origin):
        raise UnknownJournal(f"an origin this memdeck does not know ({origin!r})")
    trailers = {str(k): str(v) for k, v in dict(h.get("trailers") or {}).items()}
    return HistoryNote(origin, str(h["message"]), trailers)


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
