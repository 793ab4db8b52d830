"""Phase 2 into a reviewable proposal: the workspace Codex's rules prepare, the consolidation
run by a phase-2 backend handed in, and the proposal's changes as hunks. Nothing here touches
the live memory root.

May import: `phase1`, `index`, `codex` and the engine's shared modules.
"""
