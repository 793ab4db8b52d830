"""The Sync view (issue 26), opened from History with `s`: each git remote the memory is
shared with, how far this machine and it are apart (ahead / behind), when this machine last
pushed and pulled, and what a pull would bring; `p` pushes to the remote under the cursor,
`l` pulls it into a proposal for Review, `g` reads the remotes again. Everything that
touches a remote runs in a worker: the screen never waits on the network."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from memdeck.engine import local_time

from ...messages import MemoryChanged
from ..key_footer import KeyFooter

NO_REMOTE = ("No remote yet. Add one from the command line:\n\n"
             "  memdeck remote add team git@github.com:me/codex-memory.git\n"
             "  memdeck remote add team file:///srv/memory.git\n\n"
             "then press g here.")


class SyncScreen(Screen[None]):
    BINDINGS = [
        Binding("p", "push", "Push", id="sync.push"),
        Binding("l", "pull", "Pull", id="sync.pull"),
        Binding("g", "refresh", "Refresh", id="sync.refresh"),
        Binding("escape", "back", "Back", id="sync.back"),
    ]
    DEFAULT_CSS = """
    SyncScreen #sync-title { height: auto; padding: 0 1; background: $panel; }
    SyncScreen #sync-body { height: 1fr; }
    SyncScreen #sync-remotes { height: auto; max-height: 12; }
    SyncScreen #sync-detail { height: 1fr; padding: 1 1; }
    """

    @dataclass
    class Loaded(Message):
        statuses: list[Any]

    @dataclass
    class Done(Message):
        text: str
        severity: str = "information"

    def __init__(self) -> None:
        super().__init__(id="sync-screen")
        self.statuses: list[Any] = []
        self.busy = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="sync-body"):
            yield Label("Sync: the memory folder shared through git remotes", id="sync-title")
            yield OptionList(id="sync-remotes")
            yield Static("", id="sync-detail")
        yield KeyFooter()

    @property
    def engine(self) -> Any:
        return self.app.engine  # type: ignore[attr-defined]

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.action_refresh()

    def action_back(self) -> None:
        self.app.pop_screen()

    # -- loading --------------------------------------------------------------------------
    def action_refresh(self) -> None:
        self._say("reading the remotes…")
        self.load()

    @work(thread=True, exclusive=True, group="sync-load", name="reading the remotes",
          exit_on_error=False)
    def load(self) -> None:
        statuses = [self.engine.sync_status(r.name) for r in self.engine.remotes()]
        self.post_message(self.Loaded(statuses))

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        self.statuses = event.statuses
        remotes = self.query_one(OptionList)
        keep = remotes.highlighted or 0
        remotes.clear_options()
        remotes.add_options([Option(self._line(s), id=s.remote.name) for s in event.statuses])
        if event.statuses:
            remotes.highlighted = min(keep, len(event.statuses) - 1)
            self._show(event.statuses[remotes.highlighted])
        else:
            self._say(NO_REMOTE)
        self.refresh_bindings()

    @staticmethod
    def _line(s: Any) -> Content:
        where = s.remote.shown + (f"  (project {s.remote.scope})" if s.remote.scope else "")
        if not s.reachable:
            state: tuple[str, str] = ("cannot be reached", "$error")
        elif s.behind:
            state = (f"{s.behind} to pull", "$warning")
        elif s.ahead:
            state = (f"{s.ahead} to push", "$warning")
        else:
            state = ("up to date", "$success")
        return Content.assemble((s.remote.name, "bold"), "  ", state, "  ",
                                (where, "$foreground-muted"))

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        s = next((x for x in self.statuses if x.remote.name == event.option_id), None)
        if s is not None:
            self._show(s)

    def _show(self, s: Any) -> None:
        lines = [f"remote {s.remote.name}: {s.remote.shown}"]
        if s.remote.scope:
            lines.append(f"only project {s.remote.scope}'s memory goes there"
                         + (" (with profile and preferences)" if s.remote.personal else ""))
        if not s.reachable:
            lines.append(s.problem)
        lines.append(f"ahead {s.ahead} · behind {s.behind}")
        lines.append("last push: " + (local_time(s.last_push) if s.last_push else "never"))
        lines.append("last pull: " + (local_time(s.last_pull) if s.last_pull else "never"))
        if s.incoming:
            lines.append("a pull brings: " + ", ".join(s.incoming[:8])
                         + (f" and {len(s.incoming) - 8} more" if len(s.incoming) > 8 else ""))
        elif s.reachable:
            lines.append("a pull brings nothing new")
        if self.busy:
            lines.append(self.busy)
        self._say("\n".join(lines))

    def _say(self, text: str) -> None:
        self.query_one("#sync-detail", Static).update(Content(text))

    def _current(self) -> Any | None:
        i = self.query_one(OptionList).highlighted
        return self.statuses[i] if i is not None and i < len(self.statuses) else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("push", "pull"):
            return self._current() is not None and not self.busy
        return True

    # -- push and pull --------------------------------------------------------------------
    def action_push(self) -> None:
        s = self._current()
        if s is not None:
            self.busy = f"pushing to {s.remote.name}…"
            self._show(s)
            self.push(s.remote.name)

    def action_pull(self) -> None:
        s = self._current()
        if s is not None:
            self.busy = f"pulling from {s.remote.name}…"
            self._show(s)
            self.pull(s.remote.name)

    @work(thread=True, exclusive=True, group="sync-run", name="pushing", exit_on_error=False)
    def push(self, name: str) -> None:
        try:
            r = self.engine.push(name)
        except Exception as e:  # noqa: BLE001 - one line on screen, nothing lost
            self.post_message(self.Done(str(e).splitlines()[0], "error"))
            return
        self.post_message(self.Done(r.message + (f" ({r.commit[:12]})" if r.commit else "")))

    @work(thread=True, exclusive=True, group="sync-run", name="pulling", exit_on_error=False)
    def pull(self, name: str) -> None:
        try:
            p = self.engine.pull(name)
        except Exception as e:  # noqa: BLE001 - one line on screen, nothing lost
            self.post_message(self.Done(str(e).splitlines()[0], "error"))
            return
        if p is None:
            self.post_message(self.Done(f"{name}: already up to date"))
            return
        conflicts = sum(1 for x in p.problems if x.startswith("conflict"))
        self.post_message(self.Done(
            f"proposal {p.id} from {name}: {len(p.files)} files to review in Review"
            + (f", {conflicts} conflict{'s' if conflicts > 1 else ''} to resolve (C in Review)"
               if conflicts else ""), "warning" if conflicts else "information"))
        self.app.post_message(MemoryChanged("pull"))

    @on(Done)
    def _done(self, event: Done) -> None:
        self.busy = ""
        self.notify(event.text, severity=event.severity,  # type: ignore[arg-type]
                    timeout=8)
        self.action_refresh()
