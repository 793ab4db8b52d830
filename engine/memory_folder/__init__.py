"""The live memory folder: accepting a proposal (an atomic swap), memdeck's history of the
folder, a person's edits and notes, Codex's git baseline, reset with backups.

May import: `phase2`, `phase1`, `index`, `codex` and the engine's shared modules.
"""
