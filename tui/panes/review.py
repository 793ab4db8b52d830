"""Pane 5, Review: the newest pending proposal — its inputs, files and hunks. `space` toggles
the hunk under the cursor, `a` accepts the selected hunks, `A` all of them, `r` rejects. A
hunk that adds a secret blocks accepting it; the engine's accept refuses it too, but the pane
does not even try. A hunk an ad-hoc note caused names the note; a note that changed nothing
(a forget that matched no line) is said in the banner."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from memdeck.engine import local_time

from ..messages import MemoryChanged
from ..widgets.confirm import AskScreen, ConfirmScreen
from ..widgets.review.hunk_list import HunkList, with_layout
from ..widgets.review.proposal_header import ProposalHeader, backend_label, one_line
from .base import Pane
from .review_data import ReviewData, load_review

NOTES_SHOWN = 3  # notes that changed nothing, named in the banner before "… and N more"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def where(secret: dict[str, Any]) -> str:
    return f"{secret['kind']} at {secret['path']}:{secret['line']}"


class ReviewPane(Pane):
    TITLE = "Review"
    BINDINGS = [
        Binding("space", "toggle", "Toggle hunk", id="review.toggle"),
        Binding("a", "accept", "Accept selected", id="review.accept"),
        Binding("A", "accept_all", "Accept all", id="review.accept_all"),
        Binding("r", "reject", "Reject", id="review.reject"),
        Binding("C", "conflicts", "Conflicts", id="review.conflicts"),
    ]
    COMMANDS = [
        ("Toggle this hunk", "Select or unselect the hunk under the cursor", "toggle"),
        ("Accept the selected hunks", "Apply the checked hunks to the memory folder", "accept"),
        ("Accept the whole proposal", "Apply every change of the pending proposal",
         "accept_all"),
        ("Reject the proposal", "Discard the pending proposal, with an optional reason",
         "reject"),
        ("Resolve a pull's conflicts", "The lines this machine and the remote both changed",
         "conflicts"),
    ]

    @dataclass
    class Loaded(Message):
        data: ReviewData

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data: ReviewData | None = None
        self.busy = False  # an accept or reject is running

    def compose(self) -> ComposeResult:
        with Vertical(id="review-proposal"):
            yield ProposalHeader(id="review-header")
            yield Static("", id="review-banner")
            yield HunkList(id="review-hunks")
            yield Static("", id="review-status")
        with VerticalScroll(id="review-empty"):  # focusable, so the pane's keys stay live
            yield Static("", id="review-empty-text")

    def on_mount(self) -> None:
        self.query_one("#review-empty").display = False
        self.query_one("#review-banner").display = False
        self.query_one("#review-status", Static).update("Loading the proposal…")

    def _refocus(self) -> None:
        """Focus the main widget if nothing in the pane has it (it was hidden before the
        load). At once, not deferred: a late focus would pull its tab back into view."""
        focused, main = self.app.focused, self._main_widget()
        # or on the widget of the other view (the hunks and the "nothing pending" note swap)
        astray = focused is not None and focused is not main and focused.id in (
            "review-hunks", "review-empty")
        if self.focus_lost() or (astray and self.is_on_screen_pane()):
            self.screen.set_focus(main)

    def _main_widget(self) -> Widget:
        """The hunks, or the note that nothing is pending (before the first load: hunks)."""
        empty = self.data is not None and self.proposal is None
        return self.query_one("#review-empty") if empty else self.query_one(HunkList)

    def focus_default(self) -> None:
        self._main_widget().focus()

    @property
    def proposal(self) -> Any | None:
        return self.data.proposal if self.data is not None else None

    # -- loading --------------------------------------------------------------------------
    def reload(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="review-load", name="loading the proposal",
          exit_on_error=False)
    def load(self) -> None:
        data = load_review(self.engine)
        hunks = self.query_one(HunkList)
        if data.view.rows and hunks.size.width:  # laid out already: wrap here, to its width
            data = replace(data, view=with_layout(data.view, hunks.text_width))
        self.post_message(self.Loaded(data))

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        old, data = self.data, event.data
        self.data = data
        hunks = self.query_one(HunkList)
        has = data.proposal is not None
        self.query_one("#review-proposal").display = has
        self.query_one("#review-empty").display = not has
        if not has:
            self.query_one("#review-empty-text", Static).update(self._empty_text(data))
            hunks.set_hunks(data.view)
        else:
            same = old is not None and old.key == data.key
            hunks.set_hunks(data.view, hunks.selected if same else None,
                            hunks.cursor if same else 0,
                            empty_text="This proposal changes no text lines.")
            self.query_one(ProposalHeader).show(data.proposal, data.inputs, data.view.counts,
                                                data.older_pending)
        self._update_status()
        self.refresh_bindings()
        self._refocus()

    def _empty_text(self, data: ReviewData) -> Content:
        parts: list[Any] = [
            ("No proposal is waiting for review.", "bold"),
            "\n\nPress ", ("c", "bold $text-accent"),
            " to extract new sessions and consolidate them; when there is something new to "
            "remember, the proposal opens here.",
        ]
        if data.recent:
            parts.append(("\n\nRecent proposals", "bold $foreground-muted"))
            for p in data.recent:
                line = (f"\n{p.id}  {p.status:<9} {local_time(p.created_at)}  "
                        f"{backend_label(p.backend)}  {plural(len(p.files), 'file')}")
                if p.reason:
                    line += f"\n    why: {one_line(p.reason, 100)}"
                parts.append((line, "$foreground-muted"))
        return Content.assemble(*parts)

    # -- status and banner ----------------------------------------------------------------
    def _selected_secret(self) -> dict[str, Any] | None:
        hunks = self.query_one(HunkList)
        return next((s for k, s in sorted(hunks.secret_hunks.items()) if k in hunks.selected),
                    None)

    @on(HunkList.Changed)
    def _update_status(self) -> None:
        data, hunks = self.data, self.query_one(HunkList)
        banner = self.query_one("#review-banner", Static)
        if data is None or data.proposal is None:
            banner.display = False
            return
        p = data.proposal
        lines: list[Any] = []
        if p.secrets:
            s = p.secrets[0]
            more = f" (and {len(p.secrets) - 1} more)" if len(p.secrets) > 1 else ""
            lines.append((f"⚠ Acceptance blocked: this proposal adds a secret — {where(s)}"
                          f"{more}. Reject it (r), or remove the secret from the raw memory "
                          "and consolidate again.", "bold $text-error"))
        if data.workspace_lost:
            lines.append(("This proposal has lost its workspace folder, so there is nothing "
                          "left to accept: reject it (r) and consolidate again (c).",
                          "$text-warning"))
        elif data.memory_moved:
            lines.append(("The memory folder changed since this proposal was made: accepting "
                          "will be refused. Consolidate again (c) or reject it.",
                          "$text-warning"))
        for problem in p.problems[:2]:
            lines.append((f"Problem: {one_line(problem, 200)}", "$text-warning"))
        idle = [e for e in data.notes if not e.added and not e.removed]
        for e in idle[:NOTES_SHOWN]:
            lines.append((f"Note {e.note.label}: {e.outcome}.", "$text-warning"
                          if e.note.kind == "forget" else "$foreground-muted"))
        if len(idle) > NOTES_SHOWN:
            lines.append((f"… and {len(idle) - NOTES_SHOWN} more notes that changed nothing",
                          "$foreground-muted"))
        banner.display = bool(lines)
        if lines:
            banner.update(Content.assemble(*[x for i, ln in enumerate(lines)
                                             for x in (("\n",) if i else ()) + (ln,)]))
        n, chosen = hunks.count, len(hunks.selected)
        files = len({data.hunks[k].path for k in hunks.selected})
        text = f"{plural(n, 'hunk')} · {chosen} selected in {plural(files, 'file')}"
        if n:
            text += f" · hunk {hunks.cursor + 1} of {n}"
        secret = self._selected_secret()
        status = self.query_one("#review-status", Static)
        if secret is not None:
            status.update(Content.assemble(text + " · ", (
                f"accept blocked: a selected hunk adds a secret ({where(secret)})",
                "bold $text-error")))
        else:
            status.update(text)

    # -- actions --------------------------------------------------------------------------
    def _conflicts(self) -> int:
        p = self.proposal
        return 0 if p is None else sum(1 for x in p.problems if x.startswith("conflict: "))

    def action_conflicts(self) -> None:
        p = self.proposal
        if p is not None and self._conflicts():
            from ..widgets.review.conflict_screen import ConflictScreen

            self.app.push_screen(ConflictScreen(p.id, p.backend.removeprefix("pull:")))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "conflicts":
            return bool(self._conflicts()) and not self.busy
        if action in ("toggle", "accept", "accept_all", "reject"):
            if self.proposal is None:
                return False
            if self.busy and action != "toggle":
                return None
        return True

    # the pane's own toggle (space, the palette) in place of DOMNode's toggle(attribute)
    def action_toggle(self) -> None:  # type: ignore[override]
        if self.proposal is not None:
            self.query_one(HunkList).toggle()

    def _blocked(self, secret: dict[str, Any] | None) -> bool:
        if secret is None:
            return False
        hunks = self.query_one(HunkList)
        k = next((k for k, s in sorted(hunks.secret_hunks.items()) if s == secret), None)
        if k is not None:
            hunks.reveal_secret(k)  # show the user the line that stops the accept
        self.notify(f"Accept blocked: {secret['path']} line {secret['line']} adds a secret "
                    f"({secret['kind']}). Reject the proposal (r), or remove the secret from "
                    "the raw memory and consolidate again.", severity="error", timeout=10)
        return True

    def action_accept(self) -> None:
        p, data, hunks = self.proposal, self.data, self.query_one(HunkList)
        if p is None or data is None or self.busy:
            return
        if not hunks.selected:
            self.notify("No hunk is selected: space selects the one under the cursor.",
                        severity="warning")
            return
        if self._blocked(self._selected_secret()):
            return
        chosen = sorted(hunks.selected)
        files = {data.hunks[k].path for k in chosen}
        if len(chosen) == hunks.count:  # everything: the whole proposal, deletions included
            self._apply(p.id, None, f"Accepted all {plural(hunks.count, 'hunk')} in "
                                    f"{plural(len(p.files), 'file')}.")
            return
        picked: dict[str, list[int]] = {}
        for k in chosen:
            picked.setdefault(data.hunks[k].path, []).append(data.hunks[k].index)
        self._apply(p.id, picked, f"Accepted {len(chosen)} of {plural(hunks.count, 'hunk')} "
                                  f"in {plural(len(files), 'file')}.")

    def action_accept_all(self) -> None:
        p, data = self.proposal, self.data
        if p is None or data is None or self.busy:
            return
        if p.secrets and self._blocked(p.secrets[0]):
            return
        n = len(data.hunks)
        adds = sum(a for a, _ in data.view.counts.values())
        dels = sum(d for _, d in data.view.counts.values())
        detail = (f"All {plural(n, 'hunk')} in {plural(len(p.files), 'file')} of proposal "
                  f"{p.id} go into the memory folder: {plural(adds, 'line')} added, "
                  f"{dels} removed. The state before stays in History.")

        def answered(yes: bool | None) -> None:
            if yes:
                self._apply(p.id, None, f"Accepted all {plural(n, 'hunk')} in "
                                        f"{plural(len(p.files), 'file')}.")

        self.app.push_screen(ConfirmScreen("Accept the whole proposal?", detail,
                                           yes="Accept all"), answered)

    def action_reject(self) -> None:
        p = self.proposal
        if p is None or self.busy:
            return

        def answered(reason: str | None) -> None:
            if reason is not None:
                self._start()
                self.reject(p.id, reason.strip() or None)

        self.app.push_screen(AskScreen(f"Reject proposal {p.id}?",
                                       placeholder="why (optional) — Enter rejects"), answered)

    def _apply(self, pid: str, hunks: dict[str, list[int]] | None, done: str) -> None:
        self._start()
        self.accept(pid, hunks, done)

    def _start(self) -> None:
        self.busy = True
        self.refresh_bindings()

    @work(thread=True, exclusive=True, group="review-action", name="accepting the proposal",
          exit_on_error=False)
    def accept(self, pid: str, hunks: dict[str, list[int]] | None, done: str) -> None:
        if hunks is None:
            self.engine.accept(pid)
        else:
            self.engine.accept(pid, hunks=hunks)
        self.notify(done, timeout=6)
        self.post_message(MemoryChanged("accept"))

    @work(thread=True, exclusive=True, group="review-action", name="rejecting the proposal",
          exit_on_error=False)
    def reject(self, pid: str, reason: str | None) -> None:
        self.engine.reject(pid, reason)
        self.notify(f"Rejected proposal {pid}" + (f": {reason}" if reason else "."), timeout=6)
        self.post_message(MemoryChanged("reject"))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "review-action" and event.state in (
                WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self.busy = False
            self.refresh_bindings()
            if event.state is not WorkerState.SUCCESS:
                self.reload()  # what is pending may have changed under us
        # (Pane.on_worker_state_changed runs too: Textual calls each class's handler)
