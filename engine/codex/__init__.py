"""Codex's home and its files, read and written in Codex's own formats.

The paths of a Codex home (`home`), Codex's and memdeck's settings (`settings`, `keymap`), rollout
files (`rollout`, `linestream`, `jsonfast`, `line_problems`, `fragments`, `tool_output`,
`code_mode`, `command_outcomes`, `transcript`, `citations`), Codex's databases (`schema`,
`state_db`, `pipeline_snapshot` to read the memory pipeline's tables, `pipeline_db` to write
them with Codex's lease rules) and
the names and layouts of the memory folder's files (`memory_layout`; Codex's import of another
agent's memory: `external_import`).

May import: the engine's shared modules only (`errors`, `clock`, `formatting`, `atomic`, `store`,
`redact`, `workers`, `call_log`: the foundation layer of tests/test_import_contract.py).
"""
