"""`push` and `pull` (issue 26, items 4–8): the memory folder's shared form to a git remote,
and the remote's back as a proposal.

A push records the live folder (memdeck's history has it first), takes its shared form
(sync/shared.py; only the remote's project for a scoped remote), refuses it when a line
holds a secret, and commits it on `memdeck/<version>` with, as parents, the last state
pushed and every remote state a pull brought in that was accepted since. It is a plain
`git push`: a remote that moved on since the last pull rejects it (pull first), one that
cannot be reached says so in git's words; nothing local changes either way.

A pull fetches the remote's `memdeck/<version>`, refuses a history memdeck did not write,
and merges the remote's state with this machine's against their common base
(sync/merge.py) into a proposal: the same review, the same journaled accept as a
consolidation. Its conflicts are kept beside it (`conflicts.json`) and the accept is refused
until each is resolved. The remote commit it merges is kept as `refs/memdeck/pulls/<id>`,
so the next push carries it as a parent once the proposal is accepted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..clock import Clock
from ..codex.home import CodexHome
from ..content_gate import line_findings
from ..phase2.conflicts import Conflict, conflicts, save_conflicts
from ..phase2.file_proposal import propose_files
from ..phase2.proposals import (
    Proposal,
    changed_files,
    get,
    write_diff,
)
from ..phase2.workspace import validate_artifacts
from ..store import Store
from .merge import merge_trees, resolve
from .repo import BRANCH, MACHINE, TRAILER, Remote, SyncError, SyncRepo, machine
from .shared import read_root, scoped, shared, unshared

PULLS = "refs/memdeck/pulls/"


@dataclass(frozen=True)
class PushResult:
    remote: str
    commit: str | None  # None: nothing new to push
    files: int
    merged_pulls: int
    message: str


def sync_repo(home: CodexHome) -> SyncRepo:
    return SyncRepo(home.memdeck_dir / "sync.git")


def _branch(home: CodexHome, remote: Remote | None = None) -> str:
    base = BRANCH.format(version=home.memory_version)
    return f"{base}-{remote.name}" if remote and remote.scope else base


def _tracking(home: CodexHome, remote: Remote) -> str:
    return f"refs/remotes/{remote.name}/{BRANCH.format(version=home.memory_version)}"


def fetch(repo: SyncRepo, home: CodexHome, remote: Remote) -> str | None:
    """The remote's head of this memory version (None: it has none yet)."""
    branch = BRANCH.format(version=home.memory_version)
    r = repo.git("fetch", "--quiet", "--no-tags", remote.name,
                 f"+refs/heads/{branch}:{_tracking(home, remote)}", check=False, timeout=300)
    if r.returncode != 0:
        why = r.stderr.decode("utf-8", "replace")
        if "couldn't find remote ref" in why or "could not find remote ref" in why:
            return None
        from .repo import _git_line

        raise SyncError(f"remote {remote.name} ({remote.shown}) cannot be read: "
                        f"{_git_line(r.stderr)}; nothing changed here, run it again later")
    return repo.rev(_tracking(home, remote))


def _author(repo: SyncRepo) -> tuple[str, str]:
    name = repo.config("user.name")
    email = repo.config("user.email")
    return (name or "memdeck", email or f"memdeck@{machine()}")


def _accepted_pulls(repo: SyncRepo, store: Store, remote: Remote) -> list[tuple[str, str]]:
    """(ref, remote commit) of this remote's pulls whose proposal was accepted; the refs of
    rejected ones are dropped."""
    out = []
    r = repo.git("for-each-ref", "--format=%(refname) %(objectname)", PULLS, check=False)
    for line in r.stdout.decode().splitlines():
        ref, _, sha = line.partition(" ")
        pid = ref[len(PULLS):]
        try:
            p = get(store, pid)
        except Exception:  # noqa: BLE001 - a proposal gone from the store: nothing to carry
            repo.git("update-ref", "-d", ref, check=False)
            continue
        if p.backend != f"pull:{remote.name}":
            continue
        if p.status in ("accepted", "partial"):
            out.append((ref, sha))
        elif p.status == "rejected":
            repo.git("update-ref", "-d", ref, check=False)
    return out


