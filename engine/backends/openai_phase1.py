"""Phase 1 through an OpenAI-compatible endpoint: Codex's prompt layout and strict schema,
for the home's memory version (V1: three fields in one user message; V2: two fields, the
tiered rollout cut into pieces of at most 8,900 bytes, one user message each)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdeck import prompts

from ..phase1.backend import Phase1Output
from .openai_client import STAGE_ONE_OUTPUT_SCHEMA, BackendConfig, OpenAIBackend
from .replies import STAGE_ONE_OUTPUT_SCHEMA_V2, parse_stage_one_output, parse_stage_one_output_v2

if TYPE_CHECKING:
    from ..index.sessions import Session
    from ..phase1.input_v1 import Phase1Input

SYSTEM_PROMPTS = {"v1": "stage_one_system", "v2": "stage_one_system_v2"}


class OpenAIPhase1(OpenAIBackend):
    """Phase1Backend: one strict JSON-schema Chat Completions call per session, through the
    backend's one lazily built client (shared by the worker threads)."""

    def __init__(self, cfg: BackendConfig) -> None:
        super().__init__(cfg)
        self._system = {v: prompts.load(name) for v, name in SYSTEM_PROMPTS.items()}

    def extract(self, inp: Phase1Input, session: Session) -> Phase1Output:
        # Codex asks for low reasoning effort; memdeck leaves it out because endpoints and
        # non-reasoning models reject the parameter, which would fail every extraction.
        if inp.version == "v2":
            from ..phase1.input_v2 import split_chunks

            text = prompts.render("stage_one_input_v2", rollout_path=session.rollout_path,
                                  rollout_cwd=session.cwd or "unknown",
                                  rollout_git_branch=session.git_branch or "unknown",
                                  rollout_contents=inp.text)
            reply = self.extract_json(system=self._system["v2"], user=split_chunks(text),
                                      schema=STAGE_ONE_OUTPUT_SCHEMA_V2,
                                      schema_name="stage_one_output",
                                      parse=parse_stage_one_output_v2)
            p = reply.parsed
            return Phase1Output("", p["rollout_summary"], p["rollout_slug"] or None,
                                reply.model or self.model, reply.input_tokens,
                                reply.output_tokens)
        user = prompts.render("stage_one_input", rollout_path=session.rollout_path,
                              rollout_cwd=session.cwd or "", rollout_contents=inp.text)
        reply = self.extract_json(system=self._system["v1"], user=user,
                                  schema=STAGE_ONE_OUTPUT_SCHEMA,
                                  schema_name="stage_one_output", parse=parse_stage_one_output)
        p = reply.parsed
        return Phase1Output(p["raw_memory"], p["rollout_summary"], p.get("rollout_slug"),
                            reply.model or self.model, reply.input_tokens, reply.output_tokens)
