"""What holds for the whole home and changes what every screen means, said for as long as it
holds, under the header: memories switched off, a config.toml Codex cannot read, a home
memdeck cannot write, databases it cannot read, a Codex newer than it knows (the listing's
warnings, engine `Listing.warnings`). Hidden when there is none, gone by itself when the
condition ends (the app reloads the listing when the watcher sees config.toml change).

The text is shown as written, never read as markup (`[features]` stays `[features]`)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

MAX_LINES = 3


class HomeBanner(Static):
    DEFAULT_CSS = """
    HomeBanner { height: auto; max-height: 3; background: $warning 15%; color: $text;
                 padding: 0 1; display: none; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", markup=False, **kwargs)  # type: ignore[arg-type]
        self.warnings: tuple[str, ...] = ()

    def show(self, warnings: tuple[str, ...] | list[str]) -> None:
        self.warnings = tuple(warnings)
        self.display = bool(self.warnings)
        lines = list(self.warnings[:MAX_LINES])
        if len(self.warnings) > MAX_LINES:
            lines[-1] = f"… and {len(self.warnings) - MAX_LINES + 1} more warnings"
        text = Text(no_wrap=True, overflow="ellipsis")
        for i, w in enumerate(lines):
            text.append(("\n" if i else "") + "⚠ ", style="bold")
            text.append(w)
        self.update(text)