def push(home: CodexHome, store: Store, clock: Clock, name: str | None) -> PushResult:
    repo = sync_repo(home)
    remote = repo.remote(name)
    files = shared(read_root(home.memory_root))
    if remote.scope:
        files = scoped(files, remote.scope, remote.personal)
    for rel, data in sorted(files.items()):
        text = data.decode("utf-8", "replace")
        for no, line in enumerate(text.splitlines(), 1):
            found = [f for f in line_findings(line) if f.kind != "control-character"]
            if found:
                raise SyncError(f"not pushed: {rel}:{no} holds a secret ({found[0].kind}); "
                                "remove it (memdeck purge-secret, or edit the file) and push "
                                "again")
    theirs = fetch(repo, home, remote)
    branch = f"refs/heads/{_branch(home, remote)}"
    mine = repo.rev(branch)
    pulled = _accepted_pulls(repo, store, remote)
    parents = [mine] if mine else []
    parents += [sha for _, sha in pulled if not (mine and repo.is_ancestor(sha, mine))]
    if theirs and not any(p == theirs or repo.is_ancestor(theirs, p) for p in parents):
        raise SyncError(f"remote {remote.name} has memory this machine has not taken yet: "
                        f"run memdeck pull {remote.name}, accept it, then push; nothing was "
                        "pushed")
    tree = repo.write_tree(files)
    head_tree = repo.out("rev-parse", f"{mine}^{{tree}}") if mine else None
    if mine and head_tree == tree and len(parents) == 1 and theirs == mine:
        return PushResult(remote.name, None, len(files), 0, "already pushed")
    if not (mine and head_tree == tree and len(parents) == 1):
        from ..memory_folder.history import origin_of

        last = _last_history(home)
        origin = origin_of(last[1]) if last else "start"
        summary = last[1].splitlines()[0] if last else "the memory folder"
        message = (f"{summary}\n\nshared from {machine()} ({home.memory_version}"
                   + (f", project {remote.scope}" if remote.scope else "") + ")\n\n"
                   f"{TRAILER}: {origin}\n{MACHINE}: {machine()}\n"
                   + (f"Memdeck-History: {last[0]}\n" if last else ""))
        mine = repo.commit(tree, parents, message, clock.now(), _author(repo))
        repo.git("update-ref", branch, mine)
    r = repo.git("push", "--quiet", remote.name,
                 f"{mine}:refs/heads/{BRANCH.format(version=home.memory_version)}",
                 check=False, timeout=300)
    if r.returncode != 0:
        from .repo import _git_line

        why = _git_line(r.stderr)
        if "rejected" in why or "non-fast-forward" in why or "fetch first" in why:
            raise SyncError(f"remote {remote.name} moved on while pushing: run memdeck pull "
                            f"{remote.name} and push again; nothing was lost here")
        raise SyncError(f"remote {remote.name} ({remote.shown}) did not take the push: {why}; "
                        "nothing was lost here, push again later")
    repo.git("update-ref", _tracking(home, remote), mine)
    for ref, _ in pulled:
        repo.git("update-ref", "-d", ref, check=False)
    return PushResult(remote.name, mine, len(files), len(parents) - 1 if parents else 0,
                      f"pushed {len(files)} files to {remote.name}")


def _last_history(home: CodexHome) -> tuple[str, str] | None:
    """(commit, message) of memdeck's newest history entry, if it has one."""
    from .repo import SyncRepo as _Git

    hist = _Git(home.history_git)
    if not (home.history_git / "HEAD").exists():
        return None
    sha = hist.rev("HEAD")
    return (sha, hist.out("log", "-1", "--format=%B", sha)) if sha else None


# -- pull -------------------------------------------------------------------------------------
def pull(home: CodexHome, store: Store, clock: Clock, name: str | None) -> Proposal | None:
    """A proposal merging the remote's memory into this machine's; None when this machine
    already has all of it."""
    repo = sync_repo(home)
    remote = repo.remote(name)
    if remote.scope:
        raise SyncError(f"remote {remote.name} only takes project {remote.scope}'s memory "
                        "(push only); pull from a remote added without --scope")
    theirs = fetch(repo, home, remote)
    if theirs is None:
        r = repo.git("ls-remote", "--heads", remote.name, "memdeck/*", check=False)
        others = sorted(ln.rsplit("/", 1)[-1] for ln in r.stdout.decode().splitlines())
        if others:
            raise SyncError(f"remote {remote.name} has memory {', '.join(others)}, not "
                            f"{home.memory_version} as this home uses: set [memories] version "
                            "the same on both machines")
        raise SyncError(f"remote {remote.name} has no memory {home.memory_version} yet: push "
                        "it from the machine that has it")
    head_msg = repo.out("log", "-1", "--format=%B", theirs)
    if f"{TRAILER}:" not in head_msg:
        raise SyncError(f"remote {remote.name}'s {BRANCH.format(version=home.memory_version)} "
                        "has commits memdeck did not write; nothing was pulled (check the "
                        "URL, or push to an empty repository)")
    mine = repo.rev(f"refs/heads/{_branch(home)}")
    taken = [sha for _, sha in _accepted_pulls(repo, store, remote)]
    if any(t == theirs or repo.is_ancestor(theirs, t) for t in [*taken, mine] if t):
        return None
    base = None
    for known in [mine, *taken]:
        if known:
            b = repo.merge_base(known, theirs)
            base = b if base is None or (b and repo.is_ancestor(base, b)) else base
    root = home.memory_root
    local = read_root(root)
    merged = merge_trees(repo.read_tree(base), shared(local), repo.read_tree(theirs))
    files = unshared(merged.files, local)
    if files == local and not merged.conflicts:
        return None
    p = propose_files(home, store, clock.now(), f"pull:{remote.name}", theirs[:12], files,
                      removed=set(local) - set(files),
                      problems=[_conflict_line(c, remote.name) for c in merged.conflicts],
                      before_record=lambda pid: save_conflicts(home, pid, merged.conflicts))
    repo.git("update-ref", f"{PULLS}{p.id}", theirs)
    return p


