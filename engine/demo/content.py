"""What the demo Codex home contains: sessions over three projects, one per memory status.

Each script is a list of turns; `build.py` turns them into rollout lines in Codex's format.
Turn kinds: ("user", text) · ("assistant", text) · ("commentary", text) ·
("call", name, arguments, output) · ("patch", patch, output) · ("web", query).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SHOP = "/home/demo/src/shop"
INFRA = "/home/demo/src/infra"
DOCS = "/home/demo/src/docs-site"

AGENTS_SHOP = ("# AGENTS.md instructions for /home/demo/src/shop\n\n<INSTRUCTIONS>\n"
               "Python 3.12, Django. Format with ruff. Small functions.\n</INSTRUCTIONS>")


@dataclass(frozen=True)
class DemoSession:
    key: str
    cwd: str
    hours_ago: float  # last activity (the rollout's mtime)
    turns: list[tuple[Any, ...]]
    source: str | dict[str, Any] = "cli"  # session_meta `source`: "cli", "exec", or an object
    branch: str = "main"
    memory_off_later: bool = False
    corrupt_line_after: int | None = None  # insert a damaged line after this turn
    compressed: bool = False
    archived: bool = False
    agents_md: bool = True
    pipeline: dict[str, Any] = field(default_factory=dict)  # stage-1 row / job to seed
    state_mode: str | None = None  # memory_mode in Codex's thread catalogue


SESSIONS: list[DemoSession] = [
    DemoSession("checkout-tests", SHOP, 3 * 24 + 2, [
        ("user", "The checkout tests fail. We use MySQL 8.4 here, and always run "
                 "`make check-quick`; the full suite takes twenty minutes."),
        ("call", "exec_command", {"cmd": "make check-quick", "workdir": SHOP},
         "Process exited with code 2\nFAILED tests/test_checkout.py::test_currency_rounding\n"
         "AssertionError: 10.0 != Decimal('9.99')"),
        ("commentary", "The rounding test fails because of float math; switching to Decimal."),
        ("patch", "*** Begin Patch\n*** Update File: shop/money.py\n@@\n-    return round("
                  "amount * rate, 2)\n+    return (Decimal(amount) * rate).quantize(Decimal("
                  "'0.01'))\n*** End Patch",
         "Success. Updated the following files:\nM shop/money.py"),
        ("call", "exec_command", {"cmd": "make check-quick", "workdir": SHOP},
         "Process exited with code 0\n212 passed in 41.3s"),
        ("assistant", "Fixed: money is now computed with `Decimal`; `make check-quick` passes."),
    ], pipeline={"extracted": True, "selected": True, "usage": 3, "slug": "checkout_tests"}),
    DemoSession("deploy-staging", INFRA, 8 * 24 + 5, [
        ("user", "Deploy the API to staging. Deploys always go through `make deploy`; the "
                 "staging cluster is called red-kite. Never deploy on Fridays."),
        ("call", "exec_command", {"cmd": "make deploy ENV=staging", "workdir": INFRA},
         "building image api:4f1c2e\npushing...\ndeployed to red-kite in 41s"),
        ("assistant", "Deployed `api:4f1c2e` to red-kite (staging)."),
    ], compressed=True, agents_md=False,
        pipeline={"extracted": True, "selected": True, "usage": 1, "slug": "deploy_staging"}),
    DemoSession("docs-style", DOCS, 2 * 24 + 3, [
        ("user", "Fix the broken links in the docs. We build with `mkdocs build --strict` and "
                 "lint prose with vale; the site is served on port 8001 locally."),
        ("call", "exec_command", {"cmd": "mkdocs build --strict", "workdir": DOCS},
         "WARNING - Doc file 'guide/install.md' contains a link to 'setup.md', not found\n"
         "Aborted with 1 warnings in strict mode!"),
        ("patch", "*** Begin Patch\n*** Update File: docs/guide/install.md\n@@\n-See "
                  "[setup](setup.md).\n+See [setup](../setup/index.md).\n*** End Patch",
         "Success. Updated the following files:\nM docs/guide/install.md"),
        ("assistant", "Links fixed; `mkdocs build --strict` is clean."),
    ], pipeline={"extracted": True, "selected": False, "slug": "docs_broken_links"}),
    DemoSession("what-is-this-error", SHOP, 5 * 24, [
        ("user", "What does `IntegrityError 1062` mean?"),
        ("assistant", "MySQL error 1062 is a duplicate entry for a unique key."),
    ], pipeline={"no_output": True}),
    DemoSession("docs-search", DOCS, 2 * 24 + 7, [
        ("user", "Add a search page to the docs site using the built-in search plugin."),
        ("call", "exec_command", {"cmd": "grep -n plugins mkdocs.yml", "workdir": DOCS},
         "12:plugins:\n13:  - search"),
        ("assistant", "Search is already enabled; I added a link to it in the navigation."),
    ], pipeline={"failed": "stream disconnected before completion: request timed out"}),
    DemoSession("refund-flow", SHOP, 9, [
        ("user", "Refunds must go through the `RefundService`, never update the order table "
                 "directly. Add partial refunds."),
        ("call", "exec_command", {"cmd": "rg -n 'class RefundService' shop", "workdir": SHOP},
         "shop/refunds/service.py:14:class RefundService:"),
        ("assistant", "Added `RefundService.partial()` with tests."),
    ], pipeline={"running": True}),
    DemoSession("django-upgrade", SHOP, 14, [
        ("user", "Upgrade Django to 5.1. We pin exact versions in requirements/base.txt and "
                 "run `pytest -x -q` before committing. Never run migrations against prod."),
        ("call", "exec_command", {"cmd": "pytest -x -q", "workdir": SHOP},
         "Process exited with code 1\n"
         "FAILED tests/test_admin.py::test_changelist - TypeError: unexpected keyword 'formfield'"),
        ("commentary", "Django 5.1 removed the formfield kwarg here; updating the admin."),
        ("call", "exec_command", {"cmd": "pytest -x -q", "workdir": SHOP},
         "Process exited with code 0\n318 passed in 52.0s"),
        ("assistant", "Django 5.1 is in; tests pass."),
    ], corrupt_line_after=2, branch="django-5.1"),
    DemoSession("terraform-fmt", INFRA, 20, [
        ("user", "Add a bucket for invoices. Always run `terraform fmt` and `terraform plan` "
                 "with the staging workspace first."),
        ("call", "exec_command", {"cmd": "terraform workspace select staging && terraform plan",
                                  "workdir": INFRA},
         "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
         "Plan: 1 to add, 0 to change, 0 to destroy."),
        ("assistant", "Added `aws_s3_bucket.invoices`; plan shows one resource to add."),
    ], agents_md=False),
    DemoSession("docs-port", DOCS, 1.5, [
        ("user", "Why does `mkdocs serve` fail with address in use?"),
        ("call", "exec_command", {"cmd": "lsof -i :8000", "workdir": DOCS}, "python 4412 demo"),
        ("assistant", "Port 8000 is taken; use `mkdocs serve -a localhost:8001` as the team does."),
    ], agents_md=False),
    DemoSession("old-payment-bug", SHOP, 60 * 24, [
        ("user", "Payments time out against the sandbox; the sandbox needs the `X-Test` header."),
        ("assistant", "Added the header in the sandbox client."),
    ]),
    DemoSession("personal-note", SHOP, 11, [
        ("user", "Personal: my vet appointment is on Friday, do not remember this."),
        ("assistant", "OK, I switched memories off for this session."),
    ], memory_off_later=True),
    DemoSession("web-research", INFRA, 26, [
        ("user", "Which Postgres version supports MERGE RETURNING? Look it up."),
        ("web", "postgres MERGE RETURNING version"),
        ("assistant", "PostgreSQL 17 added RETURNING to MERGE."),
    ], agents_md=False, state_mode="polluted"),
    DemoSession("nightly-report", INFRA, 30, [
        ("user", "Run the nightly cost report and print the total."),
        ("call", "exec_command", {"cmd": "make cost-report", "workdir": INFRA}, "total: $412.18"),
        ("assistant", "Total: $412.18."),
    ], source="exec", agents_md=False),
    DemoSession("old-theme", DOCS, 3 * 24, [
        ("user", "Switch the docs theme to material."),
        ("assistant", "Done: `theme: material` in mkdocs.yml."),
    ], archived=True, agents_md=False),
    DemoSession("opened-and-quit", SHOP, 10, []),
]

UNREADABLE_HOURS_AGO = 30  # a rollout left zero-filled by a crash


def raw_memory_for(s: DemoSession) -> str:
    first_user = next(t[1] for t in s.turns if t[0] == "user")
    return (
        "---\n"
        f"description: {s.key.replace('-', ' ')} in {s.cwd.rsplit('/', 1)[-1]}\n"
        f"task: {s.key}\n"
        f"task_group: {s.cwd.rsplit('/', 1)[-1]}\n"
        "task_outcome: success\n"
        f"cwd: {s.cwd}\n"
        f"keywords: {', '.join(s.key.split('-'))}\n"
        "---\n\n"
        "### Task 1\n"
        f"- user said: {first_user}\n"
        f"- outcome: {s.turns[-1][1]}\n"
    )


def rollout_summary_for(s: DemoSession) -> str:
    first_user = next(t[1] for t in s.turns if t[0] == "user")
    return (
        f"# {s.key.replace('-', ' ').capitalize()}\n\n"
        f"Rollout context: {s.cwd}, branch {s.branch}.\n\n"
        "## Task 1\n"
        "- Outcome: success\n"
        f"- Preference signals: {first_user}\n"
        f"- Result: {s.turns[-1][1]}\n"
    )

# A later session that used memory: its answer cites MEMORY.md lines and the source thread.
SESSIONS.append(DemoSession("tests-again", SHOP, 4, [
    ("user", "How do I run the tests again?"),
    ("cite", "Run `make check-quick` (MySQL 8.4 backend); the full suite is only for billing.",
     [("MEMORY.md", 12, 13, "test command and database"),
      ("skills/shop-tests/SKILL.md", 6, 9, "quick suite first")],
     ["checkout-tests"]),
], agents_md=False))

# Age after phase 1 (docs/codex-format.md "Pruning"): extracted when fresh, never consolidated,
# pruned by a later `memdeck extract` 31 days on; and one within max_rollout_age_days (45 here)
# but past max_unused_days (30), whose memory phase 2 would never take.
SESSIONS.append(DemoSession("cache-headers", DOCS, 40 * 24, [
    ("user", "Give the docs' static assets long cache headers; HTML pages must never be cached."),
    ("patch", "*** Begin Patch\n*** Update File: deploy/nginx.conf\n@@\n+location /assets/ "
              "{ add_header Cache-Control \"max-age=31536000, immutable\"; }\n*** End Patch",
     "Success. Updated the following files:\nM deploy/nginx.conf"),
    ("assistant", "Assets are cached for a year; HTML keeps `no-cache`."),
], agents_md=False, pipeline={"pruned_after_days": 31}))
SESSIONS.append(DemoSession("csv-delimiter", SHOP, 35 * 24, [
    ("user", "The order importer breaks on German Excel exports: they use `;` as the "
             "delimiter. Detect it instead of assuming commas."),
    ("call", "exec_command", {"cmd": "pytest tests/test_importer.py -q", "workdir": SHOP},
     "Process exited with code 0\n14 passed in 1.2s"),
    ("assistant", "The importer sniffs the delimiter with `csv.Sniffer`; the tests pass."),
]))
