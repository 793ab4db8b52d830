"""Model backends: who writes phase 1's memories and phase 2's consolidation.

Each implements its phase's interface: `phase1.backend.Phase1Backend` (`OfflinePhase1`,
`OpenAIPhase1`) or `phase2.backend.Phase2Backend` (`OfflinePhase2`, `OpenAIPhase2`); `choice`
builds the one a run uses. The offline backends (`offline_phase1`, `offline_phase1_v2`,
`offline_phase2`) are deterministic and need no network; the openai backends (`openai_client`,
`openai_phase1`, `openai_phase2`) talk to any OpenAI-compatible endpoint; `replies` checks what a
model returned.

May import: every pipeline package (`read_path`, `memory_folder`, `phase2`, `phase1`, `index`,
`codex`) and the engine's shared modules; the pipeline packages never import a backend, the
facade hands one in.
"""
