"""Model backends (openai-compatible client, offline deterministic backend)."""
