"""Build the demo home and save screenshots of memdeck's views as SVG files here.

    python screenshots/make.py

Until the Textual app lands these are the command-line views, rendered by Rich at 120
columns; the app's panes join them as they are built.
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

from rich.console import Console

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from engine import Engine, demo_home  # noqa: E402
from tui.render import print_session, print_sessions  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = demo_home(Path(tmp) / "demo-codex-home")
        engine = Engine.open(home)
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
    print("wrote", ", ".join(p.name for p in sorted(HERE.glob("*.svg"))))


if __name__ == "__main__":
    main()
