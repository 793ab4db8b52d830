"""README's two set-up commands stay the ones CI and users run."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(.+?)\n```", text, re.S)[:2]


def test_readme_has_two_setup_commands_first() -> None:
    demo, tests = _commands()
    assert "memdeck demo" in demo and "pip install" in demo
    assert "pytest" in tests and "pip install" in tests


def test_ci_runs_the_readme_test_command() -> None:
    _, tests = _commands()
    ci = (ROOT / ".ci" / "run").read_text()
    assert tests in ci.splitlines()


def test_the_readme_names_no_session_id_a_reader_cannot_have() -> None:
    """Issue 23, item 9: the examples' ids must exist where the reader runs them. The demo's
    are UUIDv7s of the moment it is built, so the README says ID, never one of them."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not re.findall(r"\b01[0-9a-f]{6}(?:-[0-9a-f]{4})?\b", text)
    assert "memdeck show ID" in text and "unique start of its id" in text
