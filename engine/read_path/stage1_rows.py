"""The stage-1 rows a trace or said-vs-remembered needs, read on demand from the active
version's pipeline database (docs/codex-format.md "The stage1_outputs table"). Only reads:
a missing database gives no rows, a damaged one no rows and a `problem` in words."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from ..codex.memory_layout import rollout_summary_file_stem
from ..codex.pipeline_snapshot import STAGE1_COLUMNS, Stage1Output, row_to_output
from ..errors import MemdeckError
from ..store import connect, describe_sqlite_error


class Stage1Rows:
    """One pipeline database's `stage1_outputs`, a query per call (a trace asks for a few
    rows; the file-name index is built on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem = ""  # the last query's failure, in words; "" when none failed
        self._stems: dict[str, str] | None = None

    def _query(self, sql: str, args: Sequence[object] = ()) -> list[tuple[object, ...]]:
        if not self.path.exists():
            return []
        try:
            conn = connect(self.path, readonly=True)
        except MemdeckError as e:
            self.problem = str(e)
            return []
        try:
            conn.row_factory = None
            return list(conn.execute(sql, tuple(args)).fetchall())
        except sqlite3.Error as e:
            self.problem = describe_sqlite_error(self.path, e)
            return []
        finally:
            conn.close()

    def row(self, thread_id: str) -> Stage1Output | None:
        rows = self._query(f"SELECT {STAGE1_COLUMNS} FROM stage1_outputs WHERE thread_id = ?",
                           (thread_id,))
        return row_to_output(rows[0]) if rows else None

    def thread_of_file(self, file: str) -> str | None:
        """The thread whose row's slug gives this summary file name."""
        if self._stems is None:
            self._stems = {}
            for tid, updated, slug in self._query(
                    "SELECT thread_id, source_updated_at, rollout_slug FROM stage1_outputs"):
                stem = rollout_summary_file_stem(str(tid), int(str(updated or 0)),
                                                 None if slug is None else str(slug))
                self._stems.setdefault(f"rollout_summaries/{stem}.md", str(tid))
        return self._stems.get(file)


__all__ = ["Stage1Rows"]
