"""The app's messages are dataclasses: no hand-written `__init__`, the same handler names as
before, and they still bubble from the widget that posts them to the handlers above it."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Iterator

from textual import on
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Static

import memdeck.tui
from memdeck.tui.messages import PipelineFinished, PipelineProgress, WorkFailed
from memdeck.tui.widgets.history.commit_list import CommitList

# every message the app defines and the handler method Textual derives for it (what a
# `def on_...` in a pane or the App must be named)
HANDLERS = {
    "WorkFailed": "on_work_failed",
    "MemoryChanged": "on_memory_changed",
    "SessionsChanged": "on_sessions_changed",
    "ProposalReady": "on_proposal_ready",
    "PipelineProgress": "on_pipeline_progress",
    "PipelineFinished": "on_pipeline_finished",
    "ShowSession": "on_show_session",
    "SessionTable.Highlighted": "on_session_table_highlighted",
    "SessionTable.Opened": "on_session_table_opened",
    "SessionHeader.SortClicked": "on_session_header_sort_clicked",
    "SessionsPane.Loaded": "on_sessions_pane_loaded",
    "SessionsPane.DetailLoaded": "on_sessions_pane_detail_loaded",
    "CommitList.Highlighted": "on_commit_list_highlighted",
    "ConflictScreen.Loaded": "on_conflict_screen_loaded",
    "SyncScreen.Done": "on_sync_screen_done",
    "SyncScreen.Loaded": "on_sync_screen_loaded",
    "CommitList.Opened": "on_commit_list_opened",
    "HistoryPane.Loaded": "on_history_pane_loaded",
    "HistoryPane.DiffLoaded": "on_history_pane_diff_loaded",
    "MemoriesPane.Loaded": "on_memories_pane_loaded",
    "MemoryPane.Loaded": "on_memory_pane_loaded",
    "MemoryPane.FileLoaded": "on_memory_pane_file_loaded",
    "MemoryEditing.Saved": "on_memory_editing_saved",
    "MemoryEditing.Conflicted": "on_memory_editing_conflicted",
    "MemoryEditing.SaveEnded": "on_memory_editing_save_ended",
    "MemoryPane.InjectedLoaded": "on_memory_pane_injected_loaded",
    "MemoryPane.UsageLoaded": "on_memory_pane_usage_loaded",
    "LineTraceScreen.Loaded": "on_line_trace_screen_loaded",
    "SaidRememberedScreen.Loaded": "on_said_remembered_screen_loaded",
    "MemoryEditing.NoteAdded": "on_memory_editing_note_added",
    "HunkList.Changed": "on_hunk_list_changed",
    "ReviewPane.Loaded": "on_review_pane_loaded",
    "SettingRow.Edited": "on_setting_row_edited",
    "SettingInput.Cancelled": "on_setting_input_cancelled",
    "SettingsPane.Loaded": "on_settings_pane_loaded",
    "SettingsPane.Saved": "on_settings_pane_saved",
    "SettingsPane.Refused": "on_settings_pane_refused",
    "SettingsPane.KeymapSaved": "on_settings_pane_keymap_saved",
    "MemoryScope.Rescoped": "on_memory_scope_rescoped",
}


def _app_messages() -> Iterator[type[Message]]:
    for m in pkgutil.walk_packages(memdeck.tui.__path__, "memdeck.tui."):
        importlib.import_module(m.name)

    def below(cls: type[Message]) -> Iterator[type[Message]]:
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)

    yield from (c for c in below(Message) if c.__module__.startswith("memdeck.tui."))


def test_messages_are_dataclasses_with_the_same_handler_names() -> None:
    found = {c.__qualname__: c for c in _app_messages()}
    assert {q: c.handler_name for q, c in found.items()} == HANDLERS
    for qualname, cls in found.items():
        assert cls.bubble and cls.namespace == "", qualname
        # a message that carries data is a dataclass; one that carries none has no __init__
        assert "__init__" not in cls.__dict__ or dataclasses.is_dataclass(cls), (
            f"{qualname} has a hand-written __init__")


def test_a_dataclass_message_is_a_whole_message() -> None:
    m = PipelineFinished("3 sessions extracted", cancelled=True)
    assert (m.summary, m.proposal, m.cancelled) == ("3 sessions extracted", None, True)
    assert m.time > 0 and not m.is_forwarded  # Message.__post_init__ ran
    assert PipelineProgress("extract", 1, 4).detail == ""


class Poster(Static):
    def on_mount(self) -> None:
        self.post_message(WorkFailed("loading", "disk on fire"))
        self.post_message(CommitList.Highlighted({"commit": "abc"}))


class Catcher(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.got: list[tuple[str, object]] = []

    def compose(self) -> ComposeResult:
        yield Poster()

    def on_work_failed(self, event: WorkFailed) -> None:  # found by its name
        self.got.append(("name", (event.what, event.error, type(event._sender).__name__)))

    @on(CommitList.Highlighted)
    def _highlighted(self, event: CommitList.Highlighted) -> None:  # found by @on
        self.got.append(("on", event.entry))


async def test_dataclass_messages_bubble_to_their_handlers() -> None:
    app = Catcher()
    async with app.run_test() as pilot:
        await pilot.pause()
    assert ("name", ("loading", "disk on fire", "Poster")) in app.got
    assert ("on", {"commit": "abc"}) in app.got
