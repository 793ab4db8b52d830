"""The backups memdeck took before a reset or a restore, newest first."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable

from memdeck.engine import local_time_with_seconds


class BackupList(DataTable[Any]):
    """Backups (id, taken at, why); Enter on one asks the pane to restore it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.backups: list[Any] = []

    def on_mount(self) -> None:
        self.add_column("backup", width=22, key="id")
        self.add_column("taken at", key="created")
        self.add_column("why", key="reason")

    def fill(self, backups: list[Any]) -> None:
        self.backups = backups
        self.clear()
        for b in backups:
            self.add_row(b.id, local_time_with_seconds(b.created_at), b.reason_text, key=b.id)

    @property
    def current(self) -> Any | None:
        if not self.backups or self.cursor_row < 0:
            return None
        return self.backups[min(self.cursor_row, len(self.backups) - 1)]
