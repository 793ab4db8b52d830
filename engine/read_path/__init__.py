"""The read path: what the agent is shown of memory at the start of a session (`agent_view`) and
which memory lines later sessions cited (`citation_usage`).

May import: `memory_folder` and every stage below it, and the engine's shared modules.
"""
