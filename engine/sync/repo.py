"""`memdeck/sync.git`: the repository a home shares its memory through (a bare repository;
plain git, so any git tool can read it). Its branch `memdeck/<version>` holds the shared
form of the memory folder (sync/shared.py), one commit per state pushed, each with the
`Memdeck-Origin` of the state it shares and the machine it came from; the remotes are git
remotes of this repository. Git does the transport: its credential helpers and ssh agent,
never a password of memdeck's (`GIT_TERMINAL_PROMPT=0`: a remote that wants one fails with
git's own line instead of waiting for a prompt nobody sees).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import MemdeckError

BRANCH = "memdeck/{version}"
TRAILER = "Memdeck-Origin"
MACHINE = "Memdeck-Machine"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


class SyncError(MemdeckError):
    """A remote operation that could not be done: one line, nothing changed locally."""


@dataclass(frozen=True)
class Remote:
    name: str
    url: str
    scope: str | None  # a project: only its blocks travel (sync/shared.py `scoped`)
    personal: bool  # User Profile and preferences travel to a scoped remote too

    @property
    def shown(self) -> str:
        """The URL without a `user:token@` in it: what memdeck prints."""
        return re.sub(r"://[^/@\s]+@", "://", self.url)


def _quiet_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="", LC_ALL="C",
               GIT_CONFIG_NOSYSTEM="1")
    return env


class SyncRepo:
    def __init__(self, gitdir: Path) -> None:
        self.gitdir = gitdir

    # -- plumbing ------------------------------------------------------------------------------
    def git(self, *args: str, input: bytes | None = None, check: bool = True,
            timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
        if not (self.gitdir / "HEAD").is_file():
            self.gitdir.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "init", "-q", "--bare", str(self.gitdir)], check=True,
                           env=_quiet_env(), capture_output=True)
        r = subprocess.run(["git", "--git-dir", str(self.gitdir), *args], input=input,
                           capture_output=True, env=_quiet_env(), timeout=timeout)
        if check and r.returncode != 0:
            raise SyncError(_git_line(r.stderr) or f"git {args[0]} failed")
        return r

    def out(self, *args: str) -> str:
        return self.git(*args).stdout.decode("utf-8", "replace").strip()

    def rev(self, ref: str) -> str | None:
        r = self.git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
        return r.stdout.decode().strip() or None if r.returncode == 0 else None

    def write_tree(self, files: Mapping[str, bytes]) -> str:
        """A tree object of `files` (relative POSIX paths), subtrees made as needed."""
        dirs: dict[str, dict[str, tuple[str, str]]] = {"": {}}
        blobs = self._blobs(files)
        for rel in sorted(files):
            blob = blobs[rel]
            parts = rel.split("/")
            for i in range(1, len(parts)):
                dirs.setdefault("/".join(parts[:i]), {})
            dirs["/".join(parts[:-1])][parts[-1]] = ("100644 blob", blob)
        for d in sorted(dirs, key=lambda x: -x.count("/") if x else 1):
            if not d:
                continue
            entries = "".join(f"{m} {sha}\t{n}\n" for n, (m, sha) in sorted(dirs[d].items()))
            sha = self.git("mktree", input=entries.encode()).stdout.decode().strip()
            parent, _, name = d.rpartition("/")
            dirs[parent][name] = ("040000 tree", sha)
        entries = "".join(f"{m} {sha}\t{n}\n" for n, (m, sha) in sorted(dirs[""].items()))
        return self.git("mktree", input=entries.encode()).stdout.decode().strip()

    def _blobs(self, files: Mapping[str, bytes]) -> dict[str, str]:
        """Every file stored as a blob, in one `git hash-object` (path → its sha)."""
        import tempfile

        names = sorted(files)
        if not names:
            return {}
        with tempfile.TemporaryDirectory(prefix="memdeck-blobs-") as d:
            paths = []
            for i, rel in enumerate(names):
                p = Path(d) / str(i)
                p.write_bytes(files[rel])
                paths.append(str(p))
            shas = self.git("hash-object", "-w", "--stdin-paths",
                            input="\n".join(paths).encode() + b"\n").stdout.split()
        return {rel: sha.decode() for rel, sha in zip(names, shas, strict=True)}

    def read_tree(self, rev: str | None) -> dict[str, bytes]:
        """Every file of `rev`'s tree, read in one `git cat-file --batch`."""
        if rev is None:
            return {}
        listing = self.git("ls-tree", "-r", "-z", rev).stdout.split(b"\0")
        wanted: list[tuple[str, str]] = []
        for entry in listing:
            meta, _, name = entry.partition(b"\t")
            if entry and meta.split()[1] == b"blob":
                wanted.append((name.decode("utf-8", "replace"), meta.split()[2].decode()))
        if not wanted:
            return {}
        data = self.git("cat-file", "--batch",
                        input="".join(f"{sha}\n" for _, sha in wanted).encode()).stdout
        out: dict[str, bytes] = {}
        at = 0
        for rel, _ in wanted:  # `<sha> blob <size>\n<bytes>\n`, in the order asked
            eol = data.index(b"\n", at)
            size = int(data[at:eol].split()[2])
            out[rel] = data[eol + 1:eol + 1 + size]
            at = eol + 1 + size + 1
        return out

    def commit(self, tree: str, parents: list[str], message: str, when: float,
               author: tuple[str, str]) -> str:
        env_args = []
        for p in parents:
            env_args += ["-p", p]
        stamp = f"{int(when)} +0000"
        r = subprocess.run(
            ["git", "--git-dir", str(self.gitdir), "commit-tree", tree, *env_args],
            input=message.encode(), capture_output=True,
            env={**_quiet_env(), "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1],
                 "GIT_COMMITTER_NAME": author[0], "GIT_COMMITTER_EMAIL": author[1],
                 "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
        if r.returncode != 0:
            raise SyncError(_git_line(r.stderr) or "git commit-tree failed")
        return r.stdout.decode().strip()

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.git("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        r = self.git("merge-base", a, b, check=False)
        return r.stdout.decode().strip() or None if r.returncode == 0 else None

    # -- remotes -------------------------------------------------------------------------------
    def remotes(self) -> list[Remote]:
        r = self.git("config", "--get-regexp", r"^remote\..*\.url$", check=False)
        out = []
        for line in r.stdout.decode().splitlines():
            key, _, url = line.partition(" ")
            name = key[len("remote."):-len(".url")]
            scope = self.config(f"remote.{name}.memdeckScope")
            personal = self.config(f"remote.{name}.memdeckPersonal") == "true"
            out.append(Remote(name, url, scope, personal))
        return sorted(out, key=lambda x: x.name)

    def config(self, key: str) -> str | None:
        r = self.git("config", "--get", key, check=False)
        return r.stdout.decode().strip() or None if r.returncode == 0 else None

    def add_remote(self, name: str, url: str, scope: str | None, personal: bool) -> Remote:
        if not _NAME.match(name):
            raise SyncError(f"{name!r} is not a remote name (letters, digits, . _ -)")
        if any(r.name == name for r in self.remotes()):
            raise SyncError(f"remote {name} already exists; remove it first "
                            f"(memdeck remote remove {name})")
        self.git("remote", "add", name, url)
        if scope:
            self.git("config", f"remote.{name}.memdeckScope", scope)
        if personal:
            self.git("config", f"remote.{name}.memdeckPersonal", "true")
        return Remote(name, url, scope, personal)

    def remove_remote(self, name: str) -> None:
        self.remote(name)
        self.git("remote", "remove", name)

    def remote(self, name: str | None) -> Remote:
        remotes = self.remotes()
        if name is None:
            if len(remotes) == 1:
                return remotes[0]
            raise SyncError("no remote named: add one with memdeck remote add NAME URL"
                            if not remotes else "several remotes: name the one to use ("
                            + ", ".join(r.name for r in remotes) + ")")
        for r in remotes:
            if r.name == name:
                return r
        raise SyncError(f"no remote {name}: memdeck remote list shows them")


def machine() -> str:
    return socket.gethostname() or "unknown"


def _git_line(stderr: bytes) -> str:
    """Git's own reason, in one line (its `fatal:` / `error:` line, credentials never
    echoed: git prints none)."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    key = [ln for ln in lines if ln.startswith(("fatal:", "error:", "! ["))]
    line = (key or lines or [""])[0]
    return re.sub(r"://[^/@\s]+@", "://", line)  # a user:token@ in a URL is not repeated
