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
