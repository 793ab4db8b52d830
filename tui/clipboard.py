"""`y` / `Y`: copy an id or a path (issue 23, item 9).

The text goes to the terminal as OSC 52, which sets the clipboard of the machine the terminal
runs on, over ssh and inside tmux (with `set-clipboard on`) too. Not every terminal honours
it, and none says whether it did, so the text is also handed to a clipboard program of this
machine when one is installed (wl-copy, xclip, xsel, pbcopy, clip.exe), and the toast shows
the text itself: whatever the terminal does, it can be selected from there or from the message
log (`@`)."""

from __future__ import annotations

import os
import shutil
import subprocess

PROGRAMS = (  # (program, arguments, needs): the first one present whose `needs` holds
    ("wl-copy", (), "WAYLAND_DISPLAY"),
    ("xclip", ("-selection", "clipboard"), "DISPLAY"),
    ("xsel", ("--clipboard", "--input"), "DISPLAY"),
    ("pbcopy", (), ""),
    ("clip.exe", (), ""),
)


def clipboard_program(env: dict[str, str] | None = None) -> list[str] | None:
    env = dict(os.environ) if env is None else env
    for name, args, needs in PROGRAMS:
        found = shutil.which(name, path=env.get("PATH"))
        if found and (not needs or env.get(needs)):
            return [found, *args]
    return None


def copy_with_program(text: str, env: dict[str, str] | None = None) -> str | None:
    """Hand `text` to this machine's clipboard program; its name, or None if there is none or
    it failed (a program that hangs is given two seconds)."""
    argv = clipboard_program(env)
    if argv is None:
        return None
    try:
        done = subprocess.run(argv, input=text.encode(), timeout=2, check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return os.path.basename(argv[0]) if done.returncode == 0 else None
