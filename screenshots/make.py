"""Build the demo home, drive the memdeck app to each pane and to the review of a proposal,
and save SVG screenshots here (plus the command line's two views).

    .venv/bin/python screenshots/make.py

The app runs headless at 120×36 with Textual's Pilot, waits for its workers, and calls
`app.save_screenshot`. The demo home is built at a fixed time and a fixed path
($TMPDIR/memdeck-screenshots, removed after) so the pictures only change when the app does.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from memdeck.engine import Engine, demo_home  # noqa: E402
from memdeck.engine.clock import FixedClock  # noqa: E402

SIZE = (120, 36)
AT = 1795176000.0  # 2026-11-20 12:00 UTC


async def settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def shoot_app(engine: Engine) -> list[str]:
    from memdeck.tui.app import MemdeckApp
    from memdeck.tui.widgets.session_table import SessionTable

    app = MemdeckApp(engine, blink=False, home_label="~/.codex (demo) · memory v1")
    saved: list[str] = []

    async def save(name: str) -> None:
        await settle(pilot)
        app.clear_notifications()
        await pilot.pause()
        app.save_screenshot(f"{name}.svg", str(HERE))
        saved.append(f"{name}.svg")

    async with app.run_test(size=SIZE) as pilot:
        await save("app-1-sessions")
        table = app.query_one(SessionTable)
        table.cursor = next(i for i, s in enumerate(table.rows) if "Django" in s.preview)
        await pilot.press("enter")
        await save("app-1-transcript")
        await pilot.press("escape")  # said vs remembered, for a consolidated session
        table.cursor = next(i for i, s in enumerate(table.rows) if "checkout" in s.preview)
        await pilot.press("m")
        await save("app-1-said-remembered")
        # the raw memory column scrolled to the v1 row's rollout summary under it
        raw = app.screen.query_one("#sr-raw")
        raw.focus()
        raw.scroll_end(animate=False)
        await save("app-1-said-remembered-summary")
        await pilot.press("escape")
        await pilot.press("enter")  # back in the transcript, as the next shot expects
        await settle(pilot)
        await pilot.press("escape", "2")
        await save("app-2-raw-memories")
        await pilot.press("3")
        await save("app-3-memory")
        # MEMORY.md with its usage gutter, the cursor on a cited line, then its trace
        from memdeck.tui.panes.memory import MemoryPane

        cited = next(x.line for x in engine.line_usage("MEMORY.md").lines if x.count)
        memory = app.query_one(MemoryPane)
        memory.open_at("MEMORY.md", cited)
        await save("app-3-memory-gutter")
        await pilot.press("t")
        await save("app-3-trace")
        await pilot.press("escape", "1")
        await pilot.press("c")  # extract + consolidate, then the Review pane opens
        await save("app-5-review")
        await pilot.press("A")  # accept all (asks first), so history shows a consolidation
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("4")
        await save("app-4-history")
        await pilot.press("6")
        await save("app-6-settings")
    return saved


async def shoot_sync(tmp: Path, clock: Any) -> list[str]:
    """The Sync view (History s) with a remote to pull from, and a pull's conflict (Review C):
    two demo homes sharing a bare repository over file://."""
    import subprocess

    from memdeck.tui.app import MemdeckApp

    repo = tmp / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    a = Engine.open(demo_home(tmp / "machine-a", clock), clock=clock)
    b_home = demo_home(tmp / "machine-b", clock)
    shutil.rmtree(b_home / "memories")  # a second machine, no memory of its own yet
    b = Engine.open(b_home, clock=clock)
    b.config_set("memories.version", "v1")  # as on machine A
    a.extract(backend="offline")
    a.accept(a.consolidate().id)
    for eng in (a, b):
        eng.remote_add("team", f"file://{repo}")
    a.push()
    saved: list[str] = []

    async def shoot(eng: Engine, initial: str, keys: list[str], name: str) -> None:
        app = MemdeckApp(eng, blink=False, home_label="~/.codex (laptop) · memory v1",
                         initial=initial)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            for k in keys:
                await pilot.press(k)
                await settle(pilot)
            app.clear_notifications()
            await pilot.pause()
            app.save_screenshot(f"{name}.svg", str(HERE))
        saved.append(f"{name}.svg")

    await shoot(b, "history", ["s"], "app-4-sync")
    b.accept(b.pull("team").id)
    head = "# Task Group: shop (Django web shop)"
    for eng, said in ((a, "shop: Django 5.1, MySQL 8.4"), (b, "shop: Django 5.1, Postgres 16")):
        memory = eng.home.memory_root / "MEMORY.md"
        memory.write_text(memory.read_text(encoding="utf-8").replace(
            head, f"# Task Group: {said}", 1), encoding="utf-8")
    a.push()
    b.pull("team")
    await shoot(b, "review", ["C"], "app-5-conflict")
    return saved


def shoot_cli(engine: Engine) -> list[str]:
    from rich.console import Console

    from memdeck.tui.render import print_session, print_sessions

    sessions = engine.sessions()
    now = engine.clock.now()
    console = Console(record=True, width=120, force_terminal=True, color_system="truecolor",
                      file=io.StringIO())
    print_sessions(sessions, now, Path("~/.codex"), console)
    console.save_svg(str(HERE / "cli-sessions.svg"), title="memdeck sessions")
    console = Console(record=True, width=120, force_terminal=True, color_system="truecolor",
                      file=io.StringIO())
    eligible = next(s for s in sessions if s.status == "eligible" and s.bad_lines)
    print_session(engine.session(eligible.id), now, console)
    console.save_svg(str(HERE / "cli-show.svg"), title=f"memdeck show {eligible.id[:8]}")
    return ["cli-sessions.svg", "cli-show.svg"]


def main() -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ["TEXTUAL_ANIMATIONS"] = "none"
    stamp = f"@{int(AT)} +0000"
    os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = stamp
    # a fixed place, not a random temp dir: the home's path shows in MEMORY.md's bullets
    # and the transcript's header, so the pictures change only when the app does
    tmp = Path(tempfile.gettempdir()) / "memdeck-screenshots"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        clock = FixedClock(AT)
        home = demo_home(tmp / "demo-codex-home", clock)
        for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            os.environ.pop(var, None)
        os.environ["XDG_DATA_HOME"] = os.environ["XDG_CONFIG_HOME"] = str(tmp / "xdg")
        saved = shoot_cli(Engine.open(home, clock=clock))
        saved += asyncio.run(shoot_app(Engine.open(home, clock=clock)))
        saved += asyncio.run(shoot_sync(tmp, clock))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("wrote", ", ".join(saved))


if __name__ == "__main__":
    main()
