"""Purge a secret from everything memdeck keeps (`memdeck history --purge-secret TEXT`).

A secret that reached the memory folder (written by hand, say) stays in memdeck's history
after it is removed from the live folder, in Codex's baseline repository, in backups and in
proposals' workspaces, and a restore would put it back. Purging replaces every occurrence
of TEXT with `[REDACTED_SECRET]`:

- in every commit of memdeck's history repositories and of Codex's baseline repository
  (each commit rebuilt with the same author, dates and message, its text purged too; then
  the old objects are expired and pruned, so no git object holds it);
- in every backup (each archive rewritten whole, atomically);
- in every proposal's files.

First it refuses while the live memory folder still holds TEXT (remove it there first: the
next consolidation or a person's edit) or a stage-1 row does (forget that session), since
those would bring it back. The history repositories are copied into the staging folder
before they are rewritten and put back if anything fails; the copy is removed at the end.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..atomic import atomic_file, write_atomic
from ..codex.home import CodexHome
from ..errors import HomeError, MemdeckError
from ..redact import MARKER
from .journal import pipeline_dbs

MIN_CHARS = 8  # a shorter text would purge words, not a secret


@dataclass(frozen=True)
class Purged:
    commits: int  # commits rewritten
    backups: int  # archives rewritten
    files: int  # proposal files rewritten


def _git(gitdir: Path, *args: str, data: bytes | None = None) -> bytes:
    r = subprocess.run(["git", "--git-dir", str(gitdir), *args], input=data,
                       capture_output=True, env=_env())
    if r.returncode != 0:
        raise MemdeckError(f"git {args[0]} failed in {gitdir}: "
                           f"{r.stderr.decode(errors='replace').strip()[:200]}")
    return r.stdout


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _holds(data: bytes, secret: bytes) -> bool:
    return secret in data


def _rewrite_repo(gitdir: Path, secret: bytes) -> int:
    """Rebuild every commit reachable from any ref with `secret` replaced; returns how many
    commits changed. Objects are rewritten bottom-up (blobs, trees, commits) by hand: no
    `filter-branch`, which is slow and warns."""
    refs = [line.split() for line in _git(gitdir, "for-each-ref", "--format=%(objectname) "
                                                   "%(refname)").decode().splitlines()]
    if not refs:
        return 0
    order = _git(gitdir, "rev-list", "--topo-order", "--reverse",
                 *{sha for sha, _ in refs}).decode().split()
    blobs: dict[str, str] = {}
    trees: dict[str, str] = {}
    commits: dict[str, str] = {}

    def blob(sha: str) -> str:
        if sha not in blobs:
            data = _git(gitdir, "cat-file", "blob", sha)
            blobs[sha] = sha if secret not in data else _git(
                gitdir, "hash-object", "-w", "--stdin",
                data=data.replace(secret, MARKER.encode())).decode().strip()
        return blobs[sha]

    def tree(sha: str) -> str:
        if sha not in trees:
            raw = _git(gitdir, "ls-tree", "-z", sha)
            entries, changed = [], False
            for item in raw.split(b"\0"):
                if not item:
                    continue
                meta, name = item.split(b"\t", 1)
                mode, kind, obj = meta.decode().split()
                new = blob(obj) if kind == "blob" else tree(obj) if kind == "tree" else obj
                changed |= new != obj
                entries.append(f"{mode} {kind} {new}\t".encode() + name)
            trees[sha] = sha if not changed else _git(
                gitdir, "mktree", "-z", data=b"\0".join(entries) + b"\0").decode().strip()
        return trees[sha]

    rewritten = 0
    for sha in order:
        raw = _git(gitdir, "cat-file", "commit", sha)
        head, _, message = raw.partition(b"\n\n")
        lines = head.split(b"\n")
        out = []
        for line in lines:
            key, _, value = line.partition(b" ")
            if key == b"tree":
                value = tree(value.decode()).encode()
            elif key == b"parent":
                value = commits.get(value.decode(), value.decode()).encode()
            out.append(key + b" " + value)
        new_raw = b"\n".join(out) + b"\n\n" + message.replace(secret, MARKER.encode())
        if new_raw == raw:
            commits[sha] = sha
            continue
        commits[sha] = _git(gitdir, "hash-object", "-t", "commit", "-w", "--stdin",
                            data=new_raw).decode().strip()
        rewritten += 1
    for sha, ref in refs:
        if commits.get(sha, sha) != sha:
            _git(gitdir, "update-ref", ref, commits[sha], sha)
    if rewritten and (gitdir / "index").is_file():  # the index names the old blobs too
        _git(gitdir, "read-tree", "HEAD")
    # nothing may keep the old objects: no reflog, no loose or packed copy
    _git(gitdir, "reflog", "expire", "--expire=now", "--all")
    _git(gitdir, "gc", "--prune=now", "--quiet")
    return rewritten


def _rewrite_backup(path: Path, secret: bytes) -> bool:
    with tarfile.open(path, "r:gz") as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None)  # type: ignore[union-attr]
                   for m in tar.getmembers()]
    if not any(d is not None and secret in d for _, d in members):
        return False
    with atomic_file(path) as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
        for m, data in members:
            if data is not None:
                data = data.replace(secret, MARKER.encode())
                m.size = len(data)
            tar.addfile(m, io.BytesIO(data) if data is not None else None)
    return True


def _live_holds(home: CodexHome, secret: bytes) -> str | None:
    for root in (home.memory_root, *home.memory_roots_for_reset):
        if not root.is_dir():
            continue
        for p in root.rglob("*"):
            if ".git" in p.relative_to(root).parts or p.is_symlink() or not p.is_file():
                continue
            if secret in p.read_bytes():
                return f"{root.name}/{p.relative_to(root).as_posix()}"
    for db in pipeline_dbs(home):
        if db.is_file() and secret in db.read_bytes():
            return db.name
    return None


def purge_secret(home: CodexHome, text: str) -> Purged:
    """Replace `text` with the redaction marker in memdeck's history, Codex's baseline, the
    backups and the proposals. Call under the home's change lock."""
    if len(text) < MIN_CHARS or "\n" in text:
        raise MemdeckError(f"give the secret itself (one line, at least {MIN_CHARS} "
                           "characters), not a word that occurs in memory")
    secret = text.encode("utf-8")
    where = _live_holds(home, secret)
    if where is not None:
        raise MemdeckError(f"{where} still holds it; remove it there first (edit the file, or "
                           "forget the session its raw memory came from), then purge")
    repos = [g for g in sorted(home.memdeck_dir.glob("history*.git")) if g.is_dir()]
    baselines = [r / ".git" for r in (home.memory_root, *home.memory_roots_for_reset)
                 if (r / ".git").is_dir()]
    safety = home.memdeck_dir / "staging" / f"purge-{uuid.uuid4().hex[:8]}"
    safety.mkdir(parents=True)
    copies: list[tuple[Path, Path]] = []
    try:
        for g in [*repos, *baselines]:
            copy = safety / f"{len(copies)}.git"
            shutil.copytree(g, copy, symlinks=True)
            copies.append((g, copy))
        commits = 0
        for g, _ in copies:
            commits += _rewrite_repo(g, secret)
    except BaseException:
        for g, copy in copies:  # put every repository back as it was
            shutil.rmtree(g, ignore_errors=True)
            shutil.copytree(copy, g, symlinks=True)
        shutil.rmtree(safety, ignore_errors=True)
        raise
    shutil.rmtree(safety, ignore_errors=True)
    backups = sum(_rewrite_backup(p, secret) for p in sorted(home.backups_dir.glob("*.tar.gz")))
    files = 0
    if home.proposals_dir.is_dir():
        for p in home.proposals_dir.rglob("*"):
            if p.is_file() and not p.is_symlink() and ".git" not in p.parts:
                data = p.read_bytes()
                if secret in data:
                    write_atomic(p, data.replace(secret, MARKER.encode()))
                    files += 1
            elif p.is_dir() and p.name == ".git":
                commits += _rewrite_repo(p, secret)
    if not (commits or backups or files):
        raise HomeError("memdeck keeps no copy of that text (history, backups and proposals "
                        "were searched); nothing was changed")
    return Purged(commits, backups, files)

