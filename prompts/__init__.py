"""memdeck's model prompts, shipped as package data so a wheel finds them like a checkout."""

from __future__ import annotations

from importlib import resources


def load(name: str) -> str:
    """The text of `prompts/<name>.md`."""
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")
