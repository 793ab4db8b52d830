"""The head of a proposal under review: what it is, what made it, which sessions it
consolidates, and which files it changes by how much."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Static

from memdeck.engine import local_time

SHOWN = 6  # inputs and files listed before "… and N more"
CHANGE = {"A": "added", "M": "changed", "D": "deleted"}


def backend_label(backend: str) -> str:
    return "heuristic (offline, no model)" if backend == "offline" else backend


def one_line(text: str | None, limit: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


ROOTS = {"v1": "memories/", "v2": "memories_v2/"}


def title(p: Any, older_pending: int) -> Content:
    version = getattr(p, "version", "v1")
    parts: list[Any] = [("Proposal ", "bold"), (p.id, "bold $text-accent"),
                        f"  ·  {p.status}  ·  created {local_time(p.created_at)}  ·  memory "
                        f"{version} ({ROOTS.get(version, version)})\nbackend ",
                        (backend_label(p.backend), "bold"), f"  ·  model {p.model or '—'}"]
    if older_pending:
        parts.append((f"  ·  {older_pending} older pending", "$text-warning"))
    return Content.assemble(*parts)


def inputs_text(inputs: list[tuple[str, Any | None]], width: int) -> Content:
    n = len(inputs)
    parts: list[Any] = [(f"Inputs · {n} session{'s' if n != 1 else ''}", "bold")]
    shown = inputs[:SHOWN]
    proj = max([len(one_line(s.project, 14)) for _, s in shown if s is not None] or [0])
    for thread, s in shown:
        parts.append("\n")
        parts.append((thread[:8], "$text-accent"))
        if s is None:
            parts.append(("  (not in the session index)", "$foreground-muted"))
        else:
            parts.append(f"  {one_line(s.project, 14):<{proj}}  ")
            parts.append((one_line(s.preview or "—", max(10, width - proj - 13)),
                          "$foreground-muted"))
    if n > SHOWN:
        parts.append((f"\n… and {n - SHOWN} more", "$foreground-muted"))
    return Content.assemble(*parts)


def files_text(files: list[dict[str, str]], counts: dict[str, tuple[int, int]],
               width: int) -> Content:
    n = len(files)
    parts: list[Any] = [(f"Files · {n} changed", "bold")]
    shown = files[:SHOWN]
    stats = [counts.get(f["path"], (0, 0)) for f in shown]
    add_w = max([len(str(a)) for a, _ in stats] or [1]) + 1
    del_w = max([len(str(d)) for _, d in stats] or [1]) + 1
    room = max(10, width - add_w - del_w - 6)
    path_w = min(room, max([len(f["path"]) for f in shown] or [0]))
    for f, (adds, dels) in zip(shown, stats, strict=True):
        parts += ["\n", (f"{f['change']} ", "bold"), f"{one_line(f['path'], path_w):<{path_w}}  ",
                  (f"{'+' + str(adds):>{add_w}}", "$text-success"), " ",
                  (f"{'−' + str(dels):>{del_w}}", "$text-error")]
    if n > SHOWN:
        parts.append((f"\n… and {n - SHOWN} more", "$foreground-muted"))
    return Content.assemble(*parts)


class ProposalHeader(Vertical):
    """Filled by `show`; the column widths follow the pane's width."""

    DEFAULT_CSS = """
    ProposalHeader { height: auto; }
    ProposalHeader > Horizontal { height: auto; }
    ProposalHeader #proposal-inputs { width: 3fr; height: auto; }
    ProposalHeader #proposal-files { width: 2fr; height: auto; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shown: tuple[Any, ...] | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="proposal-title")
        with Horizontal():
            yield Static("", id="proposal-inputs")
            yield Static("", id="proposal-files")

    def show(self, proposal: Any, inputs: list[tuple[str, Any | None]],
             counts: dict[str, tuple[int, int]], older_pending: int = 0) -> None:
        self._shown = (proposal, inputs, counts, older_pending)
        self._fill()

    def on_resize(self) -> None:
        self._fill()

    def _fill(self) -> None:
        if self._shown is None:
            return
        p, inputs, counts, older = self._shown
        width = max(40, self.size.width)
        self.query_one("#proposal-title", Static).update(title(p, older))
        self.query_one("#proposal-inputs", Static).update(inputs_text(inputs, width * 3 // 5))
        self.query_one("#proposal-files", Static).update(files_text(p.files, counts,
                                                                    width * 2 // 5))
