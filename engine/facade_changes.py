"""The facade's changes of the memory folder: forget, reset and backups, accept, history and
restore, the user's edits and notes. Methods of `Engine` (engine/__init__.py); each goes
through the memory folder's writer (memory_folder/writer.py), whose journal makes it
old-or-new whatever kills memdeck."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .facade_parts import FacadeParts
from .index.sessions import find_session

if TYPE_CHECKING:
    from .memory_folder.backup import Backup
    from .memory_folder.edits import MemoryFileInfo, MemoryFileText, MemoryNote, MemorySaved
    from .memory_folder.history import HistoryEntry
    from .memory_folder.purge import Purged
    from .memory_folder.writer import MemoryFolderWriter
    from .phase1.forget import ForgetResult
    from .phase2.proposals import Proposal


class MemoryFolderMethods(FacadeParts):
    def forget(self, key: str) -> ForgetResult:
        """Forget a session as Codex does: memory mode disabled, its raw memory deleted,
        phase 2 enqueued when that memory was in use."""
        from .index.extract_log import ForgottenSession, record_forgotten
        from .memory_folder.forget_change import forget

        self.home.require_writable_version()
        writer = self._writer()
        r = forget(writer, find_session(self.sessions(), key))
        if r.line_no:  # the listing then says the user forgot it, not "switched off"
            try:
                record_forgotten(self.store.conn(), self.home.memory_version, ForgottenSession(
                    r.thread_id, int(self.clock.now()), r.line_no, r.phase2_enqueued))
            except Exception as e:  # noqa: BLE001 - the forget is done; only its wording is
                import logging

                logging.getLogger(__name__).warning(
                    "memdeck could not note the forget of %s: %s", r.thread_id, e)
        return r

    def reset(self) -> Backup:
        """Back up, then clear what Codex's reset clears. Returns the backup."""
        from .memory_folder.backup import reset

        writer = self._writer()
        return reset(writer)

    def backups(self) -> list[Backup]:
        from .memory_folder.backup import list_backups

        return list_backups(self.home)

    def restore_backup(self, backup_id: str) -> Backup:
        """Restore a backup byte for byte; returns the backup taken of the state replaced."""
        from .memory_folder.backup import restore_backup

        writer = self._writer()
        return restore_backup(writer, backup_id)

    def _writer(self) -> MemoryFolderWriter:
        """The memory folder's writer, with the recovery it runs before every change (what a
        killed memdeck left: memory_folder/leftovers.py) handed in from here."""
        from .memory_folder.leftovers import recover
        from .memory_folder.writer import MemoryFolderWriter

        return MemoryFolderWriter(self.home, self.clock, lambda: self.store, recover)

    def _recover(self, *, wait: bool = True) -> str | None:
        """A change of the memory folder a crash interrupted is finished (or, before its
        journal, forgotten) and a killed memdeck's leftovers cleared, before anything else
        touches the home: one line saying what was done, or None."""

        writer = self._writer()
        return writer.recover(wait=wait)

    def recover(self) -> str | None:
        """What every command runs when it opens the home (see `_recover`); it does not
        wait while another memdeck is changing the folder (nothing is left over then)."""
        return self._recover(wait=False)

    def accept(self, pid: str, files: list[str] | None = None,
               hunks: dict[str, list[int]] | None = None) -> Proposal:
        """Apply a proposal (all of it, chosen files, or chosen hunks) to the memory root."""
        from .memory_folder.accept import accept

        self.home.require_writable_version()
        writer = self._writer()
        return accept(writer, pid, files, hunks)

    def record_outside_edits(self) -> str | None:
        """Commit the memory root to memdeck's history if the history does not hold its
        current state yet (a change memdeck did not make: `codex` or `external`). Returns the
        new commit, None when there was nothing to record."""

        if self.home.config_problem or self.read_only_reason:
            return None  # which root is live is not known / nothing can be recorded here
        # under the writer's lock: a snapshot taken while a note or an edit is being committed
        # would stage its file, then commit nothing but an empty "outside" entry
        writer = self._writer()
        with writer.change(recover=False) as change:
            return change.before()

    def history(self) -> list[HistoryEntry]:
        """Commits of memdeck's history repository, newest first. Only reads: call
        `record_outside_edits` first to have the root's current state in it."""
        from .memory_folder.history import History

        return History(self.home, self.clock).entries()

    def history_show(self, commit: str) -> tuple[HistoryEntry, str]:
        from .memory_folder.history import History

        return History(self.home, self.clock).show(commit)

    def restore(self, commit: str) -> str:
        """Make the memory root what it was at `commit`, as a new commit; nothing is lost."""
        from .memory_folder.restore import restore

        self.home.require_writable_version()
        writer = self._writer()
        return restore(writer, commit)

    def purge_secret(self, text: str) -> Purged:
        """Replace `text` with the redaction marker in history, Codex's baseline, backups and
        proposals (refused while the live folder or a raw memory still holds it)."""
        from .memory_folder.purge import purge_secret

        writer = self._writer()
        with writer.change():
            return purge_secret(self.home, text)

    def memory_files(self) -> list[MemoryFileInfo]:
        """The memory root's files (summary and MEMORY.md first); empty when it is missing.
        Files Codex imported from another agent's memory are kind `imported`, each resource
        with its project's `scope` (scope.json)."""
        from .memory_folder.edits import list_files

        return list_files(self.home)

    def memory_read(self, path: str) -> MemoryFileText:
        """A memory file's text and the version token a later save names (an imported file
        comes read-only, with its scope)."""
        from .memory_folder.edits import read_file

        return read_file(self.home, path)

    def memory_file_path(self, path: str) -> Path:
        """Where the memory file `path` (a name `memory_files` gave) is on disk."""
        from .memory_folder.edits import resolve

        return resolve(self.home, path)[0]

    def memory_save(self, path: str, text: str, base_version: str | None) -> MemorySaved:
        """Save a user's edit made from `base_version` (None: a new file). Raises
        `MemoryConflict` (nothing written) if the file changed on disk since."""
        from .memory_folder.edits import save_file

        writer = self._writer()
        return save_file(writer, path, text, base_version)

    def memory_note(self, text: str, kind: str = "remember") -> MemoryNote:
        """Add an ad-hoc note asking the next consolidation to remember or forget `text`."""
        from .memory_folder.edits import add_note

        writer = self._writer()
        return add_note(writer, text, kind)
