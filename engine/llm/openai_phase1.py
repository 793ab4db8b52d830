"""Phase 1 through an OpenAI-compatible endpoint: Codex's prompt layout and strict schema."""

from __future__ import annotations

import threading
from typing import Any

import prompts

from .openai_backend import (
    STAGE_ONE_OUTPUT_SCHEMA,
    BackendConfig,
    build_client,
    extract_json,
    resolve_backend_config,
)


class OpenAIPhase1:
    """Phase1Backend: one strict JSON-schema Chat Completions call per session."""

    name = "openai"

    def __init__(self, cfg: BackendConfig) -> None:
        self.cfg = cfg
        self.model = cfg.extract_model
        self._client: Any = None
        self._lock = threading.Lock()
        self._system = prompts.load("stage_one_system")

    @classmethod
    def from_engine(cls, engine: Any) -> OpenAIPhase1:
        mine = engine._settings_file("memdeck").read()
        return cls(resolve_backend_config(mine, engine.home.config))

    def _get_client(self) -> Any:
        with self._lock:  # one client, shared by the worker threads (it is thread-safe)
            if self._client is None:
                self._client = build_client(self.cfg)
            return self._client

    def extract(self, inp: Any, session: Any) -> Any:
        from ..phase1 import Phase1Output

        user = prompts.render("stage_one_input", rollout_path=session.rollout_path,
                              rollout_cwd=session.cwd or "", rollout_contents=inp.text)
        reply = extract_json(self._get_client(), self.cfg, system=self._system, user=user,
                             schema=STAGE_ONE_OUTPUT_SCHEMA, schema_name="stage_one_output")
        # Codex asks for low reasoning effort; memdeck leaves it out because endpoints and
        # non-reasoning models reject the parameter, which would fail every extraction.
        p = reply.parsed
        return Phase1Output(p["raw_memory"], p["rollout_summary"], p.get("rollout_slug"),
                            reply.model or self.model, reply.input_tokens, reply.output_tokens)
