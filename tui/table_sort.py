"""Sorting a table by any of its columns (issue 23, item 9), as lazygit and k9s do: `s` moves
the sort to the next column, `S` turns it round, a click on a column's title sorts by it (a
second click turns it round). The title of the sorted column carries ▲ or ▼.

A table starts in the engine's own order, which is a column's too (Sessions: updated, newest
first), so the arrow is there from the start and says what the order is. Sorting is stable and
puts rows without a value last either way round."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

UP, DOWN = "▲", "▼"


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    value: Callable[[Any], Any]  # what a row sorts by; None sorts last
    newest_first: bool = False  # the way round a first `s` on it picks (times, counts: down)


@dataclass(frozen=True)
class SortOrder:
    column: str
    descending: bool

    def reversed(self) -> SortOrder:
        return replace(self, descending=not self.descending)

    def next(self, columns: Sequence[Column]) -> SortOrder:
        keys = [c.key for c in columns]
        at = keys.index(self.column) if self.column in keys else -1
        col = columns[(at + 1) % len(columns)]
        return SortOrder(col.key, col.newest_first)

    def clicked(self, column: Column) -> SortOrder:
        """A click on `column`'s title: sort by it, or turn it round if it is the sort."""
        if column.key == self.column:
            return self.reversed()
        return SortOrder(column.key, column.newest_first)

    def apply(self, rows: Sequence[Any], columns: Sequence[Column]) -> list[Any]:
        col = next((c for c in columns if c.key == self.column), None)
        if col is None:  # the engine's order, newest first: turned round, oldest first
            return list(rows) if self.descending else list(reversed(rows))
        valued: list[Any] = []
        empty: list[Any] = []
        for r in rows:
            (empty if col.value(r) in (None, "") else valued).append(r)
        valued.sort(key=lambda r: _comparable(col.value(r)), reverse=self.descending)
        return valued + empty

    def title(self, key: str, title: str) -> str:
        """`title` with the arrow when `key` is the sorted column."""
        if key != self.column:
            return title
        return f"{title}{DOWN if self.descending else UP}"

    def describe(self, columns: Sequence[Column]) -> str:
        col = next((c for c in columns if c.key == self.column), None)
        name = col.title if col else self.column
        return f"sorted by {name}, {'descending' if self.descending else 'ascending'}"


def _comparable(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value
