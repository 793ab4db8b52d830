"""One clock (issue 28): memdeck reads "now" only through `engine/clock.py`.

A second reading of the wall clock is how a date leaks past the engine's injectable clock: a
screen that moves with the day under a test's fixed clock, a note named from another "now"
than the one it is compared with. The rule is checked on the source, and the check is shown
to catch each way of reading the wall clock."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from memdeck.engine import Engine
from memdeck.engine.clock import SHIFT_ENV, FixedClock, SystemClock, clock_shift

PACKAGE = Path(__file__).resolve().parent.parent
CLOCK_MODULE = PACKAGE / "engine" / "clock.py"

# module attribute calls that read the wall clock whatever their arguments
ALWAYS = {("time", "time"), ("time", "time_ns"), ("datetime", "now"), ("datetime", "today"),
          ("datetime", "utcnow"), ("date", "today")}
# calls that read it when the time argument is left out: (module, name) -> arguments it needs
WITHOUT_TIME = {("time", "localtime"): 1, ("time", "gmtime"): 1, ("time", "ctime"): 1,
                ("time", "asctime"): 1, ("time", "strftime"): 2}


def _dotted(node: ast.expr) -> tuple[str, str] | None:
    if isinstance(node, ast.Attribute):
        base = node.value
        if isinstance(base, ast.Name):
            return base.id, node.attr
        if isinstance(base, ast.Attribute):  # datetime.datetime.now
            return base.attr, node.attr
    return None


def wall_clock_reads(source: str) -> list[tuple[int, str]]:
    """(line, what) for every reading of the wall clock in `source`."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("time", "datetime"):
            for alias in node.names:
                if (node.module, alias.name) in ALWAYS | set(WITHOUT_TIME):
                    found.append((node.lineno, f"from {node.module} import {alias.name}"))
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name is None:
            continue
        if name in ALWAYS:
            found.append((node.lineno, ".".join(name)))
        elif name in WITHOUT_TIME and len(node.args) + len(node.keywords) < WITHOUT_TIME[name]:
            found.append((node.lineno, ".".join(name) + " without a time"))
    return found


def _product_files() -> list[Path]:
    return sorted(p for part in ("engine", "tui") for p in (PACKAGE / part).rglob("*.py")
                  if p != CLOCK_MODULE)


def test_nothing_but_the_clock_module_reads_the_wall_clock() -> None:
    leaks = [f"{p.relative_to(PACKAGE)}:{line}: {what}" for p in _product_files()
             for line, what in wall_clock_reads(p.read_text(encoding="utf-8"))]
    assert leaks == []


TESTS = PACKAGE / "tests"
# where the tests may read the wall clock, and why
TESTS_ALLOWED = {
    "suite_clock.py": "the suite's one clock",
    "test_one_clock.py": "its examples",
    "test_any_date.py": "how far the kernel's clock is from the date it moves the suite to",
    "llm_server.py": "the `created` field of a reply, as a real server stamps it",
    "codex_oracle": "the real Codex binary runs on the kernel's clock",
    "test_codex_oracle_read.py": "the real Codex binary runs on the kernel's clock",
    "test_codex_oracle_write.py": "the real Codex binary runs on the kernel's clock",
}


def test_the_tests_read_time_through_the_suite_clock() -> None:
    """A test (or a bench the tests import) that reads the wall clock disagrees with the engine
    as soon as the suite runs at another date (tests/test_any_date.py); they use
    `suite_clock.now()` or the engine's clock."""
    files = sorted(TESTS.rglob("*.py")) + sorted((PACKAGE / "bench").rglob("*.py"))
    leaks = [f"{p.relative_to(PACKAGE)}:{line}: {what}" for p in files
             if not {p.name, p.parent.name} & set(TESTS_ALLOWED)
             for line, what in wall_clock_reads(p.read_text(encoding="utf-8"))]
    assert leaks == []


@pytest.mark.parametrize("source", [
    "import time\nx = time.time()\n",
    "import time\nx = time.time_ns()\n",
    "from datetime import datetime\nx = datetime.now()\n",
    "import datetime\nx = datetime.datetime.now(datetime.UTC)\n",
    "from datetime import date\nx = date.today()\n",
    "import time\nx = time.strftime('%Y')\n",
    "import time\nx = time.localtime()\n",
    "from time import time\n",
])
def test_the_rule_catches_each_way_of_reading_the_wall_clock(source: str) -> None:
    assert wall_clock_reads(source)


@pytest.mark.parametrize("source", [
    "import time\nx = time.monotonic()\n",  # durations and deadlines are not dates
    "import time\nx = time.strftime('%Y', time.gmtime(0))\n",
    "from datetime import datetime, UTC\nx = datetime.fromtimestamp(0, UTC)\n",
])
def test_the_rule_lets_durations_and_given_times_through(source: str) -> None:
    assert wall_clock_reads(source) == []


def test_the_shift_moves_every_system_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SHIFT_ENV, raising=False)
    still = SystemClock().now()
    monkeypatch.setenv(SHIFT_ENV, str(31 * 86400))
    moved = SystemClock().now()
    assert 31 * 86400 - 60 < moved - still < 31 * 86400 + 60
    for junk in ("", "soon", "nan", "1e99"):  # not a number of seconds: not moved
        monkeypatch.setenv(SHIFT_ENV, junk)
        assert clock_shift() == 0.0


def test_history_commits_are_dated_by_the_engine_clock(home, tmp_path: Path) -> None:
    """A commit made "now" is as old as every other age memdeck shows: under a clock set to
    2031 the edit's history entry says 2031, not the day the test ran."""
    from memdeck.engine.memory_folder.history import History

    home.add("cli-preferences.jsonl")
    at = 1940000000.0  # 2031-06-22
    eng = Engine.open(home.root, clock=FixedClock(at))
    root = eng.home.memory_root
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n")
    eng.record_outside_edits()
    eng.memory_save("MEMORY.md", "# Memory\n- edited\n", eng.memory_read("MEMORY.md").version)
    times = {e.time for e in History(eng.home, eng.clock).entries()}
    assert times == {int(at)}
