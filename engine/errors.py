"""Errors the engine raises on purpose. Each carries one line a person can act on."""


class MemdeckError(Exception):
    """An expected failure: bad input, a refused action. `str()` is the one-line message."""


class ConfigError(MemdeckError):
    """A setting is unknown, of the wrong type, out of range, or config.toml cannot be parsed."""


class NotFound(MemdeckError):
    """A session, proposal or commit that does not exist."""


class HomeError(MemdeckError):
    """The Codex home (or a folder in it) is missing, unreadable or unsafe (a symlinked root)."""
