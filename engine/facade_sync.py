"""The facade's sharing through git remotes (engine/sync/): remotes, push, pull and the
resolution of a pull's conflicts. Methods of `Engine` (engine/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .facade_changes import MemoryFolderMethods

if TYPE_CHECKING:
    from .phase2.conflicts import Conflict
    from .phase2.proposals import Proposal
    from .sync.push_pull import PushResult, SyncStatus
    from .sync.repo import Remote


class SyncMethods(MemoryFolderMethods):
    """Built on the memory folder's changes: a push reads the folder under its writer."""

    def remotes(self) -> list[Remote]:
        from .sync.push_pull import sync_repo

        repo = sync_repo(self.home)
        return repo.remotes() if (repo.gitdir / "HEAD").is_file() else []

    def remote_add(self, name: str, url: str, scope: str | None = None,
                   personal: bool = False) -> Remote:
        """A git remote to share the memory with (`scope`: only that project's blocks)."""
        from .sync.push_pull import sync_repo

        return sync_repo(self.home).add_remote(name, url, scope, personal)

    def remote_remove(self, name: str) -> None:
        from .sync.push_pull import sync_repo

        sync_repo(self.home).remove_remote(name)

    def push(self, remote: str | None = None) -> PushResult:
        """The live memory folder's shared form to `remote` (the only one when None)."""
        from .sync.push_pull import push

        self.record_outside_edits()  # what is pushed is a state memdeck's history holds
        writer = self._writer()
        with writer.change(recover=False):  # no change of the folder while it is read
            return push(self.home, self.store, self.clock, remote)

    def pull(self, remote: str | None = None) -> Proposal | None:
        """A proposal merging `remote`'s memory into this machine's (None: nothing new)."""
        from .sync.push_pull import pull

        self.home.require_writable_version()
        self._recover()
        self.record_outside_edits()
        return pull(self.home, self.store, self.clock, remote)

    def pull_conflicts(self, pid: str) -> list[Conflict]:
        from .phase2.conflicts import conflicts

        return conflicts(self.home, pid)

    def resolve_conflict(self, pid: str, n: int, take: str,
                         lines: list[str] | None = None) -> list[Conflict]:
        """Resolve conflict `n` (from 1) of pull proposal `pid`: ours, theirs, both, or
        edit with `lines`; returns the conflicts left."""
        from .sync.push_pull import resolve_conflict

        return resolve_conflict(self.home, self.store, pid, n, take, lines)

    def sync_status(self, remote: str) -> SyncStatus:
        """How far this machine and `remote` are apart (it fetches: call from a worker)."""
        from .sync.push_pull import status

        return status(self.home, self.store, remote)