def _conflict_line(c: Conflict, remote: str) -> str:
    return (f"conflict: {c.path} line {c.at + 1}: this machine and {remote} changed the same "
            f"lines ({len(c.ours)} here, {len(c.theirs)} there); resolve it before accepting")


def resolve_conflict(home: CodexHome, store: Store, pid: str, n: int, take: str,
                     lines: list[str] | None = None) -> list[Conflict]:
    """Resolve conflict `n` (from 1) of a pull proposal: `take` = ours | theirs | both |
    edit (`lines`). The workspace file is rewritten, the diff and the problems updated;
    returns the conflicts left."""
    p = get(store, pid)
    if p.status != "pending":
        raise SyncError(f"proposal {pid} is {p.status}, not pending")
    left = conflicts(home, pid)
    if not 1 <= n <= len(left):
        raise SyncError(f"proposal {pid} has {len(left)} conflicts; there is no conflict {n}")
    c = left.pop(n - 1)
    chosen = {"ours": c.ours, "theirs": c.theirs, "both": c.ours + c.theirs,
              "edit": lines or []}.get(take)
    if chosen is None:
        raise SyncError(f"{take!r}: take ours, theirs, both or edit")
    pdir = home.proposals_dir / pid
    ws = pdir / "workspace"
    target = ws / c.path
    text = resolve(target.read_text(encoding="utf-8"), c, chosen)
    target.write_text(text, encoding="utf-8")
    shift = len(chosen) - len(c.ours)
    for other in left:
        if other.path == c.path and other.at > c.at:
            other.at += shift
    save_conflicts(home, pid, left)
    root = home.memory_root
    changed = changed_files(root, ws)
    secrets = write_diff(root, ws, changed, pdir / "proposal.diff")
    problems = validate_artifacts(ws, home.memory_version, live=root) + [
        _conflict_line(x, p.backend.removeprefix("pull:")) for x in left]
    with store.transaction() as db:
        db.execute("UPDATE proposals SET files = ?, secrets = ?, problems = ? WHERE id = ?",
                   (json.dumps(changed), json.dumps(secrets), json.dumps(problems), pid))
    return left


def drop_sync_ref(home: CodexHome, pid: str) -> None:
    repo = sync_repo(home)
    if (repo.gitdir / "HEAD").is_file():
        repo.git("update-ref", "-d", f"{PULLS}{pid}", check=False)



@dataclass(frozen=True)
class SyncStatus:
    """One remote as the Sync view shows it: how far apart this machine and the remote are,
    when this machine last pushed and pulled, and what a pull would bring."""

    remote: Remote
    reachable: bool
    problem: str  # why not, in one line; "" when reachable
    ahead: int  # states pushed here since the remote's head (this machine's, not there yet)
    behind: int  # remote states this machine has not taken
    last_push: float | None
    last_pull: float | None  # the newest accepted pull from this remote
    incoming: list[str]  # files a pull would change (the remote's tree vs the live shared form)


def status(home: CodexHome, store: Store, name: str) -> SyncStatus:
    repo = sync_repo(home)
    remote = repo.remote(name)
    try:
        theirs = fetch(repo, home, remote)
        problem = ""
    except SyncError as e:
        theirs, problem = repo.rev(_tracking(home, remote)), str(e)
    mine = repo.rev(f"refs/heads/{_branch(home, remote)}")
    taken = [sha for _, sha in _accepted_pulls(repo, store, remote)]
    known = [k for k in [mine, *taken] if k]  # what this machine has of the remote's
    ahead = int(repo.out("rev-list", "--count", mine, *(["--not", theirs] if theirs else [])))\
        if mine else 0
    behind = 0
    if theirs:
        behind = min((int(repo.out("rev-list", "--count", f"{k}..{theirs}")) for k in known),
                     default=int(repo.out("rev-list", "--count", theirs)))
    last_push = float(repo.out("log", "-1", "--format=%ct", mine)) if mine else None
    # an accepted pull not pushed yet, or the newest merge the pushes carried
    pulled = [get(store, r[len(PULLS):]).created_at
              for r, _ in _accepted_pulls(repo, store, remote)]
    merged = repo.out("log", "-1", "--merges", "--format=%ct", mine) if mine else ""
    pulled += [float(merged)] if merged else []
    incoming: list[str] = []
    if theirs and behind:
        local = shared(read_root(home.memory_root))
        if remote.scope:
            local = scoped(local, remote.scope, remote.personal)
        remote_files = repo.read_tree(theirs)
        incoming = sorted(p for p in set(local) | set(remote_files)
                          if local.get(p) != remote_files.get(p) and p in remote_files)
    return SyncStatus(remote, not problem, problem, ahead, behind, last_push,
                      max((t for t in pulled if t), default=None), incoming)
