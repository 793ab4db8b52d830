"""Shared fixtures: temporary Codex homes built from real rollout files."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings
from suite_clock import now

REPO = Path(__file__).resolve().parent.parent
# the rollouts bundled with the tests; MEMDECK_FIXTURES points at another folder of them
FIXTURES = Path(os.environ.get("MEMDECK_FIXTURES", REPO / "tests" / "fixtures" / "rollouts"))

# Hypothesis: a small count for the edit-test loop, CI's own larger count when CI=true
# (HYPOTHESIS_PROFILE picks one by name). A test with its own max_examples keeps it.
settings.register_profile("dev", max_examples=25)
settings.register_profile("ci", max_examples=100)  # Hypothesis's own default
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI") == "true" else "dev"))

# The tiers (README, "Tests"): each module's marks, by file name, in one place. The fast tier is
# `-m "not slow and not oracle and not soak and not fuzz"`; the README's test command runs all.
TIERS: dict[str, tuple[str, ...]] = {
    "test_codex_oracle_": ("oracle",),  # drives the real Codex binary (tests/codex_oracle)
    "test_soak": ("soak", "slow"),
    "test_nothing_lost": ("soak", "slow"),  # the kill trials
    "test_fuzz_": ("fuzz",),
    "test_tmux_": ("slow",),
    "test_packaging": ("slow",),
    "test_types": ("slow",),
    "test_any_date": ("slow",),  # reruns the date-sensitive modules at other dates (~1 min each)
    # the kill trials and faults of the memory-folder switch, each in a memdeck process of its
    # own (56 s and 23 s of the fast tier's 164 s on 2 cores, 2026-12-07)
    "test_switch_faults": ("soak", "slow"),
    "test_memory_folder_journal": ("soak", "slow"),
    # real `memdeck` processes racing for extraction slots, or every command beside a FIFO or
    # under both option orders
    "test_extract_slots": ("slow",),
    "test_fifo": ("slow",),
    "test_cli_global_options": ("slow",),
    "test_secrets_everywhere": ("slow",),  # one secret through a memory's whole life (30 s)
    "test_memory_version": ("slow",),  # the whole pipeline on a v2 home, command by command
    "test_llm_backend": ("slow",),  # real timeouts, retries and back-off on a local server
    "test_reply_cap": ("slow",),  # 200 MB replies streamed from a local server
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        for prefix, marks in TIERS.items():
            if name.startswith(prefix):
                for mark in marks:
                    item.add_marker(mark)
        if item.path.parent.name == "tui" and name.startswith("test_"):
            item.add_marker("slow")  # Textual Pilot: each test boots the app


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the real ~/.codex, a real key, or the user's XDG folders."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "default-codex-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_SQLITE_HOME", "MEMDECK_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    # what the code under test puts in the temp folder (e.g. the `E` edit's copy, which the
    # app keeps on purpose when the editor fails) lands in pytest's own temp folders (beside
    # tmp_path, which some tests list), not /tmp
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("tempfile")))


MEMORIES_ON = "\n[features]\nmemories = true\n"


class HomeBuilder:
    """A Codex home in a temp folder; place rollouts with the idle time a test needs. It is
    the home of someone who uses memories: its config.toml turns them on (Codex's default
    is off), also after `config(text)` unless the text has a `[features]` table of its own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "sessions").mkdir(parents=True, exist_ok=True)
        self.config("")

    def add(self, fixture: str | Path, *, idle_hours: float = 8.0, archived: bool = False,
            name: str | None = None, day: str = "2026/12/01") -> Path:
        src = Path(fixture) if Path(fixture).is_absolute() else FIXTURES / str(fixture)
        stem = name or f"rollout-2026-12-01T10-00-00-{src.name}"
        if archived:
            dest_dir = self.root / "archived_sessions"
        else:
            dest_dir = self.root / "sessions" / day
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = dest_dir / stem
        shutil.copyfile(src, dest)
        self.touch(dest, idle_hours)
        return dest

    def write(self, name: str, data: bytes, *, idle_hours: float = 8.0,
              day: str = "2026/12/01") -> Path:
        d = self.root / "sessions" / day
        d.mkdir(parents=True, exist_ok=True)
        p = d / name
        p.write_bytes(data)
        self.touch(p, idle_hours)
        return p

    @staticmethod
    def touch(path: Path, idle_hours: float) -> None:
        t = now() - idle_hours * 3600
        os.utime(path, (t, t))

    def v1(self) -> HomeBuilder:
        """A home where Codex ran memory v1: it has a `memories/` folder
        (docs/codex-format.md "Memory versions"; without one, Codex 0.169 and memdeck use v2)."""
        (self.root / "memories").mkdir(parents=True, exist_ok=True)
        return self

    def config(self, text: str) -> Path:
        p = self.root / "config.toml"
        p.write_text(text if "[features]" in text else text + MEMORIES_ON, encoding="utf-8")
        return p


