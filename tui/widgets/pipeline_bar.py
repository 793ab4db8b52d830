"""The bar that shows a running extract + consolidate: stage, a progress bar with counts, and
how to cancel it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar


class PipelineBar(Horizontal):
    """Hidden until a run starts (`display` is toggled by the App)."""

    def compose(self) -> ComposeResult:
        yield Label("", id="pipeline-stage")
        yield ProgressBar(total=None, show_eta=False, id="pipeline-progress")
        yield Label("", id="pipeline-detail")

    def start(self, text: str) -> None:
        self.display = True
        self.query_one("#pipeline-stage", Label).update(text)
        self.query_one("#pipeline-detail", Label).update("ctrl+x cancels")
        self.query_one(ProgressBar).update(total=None, progress=0)

    def step(self, stage: str, done: int, total: int, detail: str = "") -> None:
        self.query_one("#pipeline-stage", Label).update(stage)
        bar = self.query_one(ProgressBar)
        bar.update(total=total if total > 0 else None, progress=done)
        self.query_one("#pipeline-detail", Label).update(
            f"{detail}  · ctrl+x cancels" if detail else "ctrl+x cancels")

    def stop(self) -> None:
        self.display = False
