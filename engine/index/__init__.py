"""The session index: every rollout of a home, kept current incrementally, joined with the
pipeline's state into the sessions and statuses the user sees.

May import: `codex` and the engine's shared modules.
"""