def add_pasted_log_session(home: HomeBuilder) -> Path:
    """A real 0.169 TUI session into which the user pasted a 2,000-line build log (150 KB,
    about 38,000 tokens of phase-1 input), as people do."""
    import json

    lines = (FIXTURES / "codex-0.169-tui.jsonl").read_text().splitlines()
    log = "\n".join(f"[{i:04d}] cargo build: compiling crate-{i} v0.{i}.0 (/home/dev/src/"
                     f"ledger/crates/c{i})" for i in range(2000))
    pasted = {"timestamp": "2026-12-03T00:30:00.000Z", "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"Why is the build this slow?\n{log}"}]}}
    return home.write("rollout-2026-12-03T00-12-20-01a2393e-b457-7183-b793-3b51ac9fa267.jsonl",
                      "\n".join([*lines, json.dumps(pasted)]).encode() + b"\n")


@pytest.fixture
def home(tmp_path: Path) -> HomeBuilder:
    return HomeBuilder(tmp_path / "codex-home")


@pytest.fixture
def accepted_home(tmp_path: Path) -> Path:
    """The demo home after one accepted consolidation: a real folder, history, rows."""
    from memdeck.engine import Engine, demo_home

    h = demo_home(tmp_path / "demo")
    eng = Engine.open(h)
    eng.extract(backend="offline")
    eng.accept(eng.consolidate().id)
    return h


@pytest.fixture
def fixture_path() -> Callable[[str], Path]:
    return lambda name: FIXTURES / name


from codex_oracle.fake_responses import fake_responses  # noqa: E402,F401  (Responses API)
from codex_oracle.runner import codex_bin  # noqa: E402,F401  (the real Codex, or skip)
from llm_server import llm_server  # noqa: E402,F401  (the local OpenAI-compatible server)

FAKE_GITHUB_TOKEN = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


def plant_secret(home: Path, slug: str = "docs_broken_links") -> None:
    """A raw memory that carries a secret, as a careless writer could have stored it."""
    import sqlite3

    conn = sqlite3.connect(home / "memories_1.sqlite")
    conn.execute("UPDATE stage1_outputs SET raw_memory = raw_memory || ? WHERE rollout_slug = ?",
                 (f"- fact: key {FAKE_GITHUB_TOKEN}", slug))
    conn.commit()
    conn.close()


def served_demo(path: Path, url: str, *, retries: int = 0, timeout: int | None = None,
                extracted: bool = False) -> Path:
    """The demo home, its model endpoint the local test server at `url` (with `retries`
    and, if given, a request `timeout`), phase 1 run offline first when `extracted`."""
    from memdeck.engine import Engine, demo_home

    home = demo_home(path)
    eng = Engine.open(home)
    if extracted:
        eng.extract(backend="offline")
    eng.config_set("memdeck.base_url", url)
    eng.config_set("memdeck.max_retries", str(retries))
    if timeout is not None:
        eng.config_set("memdeck.request_timeout", str(timeout))
    return home


def hold_global_lease(home: Path, seconds: int = 600) -> None:
    """A Codex session consolidating right now: the global job running with a live lease."""
    import sqlite3

    conn = sqlite3.connect(home / "memories_1.sqlite")
    conn.execute("UPDATE jobs SET status = 'running', worker_id = 'codex-thread', "
                 "lease_until = ? WHERE job_key = 'global'", (int(now()) + seconds,))
    conn.commit()
    conn.close()
