"""Who made a state of the memory folder, as memdeck's history records it (the
`Memdeck-Origin:` trailer, history.py) and a change's journal names it (journal.py)."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

Origin = Literal["codex", "consolidation", "user", "external", "restore", "start", "pull"]
ORIGINS: tuple[Origin, ...] = get_args(Origin)
# what the app and the CLI call each origin (the trailer keeps the stored word)
ORIGIN_LABEL: dict[Origin, str] = {"codex": "Codex", "consolidation": "consolidation",
                                   "user": "user", "external": "outside",
                                   "restore": "restore", "start": "start",
                                   "pull": "pull"}  # another machine's memory, merged


def is_origin(text: str) -> TypeGuard[Origin]:
    return text in ORIGINS
