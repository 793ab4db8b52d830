"""What a command proves, for ranking what a session ran (issue 25, item 2) and for turning
the checks that passed into tips (offline_digest.py)."""

from __future__ import annotations

import re

# first to last: tests, then builds, linters and type checks, then migrations and installs;
# any other command that did more than look comes after them
PROOF = (
    re.compile(r"\b(?:pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|"
               r"(?:cargo|go|npm|pnpm|yarn|bun|dotnet|mix|deno|swift|make|gradle|mvn|flutter|"
               r"php artisan|rails|bundle exec rspec) (?:run )?test\w*|\./gradlew \S*test\w*|"
               r"unittest|playwright test)\b"),
    re.compile(r"\b(?:(?:cargo|go|npm|pnpm|yarn|bun|dotnet|swift) (?:run )?build|make\b|"
               r"tsc|mypy|pyright|ruff|eslint|clippy|flake8|pylint|golangci-lint|"
               r"cargo check|terraform\b[^|;&]*\b(?:plan|validate|fmt)|gradle \w*build|"
               r"(?:\./)?gradlew \w*(?:build|check|lint)\w*|ktlint\w*|detekt|spotless\w*|"
               r"mvn \w*(?:package|install|verify)|dotnet format|rubocop|golint|staticcheck|"
               r"prettier --check|biome (?:check|lint)|shellcheck|hadolint)\b"),
    re.compile(r"\b(?:migrate|alembic|prisma|flyway|liquibase|pip install|npm (?:install|ci)|"
               r"uv (?:sync|pip)|poetry install|bundle install)\b"),
)
CHECK_KINDS = ("tests", "build or check", "migration or install")


def proves(command: str) -> int:
    """The rank of what `command` proves: 0 tests … len(PROOF) nothing in particular."""
    return next((i for i, rx in enumerate(PROOF) if rx.search(command)), len(PROOF))
