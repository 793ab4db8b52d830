"""What the facade's method groups share: `Engine` defines these; the groups kept in their own
modules (facade_reads.py, facade_changes.py) declare them here, for the type checker, so that
each group reads as a plain class of methods on the one `Engine`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .clock import Clock
    from .codex.home import CodexHome
    from .index.session_index import SessionIndex
    from .index.sessions import Session
    from .read_path.scope_map import ScopedBlock
    from .results import SessionDetail
    from .store import Store


class FacadeParts:
    """The home, its clock, memdeck's store and index, and the session look-ups."""

    home: CodexHome
    clock: Clock
    read_only_reason: str

    if TYPE_CHECKING:
        @property
        def store(self) -> Store: ...

        @property
        def index(self) -> SessionIndex: ...

        def sessions(self, refresh: bool = True) -> list[Session]: ...

        def session(self, key: str, refresh: bool = True) -> SessionDetail: ...

        def scope_map(self) -> list[ScopedBlock]: ...
