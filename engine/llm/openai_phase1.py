"""Phase 1 through an OpenAI-compatible endpoint: Codex's prompt layout and strict schema."""

from __future__ import annotations

from typing import Any

import prompts

from .openai_backend import (
    STAGE_ONE_OUTPUT_SCHEMA,
    BackendConfig,
    OpenAIBackend,
    resolve_backend_config,
)


class OpenAIPhase1(OpenAIBackend):
    """Phase1Backend: one strict JSON-schema Chat Completions call per session, through the
    backend's one lazily built client (shared by the worker threads)."""

    def __init__(self, cfg: BackendConfig) -> None:
        super().__init__(cfg)
        self._system = prompts.load("stage_one_system")

    @classmethod
    def from_engine(cls, engine: Any) -> OpenAIPhase1:
        mine = engine._settings_file("memdeck").read()
        return cls(resolve_backend_config(mine, engine.home.config))

    def extract(self, inp: Any, session: Any) -> Any:
        from ..phase1 import Phase1Output

        user = prompts.render("stage_one_input", rollout_path=session.rollout_path,
                              rollout_cwd=session.cwd or "", rollout_contents=inp.text)
        # Codex asks for low reasoning effort; memdeck leaves it out because endpoints and
        # non-reasoning models reject the parameter, which would fail every extraction.
        reply = self.extract_json(system=self._system, user=user,
                                  schema=STAGE_ONE_OUTPUT_SCHEMA,
                                  schema_name="stage_one_output")
        p = reply.parsed
        return Phase1Output(p["raw_memory"], p["rollout_summary"], p.get("rollout_slug"),
                            reply.model or self.model, reply.input_tokens, reply.output_tokens)
