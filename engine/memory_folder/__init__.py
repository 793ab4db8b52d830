"""The live memory folder: accepting a proposal (an atomic swap), memdeck's history of the
folder, a person's edits and notes, Codex's git baseline, reset with backups.

Every change of a live memory root goes through `writer.MemoryFolderWriter` (one lock per home,
crash recovery first, the global lease, history before and after). No module here receives
the facade: each is handed the writer, or the home and what else it needs.

May import: `phase2`, `phase1`, `index`, `codex` and the engine's shared modules.
"""
