"""The facade's read path (issue 11): what memory Codex gets, where each line came from, how
often each is used. Methods of `Engine` (engine/__init__.py); they only read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .clock import parse_iso
from .codex.pipeline_snapshot import read_snapshot
from .facade_parts import FacadeParts
from .results import MemoryRows

if TYPE_CHECKING:
    from .read_path.agent_view import InjectedSummary
    from .read_path.citation_usage import CitationReport
    from .read_path.line_usage import CitingMessage, CitingSession, FileUsage
    from .read_path.preview import Preview
    from .read_path.said_remembered import SaidRemembered
    from .read_path.scope_map import ScopedBlock
    from .read_path.trace import Trace


class ReadPathMethods(FacadeParts):
    def citations(self) -> CitationReport:
        """Every citation of memory lines in the sessions, and the usage they add up to."""
        from .read_path.citation_usage import citation_report

        return citation_report(self.sessions(), self._citing_cache().stored)

    def memories(self) -> MemoryRows:
        """Stage-1 rows, newest first, with a warning when the pipeline DB is not readable
        as memdeck knows it."""
        snap = read_snapshot(self.home.pipeline_db, with_memories=True)
        rows = sorted(snap.outputs.values(), key=lambda o: (-o.source_updated_at, o.thread_id))
        if rows:
            from .read_path.usage_notes import with_citation_notes

            rows = with_citation_notes(rows, self._citing_messages(refresh=False))
        return MemoryRows(rows, (snap.warning,) if snap.warning else ())

    def memory_injected(self) -> InjectedSummary:
        """memory_summary.md as the agent gets it next session, with its token estimate."""
        from .read_path.agent_view import injected_summary

        self.home.__dict__.pop("config", None)  # the toggles may have changed since
        return injected_summary(self.home)

    def said_remembered(self, key: str, refresh: bool = True) -> SaidRemembered:
        """One session side by side: what the user and the agent said, the raw memory of
        its stage-1 row (or why there is none), the lines of today's memory it fed, and a
        kept / reworded / dropped verdict for each message and raw-memory line. `key` as
        `session` takes it. Only reads."""
        from .read_path.said_remembered import said_remembered

        detail = self.session(key, refresh=refresh)
        return said_remembered(self.home, detail.session, detail.entries)

    def trace(self, path: str, line: int, refresh: bool = False) -> Trace:
        """The evidence chain of today's line `line` (1-based) of a memory file (relative to
        the active root): its block, the rollout summary files it lists, their stage-1 rows,
        the sessions and the turns the fact came from, and who last changed the line. Reads
        the index as it is (`refresh`: catch it up with the disk first) and one rollout per
        summary. Raises `TraceLineError` for a line out of range, `NotFound` for no file."""
        from .memory_folder.edits import MemoryPathError, read_file
        from .read_path.trace import TraceLineError, trace_line

        try:
            f = read_file(self.home, path)
        except MemoryPathError as e:
            raise TraceLineError(str(e)) from None
        index = self.index
        if refresh:
            index.refresh()
        return trace_line(self.home, f.path, f.text, line, index.by_thread)

    def _citing_cache(self) -> Any:  # a CitingMessageCache (read_path/line_usage.py)
        """The citation events kept in memdeck's store: only the rollouts the index flagged
        are read, each parsed again only when its size or mtime changed."""
        from .read_path.citation_store import CitationStore
        from .read_path.line_usage import CitingMessageCache

        return self.__dict__.setdefault(  # setdefault: one cache when two threads ask
            "_citing_state", CitingMessageCache(CitationStore(self.store, self.home.root)))

    def _citing_messages(self, refresh: bool = True) -> list[CitingMessage]:
        """Every citing assistant message of the indexed rollouts (`_citing_cache`)."""
        from .read_path.line_usage import RolloutRef

        messages: list[CitingMessage] = self._citing_cache().messages(
            RolloutRef(path, thread, cwd)
            for path, thread, cwd in self.index.citing_candidates(refresh=refresh))
        return messages

    def line_usage(self, path: str, refresh: bool = True) -> FileUsage:
        """The gutter of a memory file (relative to the active root): per line how often and
        when last it was cited (citations of older versions mapped through history), never-
        cited lines, the drop-out date under `max_unused_days`, and the cited lines since
        removed. `refresh=False`: the index as it is (the app's watcher keeps it current)."""
        from .memory_folder.edits import read_file
        from .read_path.line_usage import file_usage

        f = read_file(self.home, path)
        self.home.__dict__.pop("config", None)
        rows = read_snapshot(self.home.pipeline_db).outputs
        return file_usage(self.home, f.path, f.text, self._citing_messages(refresh), rows,
                          self.home.config.max_unused_days, self.clock.now())

    def citing_sessions(self, path: str, line: int) -> list[CitingSession]:
        """The sessions that cited today's line `line` of a memory file, newest first, each
        with the transcript index of its citing message."""
        from .memory_folder.edits import read_file
        from .read_path.line_usage import citing_sessions

        f = read_file(self.home, path)
        return citing_sessions(self.home, f.path, f.text, line, self._citing_messages())

    def preview(self) -> Preview:
        """What the next session will be given of memory, and how it differs from what the
        most recent session that got memory received."""
        from .read_path.preview import RolloutToSearch, preview

        self.home.__dict__.pop("config", None)
        rollouts = [RolloutToSearch(s.path, s.thread_id,
                                    parse_iso(s.started_at) or float(s.updated_at))
                    for s in self.index.sessions(refresh=True)]
        return preview(self.home, rollouts)

    def scope_map(self) -> list[ScopedBlock]:
        """Every block of the live memory with the projects it applies to and was taught in,
        and why it leaks, if it does (read_path/scope_map.py). Only reads."""
        from .read_path.scope_map import scope_map

        root = self.home.memory_root
        files: dict[str, str] = {}
        if root.is_dir() and not root.is_symlink():
            for p in sorted(root.rglob("*.md")):
                rel = p.relative_to(root)
                if p.is_file() and not any(part.startswith(".") for part in rel.parts) \
                        and rel.parts[0] not in ("skills", "extensions", "memdeck"):
                    files[rel.as_posix()] = p.read_text(encoding="utf-8", errors="replace")
        projects = [s.cwd for s in self.index.sessions() if s.cwd]
        return scope_map(files, projects)
