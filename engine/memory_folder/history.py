"""memdeck's history of the memory folder: `memdeck/history.git`, work tree = the memory root.

Codex deletes and re-creates `<root>/.git` after every consolidation, so that repository
cannot hold history; this one does. memdeck commits the root whenever it finds it in a
state the history does not hold yet, labelled with who made it (a `Memdeck-Origin:`
trailer): `codex` (the root is exactly Codex's baseline commit), `consolidation`, `user`,
`restore`, `start` (the state memdeck first found, before it had any history) or `external`
(anything else that changed it; shown as "outside"). Nothing is ever rewritten: a
restore is a new commit. Git never tracks a `.git` entry, so Codex's baseline inside the
root stays out of it. GitPython repositories are opened per call, never shared.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..clock import Clock
from ..codex.home import CodexHome
from ..crash_points import crash_point
from ..errors import HomeError, NotFound
from .baseline import is_codex_baseline
from .origins import ORIGIN_LABEL, ORIGINS, Origin, is_origin

__all__ = ["ORIGINS", "ORIGIN_LABEL", "History", "HistoryEntry", "Origin", "origin_of"]
TRAILER = "Memdeck-Origin"
AUTHOR = ("memdeck", "memdeck@localhost")


@dataclass(frozen=True)
class HistoryEntry:
    commit: str
    time: float
    origin: Origin
    summary: str

    @property
    def origin_label(self) -> str:
        """The origin in the words the app and the CLI both use (`external` is "outside")."""
        return ORIGIN_LABEL.get(self.origin, "outside")


def _env(when: float) -> dict[str, str]:
    env = {"GIT_AUTHOR_NAME": AUTHOR[0], "GIT_AUTHOR_EMAIL": AUTHOR[1],
           "GIT_COMMITTER_NAME": AUTHOR[0], "GIT_COMMITTER_EMAIL": AUTHOR[1],
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{int(when)} +0000"
    return env


class History:
    """memdeck's history repository of one home. `clock` (the engine's) dates the commits it
    makes, never git's own clock: a state committed "now" is as old as every other age
    memdeck shows."""

    def __init__(self, home: CodexHome, clock: Clock) -> None:
        self.home = home
        self.root = home.memory_root
        self.gitdir = home.history_git
        self.clock = clock

    def _when(self) -> float:
        return self.clock.now()

    def _repo(self, work_tree: Path | None = None) -> Any:
        """The history repository, its work tree the live root (or `work_tree`). Made when
        missing, inside `memdeck/` only: a `history.git` that is not a folder, or is not a
        repository, is refused, never searched for upwards."""
        import git

        if self.root.is_symlink():
            raise HomeError(f"{self.root} is a symlink; memdeck keeps no history through it")
        self._check_gitdir()
        if not os.path.lexists(self.gitdir):
            self.home.ensure_memdeck_dir()
            with _damaged(self.gitdir):
                git.Repo.init(self.gitdir, bare=True, mkdir=True).close()
        with _damaged(self.gitdir):
            repo = git.Repo(self.gitdir, search_parent_directories=False)
        repo.git.update_environment(GIT_WORK_TREE=str(work_tree or self.root),
                                    GIT_DIR=str(self.gitdir), **_env(self._when()))
        return repo

    def _check_gitdir(self) -> None:
        g = self.gitdir
        if g.is_symlink() or (os.path.lexists(g) and not g.is_dir()):
            raise HomeError(f"{g} is not a folder; move it aside (it is not memdeck's "
                            "history) and memdeck starts a new history there")
        if g.is_dir() and not (g / "HEAD").is_file() and any(g.iterdir()):
            raise HomeError(_damaged_text(g, "it has no HEAD"))

    def _has_head(self, repo: Any) -> bool:
        try:
            repo.head.commit  # noqa: B018
        except ValueError:
            return False
        return True

    def snapshot_of(self, folder: Path, origin: Origin, summary: str) -> str | None:
        """Commit `folder` (a copy of the root, e.g. what someone wrote into a folder while
        memdeck switched it away) as a state of the root, after the last one."""
        with self._repo(folder) as repo, _damaged(self.gitdir):
            repo.git.add("-A", ".")
            if self._has_head(repo) and not repo.git.diff("--cached", "--name-only", "HEAD"):
                return None
            repo.git.commit("-q", "--no-verify", "--no-gpg-sign", "--allow-empty",
                            "-m", f"{summary}\n\n{TRAILER}: {origin}")
            return str(repo.head.commit.hexsha)

    def snapshot(self, origin: Origin | None = None, summary: str = "",
                 trailers: dict[str, str] | None = None) -> str | None:
        """Commit the root if history does not hold its state yet; return the new commit.

        `origin=None` means: memdeck did not make this change itself; it is `codex` when the
        root is exactly Codex's own baseline commit, else `external`.

        A root that does not exist is never created (that would switch Codex's memory version,
        docs/codex-format.md "Memory versions"); if history held files, their removal is
        recorded."""
        if not os.path.lexists(self.root):
            return self._record_missing_root(origin, summary)
        with self._repo() as repo, _damaged(self.gitdir):
            repo.git.add("-A", ".")
            crash_point("history.added")
            fresh = not self._has_head(repo)
            if not fresh and not repo.git.diff("--cached", "--name-only", "HEAD"):
                return None
            if origin is None:  # the first state is where memdeck started, not a change
                origin = "codex" if self._is_codex_baseline_state() else (
                    "start" if fresh else "external")
            if origin not in ORIGINS:
                raise ValueError(f"unknown origin {origin!r}")
            title = summary or {"codex": "Codex consolidation", "external":
                                "changed outside memdeck", "start":
                                "the memory as memdeck first found it"}.get(origin, origin)
            lines = [title, "", f"{TRAILER}: {origin}"]
            lines += [f"{k}: {v}" for k, v in (trailers or {}).items()]
            repo.git.commit("-q", "--no-verify", "--no-gpg-sign", "--allow-empty",
                            "-m", "\n".join(lines))
            return str(repo.head.commit.hexsha)

    def _record_missing_root(self, origin: Origin | None, summary: str) -> str | None:
        """The root is gone: commit the empty tree after the last state, without a work tree."""
        import git

        self._check_gitdir()
        if not (self.gitdir / "HEAD").exists():
            return None
        with _damaged(self.gitdir), git.Repo(self.gitdir) as repo:
            repo.git.update_environment(GIT_DIR=str(self.gitdir), **_env(self._when()))
            if not self._has_head(repo) or not list(repo.head.commit.tree.traverse()):
                return None
            origin = origin or "external"
            title = summary or f"{self.root.name}/ removed"
            empty = repo.git.mktree(istream=subprocess.DEVNULL)  # writes the empty tree
            sha = repo.git.commit_tree(empty, "-p", "HEAD", "-m",
                                       f"{title}\n\n{TRAILER}: {origin}")
            repo.git.update_ref("HEAD", sha)
            return str(sha)

    def _is_codex_baseline_state(self) -> bool:
        """The root's own `.git` is Codex's baseline and the files are exactly its tree."""
        import git

        if not (self.root / ".git").is_dir():
            return False
        try:
            with git.Repo(self.root) as inner:
                c = inner.head.commit
                message = c.message if isinstance(c.message, str) else c.message.decode(
                    "utf-8", errors="replace")
                if not is_codex_baseline(message, c.author.name or "", c.author.email or ""):
                    return False
                return not inner.git.status("--porcelain", "--untracked-files=all")
        except (git.GitError, ValueError):
            return False

    def entries(self) -> list[HistoryEntry]:
        self._check_gitdir()
        if not (self.gitdir / "HEAD").exists():
            return []
        with self._repo() as repo, _damaged(self.gitdir):
            if not self._has_head(repo):
                return []
            return [_entry(c) for c in repo.iter_commits("HEAD")]

    def _commit(self, repo: Any, rev: str) -> Any:
        import git

        try:
            return repo.commit(rev)
        except (git.BadName, ValueError, git.GitCommandError):
            raise NotFound(f"no commit {rev!r} in memdeck's history") from None

    def show(self, rev: str) -> tuple[HistoryEntry, str]:
        with self._repo() as repo, _damaged(self.gitdir):
            c = self._commit(repo, rev)
            patch = repo.git.show("--format=", "--patch", "--stat", c.hexsha)
            return _entry(c), patch

    def check_out_into(self, rev: str, folder: Path) -> HistoryEntry:
        """Write `rev`'s files into `folder` (a staged copy of the root holding only its own
        `.git`); no snapshot is taken: `restore` records the states before and after."""
        with self._repo(folder) as repo, _damaged(self.gitdir):
            c = self._commit(repo, rev)
            if any(True for _ in c.tree.traverse()):  # an empty state has nothing to check out
                repo.git.checkout(c.hexsha, "--", ".")
            return _entry(c)


@contextmanager
def _damaged(gitdir: Path) -> Iterator[None]:
    """Git failing on the history repository: one line saying what to do."""
    import git

    try:
        yield
    except git.GitCommandError as e:
        text = " ".join(str(e.stderr or e).split())
        if "index.lock" in text:
            raise HomeError(f"{gitdir.name} is locked ({gitdir / 'index.lock'}): another git "
                            "or memdeck is using it; try again when it has finished") from None
        raise HomeError(_damaged_text(gitdir, text.removeprefix("stderr: ")[:160])) from None
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError) as e:
        raise HomeError(_damaged_text(gitdir, f"{type(e).__name__}")) from None


def _damaged_text(gitdir: Path, why: str) -> str:
    return (f"memdeck's history {gitdir} is damaged ({why}); move it aside "
            f"(mv {gitdir} {gitdir}.broken) and memdeck starts a new history; the memory "
            "folder itself is untouched")


def _entry(c: Any) -> HistoryEntry:
    origin = origin_of(c.message)
    if origin == "external" and not c.parents:  # a first commit of an older memdeck
        origin = "start"
    return HistoryEntry(c.hexsha, float(c.committed_date), origin, str(c.summary))


def origin_of(message: str) -> Origin:
    """The origin a commit message names (its `Memdeck-Origin:` trailer); `external` when
    none."""
    for line in reversed(message.strip().splitlines()):
        if line.startswith(f"{TRAILER}:"):
            value = line.split(":", 1)[1].strip()
            return value if is_origin(value) else "external"
    return "external"

