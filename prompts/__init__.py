"""memdeck's model prompts, shipped as package data so a wheel finds them like a checkout."""

from __future__ import annotations

from importlib import resources


def load(name: str) -> str:
    """The text of `prompts/<name>.md`."""
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")


def render(name: str, **values: str) -> str:
    """Fill `{{ name }}` placeholders (Codex's template syntax); an unknown one is an error."""
    import re

    text = load(name)

    def fill(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in values:
            raise KeyError(f"prompt {name} needs a value for {key!r}")
        return values[key]

    return re.sub(r"\{\{\s*(\w+)\s*\}\}", fill, text)
