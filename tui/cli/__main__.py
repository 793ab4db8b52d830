"""`python -m memdeck.tui.cli`, the same as the `memdeck` command."""

from .entry import main

if __name__ == "__main__":
    raise SystemExit(main())
