"""Building the backend that runs a phase, by name (`offline` or `openai`, as
`openai_client.choose_backend` picks it from the settings).

The facade calls these and hands the backend built to phase 1's runner or to phase 2's
`consolidate`; only the backend chosen is imported, and the openai ones import nothing heavy
until their first call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..phase1.backend import Phase1Backend
    from ..phase2.backend import Phase2Backend
    from ..store import Store
    from .openai_client import BackendConfig


def phase1_backend(name: str, cfg: BackendConfig) -> Phase1Backend:
    """The phase-1 backend `name`: the heuristic extractor, or the model."""
    if name == "offline":
        from .offline_phase1 import OfflinePhase1

        return OfflinePhase1()
    from .openai_phase1 import OpenAIPhase1

    return OpenAIPhase1(cfg)


def phase2_backend(name: str, cfg: BackendConfig, store: Store) -> Phase2Backend:
    """The phase-2 backend `name`: the deterministic merge, or the agent (its calls logged in
    memdeck's `store`)."""
    if name == "offline":
        from .offline_phase2 import OfflinePhase2

        return OfflinePhase2()
    from .openai_phase2 import OpenAIPhase2

    return OpenAIPhase2(cfg, store)


def phase1_budget(backend: Phase1Backend, setting: int | None) -> int:
    """The tokens of a rollout phase 1 sends: `memdeck.input_budget` when set, else what fits
    the server's stated context (server_context.py), never more than Codex's 150,000."""
    from ..phase1.input_v1 import DEFAULT_ROLLOUT_TOKEN_LIMIT
    from .openai_client import OpenAIBackend

    if setting:
        return setting
    if isinstance(backend, OpenAIBackend):
        context = backend.context_length()
        if context:
            from .server_context import budget_for

            return min(DEFAULT_ROLLOUT_TOKEN_LIMIT, budget_for(context))
    return DEFAULT_ROLLOUT_TOKEN_LIMIT
