"""Phase 1: one raw memory and one summary per idle session, and forgetting a session.

What is sent to the model (`input_v1`, `input_v2`), the run over the eligible sessions with
Codex's job claims (`runner`), and `forget`. The model itself is a `backends` object handed in.

May import: `index`, `codex` and the engine's shared modules.
"""
