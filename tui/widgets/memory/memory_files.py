"""The memory folder's files, grouped the way the agent reads them: summary and MEMORY.md
first, then skills, rollout summaries, ad-hoc notes, what Codex imported from another agent's
memory (by project, with each project's scope: imported_memory.py), extensions, anything
else."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option, OptionDoesNotExist

from . import imported_memory

GROUPS = [
    (("summary", "memory", "raw"), "Memory", ""),
    (("skill",), "Skills", "skills/"),
    (("rollout_summary",), "Rollout summaries", "rollout_summaries/"),
    (("note",), "Ad-hoc notes", "extensions/ad_hoc/notes/"),
    (("imported",), imported_memory.TITLE, imported_memory.PREFIX),
    (("extension",), "Extensions", "extensions/"),
    (("other",), "Other files", ""),
]


class MemoryFileList(OptionList):
    """One option per file (its id is the relative path); group headings are disabled."""

    DEFAULT_CSS = """
    MemoryFileList { height: 1fr; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.files: list[Any] = []

    def set_files(self, files: Sequence[Any], keep: str | None = None) -> None:
        """Show `files` (engine MemoryFileInfo), keeping the highlight on `keep` if present."""
        self.files = list(files)
        options: list[Option | None] = []
        for kinds, title, prefix in GROUPS:
            members = [f for f in files if f.kind in kinds]
            if not members:
                continue
            if options:
                options.append(None)
            heading = Text(f"{title} ({len(members)})", style="bold")
            options.append(Option(heading, id=f"group:{title}", disabled=True))
            if kinds == ("imported",):
                options += imported_memory.section(members)
                continue
            for f in members:
                name = f.path.removeprefix(prefix) if prefix else f.path
                options.append(Option(Text(f" {name}", no_wrap=True, overflow="ellipsis"),
                                      id=f.path))
        self.set_options(options)
        target = keep if keep and any(f.path == keep for f in files) else None
        if target is not None:
            self.highlight_path(target)

    def highlight_path(self, path: str) -> None:
        try:
            self.highlighted = self.get_option_index(path)
        except OptionDoesNotExist:  # a file gone meanwhile leaves the highlight alone
            return

    @property
    def current(self) -> str | None:
        opt = self.highlighted_option
        return opt.id if opt is not None and opt.id and not opt.disabled else None
