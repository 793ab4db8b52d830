"""Finishing the change a killed memdeck left (docs/architecture.md "Changing the memory
folder"), run by leftovers.py under the home's lock when a journal or a staging folder is
there.

It imports every operation, so that the journal it reads finds its operation's rows step
(journal.py `ROW_STEPS`, filled by each operation's `@row_step`); a new operation is added to
`OPERATIONS` (tests/test_memory_folder_journal.py fails for one that is not). Nothing in the
switch or the writer imports an operation.
"""

from __future__ import annotations

import shutil

from ..errors import HomeError, MemdeckError
from . import accept, backup, edits, forget_change, restore
from .journal import Journal, JournalError, NewerJournal, UnknownJournal
from .switch import ChangedMeanwhile, complete, journal_path, staging_root
from .writer import Change

OPERATIONS = (accept, backup, edits, forget_change, restore)  # each registers its rows step


def finish_interrupted(change: Change) -> list[str]:
    """Finish or undo what a killed memdeck left: its journaled change, or an accept of a
    memdeck before the switch (accept.journal). A line for each thing done."""
    done = []
    for step in (recover_journaled, accept.recover_legacy):
        what = step(change)
        if what:
            done.append(what)
    return done


def recover_journaled(change: Change) -> str | None:
    """Finish the change a killed memdeck left journaled, or clear what it staged before its
    journal. Returns what was done ("finished <what>", "kept an outside change", "cleared"),
    None when there was nothing to do. Called under the home's lock."""
    journal, staging = journal_path(change), staging_root(change)
    if not journal.exists():
        if staging.is_dir() and any(staging.iterdir()):
            shutil.rmtree(staging)
            return "removed the staging folder an interrupted change left"
        return None
    try:
        data = Journal.loads(journal.read_text(encoding="utf-8"), change.writer.home, staging)
    except UnknownJournal as e:  # left as it is: only the memdeck that wrote it can finish it
        whose = "a newer memdeck was making" if isinstance(e, NewerJournal) else \
            "this memdeck does not know"
        raise HomeError(f"{journal} is the journal of a change {whose} ({e}); finish it "
                        "with the memdeck that wrote it, or move the file aside to give the "
                        "change up") from None
    except (JournalError, OSError, UnicodeDecodeError):
        # written atomically before anything moved: a damaged journal means nothing did
        # (and one naming folders that are not memdeck's is never followed)
        shutil.rmtree(staging, ignore_errors=True)
        journal.unlink(missing_ok=True)
        return "cleared a change that was never started"
    what = data.what
    try:
        complete(change, data)
    except ChangedMeanwhile:
        return f"undid an interrupted {what}: the memory folder had changed meanwhile"
    except MemdeckError as e:
        raise HomeError(f"cannot finish an interrupted {what} yet: {e}") from None
    except (OSError, ValueError, KeyError, TypeError) as e:  # its staged data is damaged
        raise HomeError(f"cannot finish an interrupted {what}: {type(e).__name__}: {e}; to "
                        f"give it up, move {journal} aside (the memory folder is as it was "
                        "or as the change left it, and history holds both)") from None
    return f"finished an interrupted {what}"
