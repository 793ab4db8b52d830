"""The names `memdeck.engine` re-exports for the TUI and the CLI, each imported on first use
(engine/__init__.py's `__getattr__`). A name added here also gets one import under the
facade's `if TYPE_CHECKING:` block, for the type checker."""

# Names the TUI and the CLI use, re-exported here so that `memdeck.engine` is their only door;
# each is imported on first use (`from memdeck.engine import X` works), so importing the
# facade stays cheap. name -> the module (relative to memdeck.engine) that defines it.
LAZY: dict[str, str] = {
    # what the facade's methods return and raise
    "AcceptRefused": ".memory_folder.accept", "AddedSecret": ".phase2.proposals",
    "Backup": ".memory_folder.backup", "CitationEvent": ".read_path.citation_usage",
    "CitationReport": ".read_path.citation_usage", "ExtractReport": ".phase1.runner",
    "ExtractResult": ".phase1.runner", "ForgetResult": ".phase1.forget",
    "HistoryEntry": ".memory_folder.history", "Hunk": ".phase2.hunks",
    "ListingHead": ".index.listing_head",
    "ImportScope": ".codex.external_import",
    "InjectedSummary": ".read_path.agent_view", "KeySpec": ".codex.settings",
    "LineUsage": ".read_path.citation_usage", "MemoryConflict": ".memory_folder.edits",
    "MemoryFileInfo": ".memory_folder.edits", "MemoryFileText": ".memory_folder.edits",
    "MemoryNote": ".memory_folder.edits", "MemorySaved": ".memory_folder.edits",
    "Note": ".phase2.notes", "NoteEffect": ".phase2.notes",
    "Phase1Backend": ".phase1.backend", "Phase1Output": ".phase1.backend",
    "Phase2Backend": ".phase2.backend", "Phase2Result": ".phase2.backend",
    "Proposal": ".phase2.proposals", "Rollout": ".codex.rollout",
    "SecretInText": ".memory_folder.edits", "Stage1Output": ".codex.pipeline_snapshot",
    "TranscriptEntry": ".codex.transcript", "WatchActions": ".watch",
    "BASE_INSTRUCTIONS": ".codex.transcript",
    "WatchEvent": ".watch", "Watcher": ".watch",
    # the TUI's and the CLI's: formats, settings keys, statuses, the home, review state
    "HomeInfo": ".codex.home_info", "ProposalState": ".phase2.review",
    "STATUSES": ".index.status", "ago": ".formatting", "all_keys": ".codex.settings",
    "human_duration": ".formatting", "human_size": ".formatting", "iso_utc": ".formatting",
    "local_time": ".formatting", "local_time_with_seconds": ".formatting",
    "redact_stream": ".redact", "resolve_key": ".codex.settings",
    "rfc3339_utc": ".formatting", "strip_citations": ".codex.citations",
    "time_of_day": ".formatting", "toml_literal": ".codex.settings",
    "short_id_length": ".index.sessions", "TESTED_CODEX": ".codex.home",
    # the read path: line usage, citing sessions, the next session's memory (issue 11)
    "CitingMessage": ".read_path.line_usage", "CitingSession": ".read_path.line_usage",
    "FileUsage": ".read_path.line_usage", "LineStat": ".read_path.line_usage",
    "RemovedCitation": ".read_path.line_usage", "Preview": ".read_path.preview",
    "ReceivedSummary": ".read_path.preview",
    # the read path: a memory line's evidence chain (issue 11, `Engine.trace`)
    "Trace": ".read_path.trace", "TraceLineError": ".read_path.trace",
    "SummaryTrace": ".read_path.trace", "Stage1Row": ".read_path.trace",
    "TracedSession": ".read_path.trace", "LineChange": ".read_path.trace",
    "MemoryBlock": ".read_path.memory_blocks", "SummaryRef": ".read_path.memory_blocks",
    "TurnMatch": ".read_path.turn_match",
    # the read path: said vs remembered (issue 11, `Engine.said_remembered`)
    "SaidRemembered": ".read_path.said_remembered", "SaidMessage": ".read_path.said_remembered",
    "RawLine": ".read_path.said_remembered", "FedLines": ".read_path.fed_lines",
    "Purged": ".memory_folder.purge",
    "Verdict": ".read_path.said_remembered",
    # scope and sharing (issue 26)
    "ScopedBlock": ".read_path.scope_map", "Remote": ".sync.repo", "SyncError": ".sync.repo",
    "PushResult": ".sync.push_pull", "Conflict": ".phase2.conflicts",
    "SyncStatus": ".sync.push_pull",
}
