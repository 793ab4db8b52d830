"""Codex's git baseline inside the memory root (docs/codex-format.md "The git baseline").

After every successful phase 2 Codex deletes `<root>/.git` and commits the whole tree again
as one commit with a fixed message and author. Phase 2 later diffs the working tree against
that commit, so edits made since (by a user, or by memdeck) reach the consolidation agent.

Codex 0.169 also marks the repository as its own with `.git/codex-baseline-version` (`1\\n`)
and keeps an empty lock file at `.codex-baseline/.git/codex-baseline.lock` in the root; a
`.git` without the version file is thrown away and rebuilt as an empty baseline, and then the
next consolidation sees every file as added. memdeck leaves the repository exactly as 0.169
does: branch `main`, one commit whose message has no final newline, the index written from
it, the version file and the lock file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

CODEX_NAME = "Codex"
CODEX_EMAIL = "noreply@openai.com"
BASELINE_SUBJECT = "Initialize Codex git baseline"
BASELINE_MESSAGE = f"{BASELINE_SUBJECT}\n\nCo-authored-by: {CODEX_NAME} <{CODEX_EMAIL}>"
BASELINE_BRANCH = "main"
VERSION_FILE = "codex-baseline-version"  # inside .git
VERSION_BYTES = b"1\n"
LOCK_PATH = (".codex-baseline", ".git", "codex-baseline.lock")  # inside the memory root


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


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def ensure_baseline_lock(root: Path) -> None:
    """The empty lock file Codex 0.169 keeps in every root it has consolidated."""
    lock = root.joinpath(*LOCK_PATH)
    for parent in (root / LOCK_PATH[0], lock.parent):
        if parent.is_symlink() or parent.is_file():
            parent.unlink()  # never a symlink in the root (Codex deletes them and fails)
    lock.parent.mkdir(parents=True, exist_ok=True)
    if lock.is_symlink() or lock.is_dir():
        _remove(lock)
    if not lock.exists():
        lock.touch()


def reset_codex_baseline(root: Path, when: float | None = None) -> str:
    """Delete `root/.git` and commit the current tree as Codex's single baseline commit."""
    import git

    gitdir = root / ".git"
    _remove(gitdir)
    ensure_baseline_lock(root)
    repo = git.Repo.init(root)
    try:
        with repo.git.custom_environment(**_git_env(when)):
            repo.git.symbolic_ref("HEAD", f"refs/heads/{BASELINE_BRANCH}")
            repo.git.add("-A")
            tree = repo.git.write_tree()
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", delete=False) as f:
                f.write(BASELINE_MESSAGE)  # commit-tree -F keeps it verbatim: no final newline
            try:
                sha = repo.git.commit_tree(tree, "-F", f.name).strip()
            finally:
                os.unlink(f.name)
            repo.git.update_ref(f"refs/heads/{BASELINE_BRANCH}", sha)
        (gitdir / VERSION_FILE).write_bytes(VERSION_BYTES)
        return sha
    finally:
        repo.close()


def is_codex_baseline(message: str, author_name: str, author_email: str) -> bool:
    return (message.strip().splitlines()[:1] == [BASELINE_SUBJECT]
            and author_name == CODEX_NAME and author_email == CODEX_EMAIL)
