"""The watcher on a real folder: new rollouts indexed, outside memory edits recorded,
the idle scheduler extracting and proposing, a prompt stop."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memdeck.engine import Engine, demo_home


class Recorder:
    def __init__(self) -> None:
        self.events: list = []
        self.cond = threading.Condition()

    def __call__(self, event) -> None:
        with self.cond:
            self.events.append(event)
            self.cond.notify_all()

    def wait_for(self, kind: str, match=lambda e: True, timeout: float = 60.0):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                found = [e for e in self.events if e.kind == kind and match(e)]
                if found:
                    return found[-1]
                left = deadline - time.monotonic()
                assert left > 0, f"no {kind} event; saw {self.events}"
                self.cond.wait(left)


@pytest.fixture
def watching(tmp_path: Path):
    home = demo_home(tmp_path / "demo")
    eng = Engine.open(home)
    rec = Recorder()
    stop = threading.Event()
    w = eng.watcher(rec, stop, tick=3600, debounce_ms=100)
    t = threading.Thread(target=w.run, daemon=True)
    t.start()
    time.sleep(0.5)  # let the watch start
    yield home, eng, rec
    stop.set()
    t.join(10)
    assert not t.is_alive(), "the watcher did not stop"


def test_new_rollouts_and_outside_memory_edits(watching, fixture_path) -> None:
    home, eng, rec = watching
    day = home / "sessions" / "2026" / "12" / "02"
    day.mkdir(parents=True, exist_ok=True)
    (day / "rollout-2026-12-02T10-00-00-01a23130-5bfc-7f67-aecc-1c0d25836e04.jsonl"
     ).write_bytes(fixture_path("cites-memories.jsonl").read_bytes())
    rec.wait_for("indexed", lambda e: e.detail.startswith("1 new"))
    (home / "memories" / "MEMORY.md").write_text("edited in an editor\n")
    rec.wait_for("memory_changed")
    assert eng.history()[0].origin == "external"


def test_idle_scheduler_extracts_and_proposes(tmp_path: Path) -> None:
    home = demo_home(tmp_path / "demo")
    eng = Engine.open(home)
    eng.config_set("memdeck.auto_extract", "true")
    rec = Recorder()
    stop = threading.Event()
    t = threading.Thread(target=eng.watcher(rec, stop, tick=3600).run, daemon=True)
    t.start()
    try:
        assert "2 extracted" in rec.wait_for("extracted").detail  # max_rollouts_per_startup
        assert "pending" in rec.wait_for("proposal").detail
    finally:
        stop.set()
        t.join(10)
    assert [p.status for p in Engine.open(home).proposals()] == ["pending"]


def test_no_idle_extraction_while_generating_memories_is_off(tmp_path: Path) -> None:
    # the user switched generate_memories off: memdeck's own sweep does not extract either
    # (Codex still extracts sessions that started with memories on; the listing says so)
    eng = Engine.open(demo_home(tmp_path / "demo"))
    eng.config_set("memdeck.auto_extract", "true")
    watcher = eng.watcher(Recorder(), threading.Event())
    assert watcher.actions.auto_extract()
    eng.config_set("generate_memories", "false")
    assert not watcher.actions.auto_extract()  # read again every round
