"""The demo Codex home: sessions over three projects, one per memory status, and the memory folder
a Codex phase 2 would have left.

May import: every engine package except the facade.
"""
