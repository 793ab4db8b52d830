"""`E`: open a memory file or a rollout in the user's own editor (issue 23, item 9).

The app steps out of the terminal (Textual's suspend), runs `$VISUAL`, else `$EDITOR`, else
nano or vi as git does, and comes back when it exits. A memory file is never edited in place:
the editor gets a copy in a temporary folder, and what it saved comes back through the Memory
pane's own save, which refuses a secret and a change made on disk meanwhile (the conflict
dialog) like any edit made in the app. A rollout is opened where it is (memdeck never writes
one); the Sessions pane reads it again afterwards."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from textual.app import SuspendNotSupported

FALLBACKS = ("nano", "vi")


class EditorError(Exception):
    """One line for the toast: no editor, or it could not be started."""


def editor_argv(env: dict[str, str] | None = None) -> list[str]:
    env = dict(os.environ) if env is None else env
    for name in ("VISUAL", "EDITOR"):
        if (value := env.get(name, "").strip()):
            try:
                return shlex.split(value)
            except ValueError as e:
                raise EditorError(f"${name} cannot be read as a command: {e}") from None
    for name in FALLBACKS:
        if shutil.which(name, path=env.get("PATH")):
            return [name]
    raise EditorError("no editor: set $EDITOR (for example `export EDITOR=nano`)")


def run_editor(app: Any, path: Path) -> int:
    """Run the editor on `path` with the terminal handed over to it; its exit code."""
    argv = [*editor_argv(), str(path)]
    try:
        try:
            with app.suspend():
                return subprocess.call(argv)
        except SuspendNotSupported:
            if not app.is_headless:
                raise EditorError("this terminal cannot hand the screen over to an "
                                  "editor") from None
            return subprocess.call(argv, stdin=subprocess.DEVNULL)  # tests: no terminal
    except OSError as e:
        raise EditorError(f"cannot start {argv[0]}: {e.strerror or e}") from None
