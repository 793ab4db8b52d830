"""Why a raw memory's `usage_count` can be lower than the citations memdeck finds
(docs/codex-format.md "Usage counts").

Codex adds to a row's count only when a citing message completes, and ids without a row are
ignored: citations made before the session was extracted never count. A row whose rollouts
cite it more often than its count, with citations older than the row, says so."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..codex.citations import MemoryCitation
from ..codex.pipeline_snapshot import Stage1Output
from .line_usage import CitingMessage


def with_citation_notes(rows: Sequence[Stage1Output],
                        messages: Iterable[CitingMessage]) -> list[Stage1Output]:
    times: dict[str, list[float | None]] = {}
    for m in messages:
        for tid in MemoryCitation(m.entries, m.rollout_ids).valid_thread_ids:
            times.setdefault(tid, []).append(m.time)
    out: list[Stage1Output] = []
    for r in rows:
        cited = times.get(r.thread_id, [])
        before = sum(1 for t in cited if t is not None and t < r.generated_at)
        if before and len(cited) > (r.usage_count or 0):
            word = "citation" if before == 1 else "citations"
            r = replace(r, citation_note=f"{before} {word} before this row existed "
                                         "(Codex counts only later ones)")
        out.append(r)
    return out
