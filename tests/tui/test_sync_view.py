"""The Sync view (History `s`) and a pull's conflicts resolved in the app (Review `c`), with
Pilot, on two homes sharing a bare repository over file:// (issue 26)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memdeck.engine import Engine
from memdeck.tui.widgets.history.sync_screen import SyncScreen
from memdeck.tui.widgets.review.conflict_screen import ConflictScreen
from tests.conftest import HomeBuilder
from tests.tui.conftest import SIZE, settle

HEAD = "# Task Group: shop (Django web shop)"


def shared_homes(tmp_path: Path, a: Engine) -> tuple[Path, Engine]:
    repo = tmp_path / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    a.extract(backend="offline")
    a.accept(a.consolidate().id)
    b = Engine.open(HomeBuilder(tmp_path / "b").v1().root, clock=a.clock)
    for eng in (a, b):
        eng.remote_add("team", f"file://{repo}")
    a.push()
    return repo, b


def edit_head(eng: Engine, to: str) -> None:
    p = eng.home.memory_root / "MEMORY.md"
    p.write_text(p.read_text(encoding="utf-8").replace(HEAD, to, 1), encoding="utf-8")


async def test_the_sync_view_shows_each_remote_and_pulls_into_review(
        tmp_path: Path, demo_engine: Engine, make_app) -> None:
    _, b = shared_homes(tmp_path, demo_engine)
    app = make_app(b, initial="history")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("s")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, SyncScreen)
        row = screen.query_one("#sync-remotes").get_option_at_index(0).prompt
        assert "team" in str(row) and "1 to pull" in str(row)
        detail = str(screen.query_one("#sync-detail").render())
        assert "a pull brings: MEMORY.md" in detail and "last push: never" in detail
        await pilot.press("l")
        await settle(app, pilot)
        pulled = b.proposals()
        assert [p.backend for p in pulled] == ["pull:team"]
        said = [n.message for n in app._notifications]
        assert any(f"proposal {pulled[0].id} from team" in m and "in Review" in m
                   for m in said), said
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, SyncScreen)


async def test_a_conflict_is_resolved_in_the_app_and_the_pull_accepted(
        tmp_path: Path, demo_engine: Engine, make_app) -> None:
    a = demo_engine
    _, b = shared_homes(tmp_path, a)
    b.accept(b.pull("team").id)
    edit_head(a, "# Task Group: shop, as A has it")
    a.push()
    edit_head(b, "# Task Group: shop, as B has it")
    p = b.pull("team")
    assert p is not None and any(x.startswith("conflict") for x in p.problems)
    app = make_app(b, initial="review")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("C")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ConflictScreen)
        assert "as B has it" in str(screen.query_one("#conflict-ours").render())
        assert "as A has it" in str(screen.query_one("#conflict-theirs").render())
        await pilot.press("t")  # take the remote's lines
        await settle(app, pilot)
        assert b.pull_conflicts(p.id) == []
        assert "No conflict left" in str(screen.query_one("#conflict-base").render())
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("A")  # accept all: the confirm, then yes
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
    text = (b.home.memory_root / "MEMORY.md").read_text(encoding="utf-8")
    assert text.startswith("# Task Group: shop, as A has it\n")
    assert "<<<<" not in text
