"""Codex's git baseline inside the memory root (codex-format §4.1 step 10).

After every successful phase 2 Codex deletes `<root>/.git` and commits the whole tree again
as one commit with a fixed message and author. Phase 2 later diffs the working tree against
that commit, so edits made since (by a user, or by memdeck) reach the consolidation agent.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CODEX_NAME = "Codex"
CODEX_EMAIL = "noreply@openai.com"
BASELINE_SUBJECT = "Initialize Codex git baseline"
BASELINE_MESSAGE = f"{BASELINE_SUBJECT}\n\nCo-authored-by: {CODEX_NAME} <{CODEX_EMAIL}>"


def _git_env(when: float | None = None) -> dict[str, str]:
    env = {
        "GIT_AUTHOR_NAME": CODEX_NAME, "GIT_AUTHOR_EMAIL": CODEX_EMAIL,
        "GIT_COMMITTER_NAME": CODEX_NAME, "GIT_COMMITTER_EMAIL": CODEX_EMAIL,
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
    }
    if when is not None:
        stamp = f"{int(when)} +0000"
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = stamp
    return env


def reset_codex_baseline(root: Path, when: float | None = None) -> str:
    """Delete `root/.git` and commit the current tree as Codex's single baseline commit."""
    import git

    gitdir = root / ".git"
    if gitdir.is_symlink() or gitdir.is_file():
        gitdir.unlink()
    elif gitdir.exists():
        shutil.rmtree(gitdir)
    repo = git.Repo.init(root)
    try:
        with repo.git.custom_environment(**_git_env(when)):
            repo.git.add("-A")
            repo.git.commit("-q", "--allow-empty", "--no-verify", "--no-gpg-sign",
                            "-m", BASELINE_MESSAGE)
        return repo.head.commit.hexsha
    finally:
        repo.close()


def is_codex_baseline(message: str, author_name: str, author_email: str) -> bool:
    return (message.strip().splitlines()[:1] == [BASELINE_SUBJECT]
            and author_name == CODEX_NAME and author_email == CODEX_EMAIL)
