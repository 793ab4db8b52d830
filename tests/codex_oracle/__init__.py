"""The real Codex binary (0.171.0) as the test oracle.

- `fake_responses`: a scripted OpenAI Responses-API server on 127.0.0.1 that Codex talks to
  (replies and recorded requests are defined in `replies`).
- `runner`: finds the binary, runs `codex exec` against that server on a home, writes the
  `[features]` / `[memories]` config that makes Codex run its own pipeline, reads its jobs,
  and spots database failures on its stderr (`db_failures`).
- `tui`: the interactive TUI in tmux (`run_tui`, `TuiSession`).
- `capture_schema`: regenerates engine/codex/schema_0171/*.json from the binary.

Tests import `codex_oracle.…` (tests/ is on sys.path; the `fake_responses` and `codex_bin`
fixtures come from tests/conftest.py). A bench does `sys.path.insert(0, "<repo>/tests")`
first. tests/test_codex_oracle_smoke.py is the shortest example of each piece.
"""
