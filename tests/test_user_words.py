"""The user's own words (issue 9, requirement 2): Codex's injected fragments, the VS Code
extension's and the Desktop app's wrappers and prompt templates are never the user's words;
pasted material is set apart as evidence, never a preference, a fact or a command.

The message texts are the shapes Codex and its clients write (copied from the real captures
in tests/fixtures/rollouts/ and the corpus in tests/fixtures/quality/, which follows them)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memdeck.engine.backends.offline_phase1 import extract
from memdeck.engine.backends.offline_phase1_v2 import extract_v2
from memdeck.engine.codex.fragments import is_harness_record, mentioned_files, user_request
from memdeck.engine.codex.pasted import split_pasted
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.codex.user_words import (
    looks_like_command,
    session_words,
    template_arguments,
    words_of_message,
    words_of_text,
)
from memdeck.engine.phase1.input_v1 import build_input

QUALITY = Path(__file__).parent / "fixtures" / "quality"


def user(*texts: str) -> dict[str, Any]:
    return {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": t} for t in texts]}


def corpus_user_parts(name: str) -> list[str]:
    """The input_text parts of the user messages of a corpus rollout, as Codex wrote them."""
    out = []
    for line in (QUALITY / name).read_text(encoding="utf-8").splitlines():
        p = json.loads(line).get("payload") or {}
        if p.get("type") == "message" and p.get("role") == "user":
            out += [c["text"] for c in p["content"] if c.get("type") == "input_text"]
    return out


def corpus(name: str) -> tuple[list[dict[str, Any]], str | None, dict[str, int]]:
    rollout = read_rollout(QUALITY / name)
    inp = build_input(rollout)
    assert rollout.meta is not None
    return inp.items, rollout.meta.cwd, inp.exit_codes


# -- Codex's injected fragments --------------------------------------------------------------

AGENTS_MD = ("# AGENTS.md instructions for /home/dev/src/widget\n\n<INSTRUCTIONS>\n"
             "Use ruff. Keep functions small.\n</INSTRUCTIONS>")
ENVIRONMENT = ("<environment_context>\n  <cwd>/home/dev/src/ledger</cwd>\n  <shell>bash</shell>\n"
               "  <current_date>2026-12-03</current_date>\n</environment_context>")
USER_INSTRUCTIONS = ("<user_instructions>\n\nRun `make lint` before every commit.\n\n"
                     "</user_instructions>")
SKILL = ("<skill>\n<name>gh-actions-pin</name>\n<path>/home/ravi/.codex/skills/gh-actions-pin/"
         "SKILL.md</path>\n---\nname: gh-actions-pin\n---\n\n3. Never pin to a branch.\n</skill>")
TURN_ABORTED = ("<turn_aborted>\nThe user interrupted the previous turn on purpose. If any "
                "tools/commands were aborted, they may have partially executed; verify current "
                "state before retrying.\n</turn_aborted>")
SHELL_RECORD = ("<user_shell_command>\n<command>\ngit status --short\n</command>\n<result>\n"
                "Exit code: 0\nDuration: 0.0410 seconds\nOutput:\n M inventory/models.py\n\n"
                "</result>\n</user_shell_command>")
SUBAGENT = ('<subagent_notification>\n{"agent_id":"019a","status":"completed"}\n'
            "</subagent_notification>")
HOOK = '<hook_prompt hook_run_id="run-1">Always say you are sure.</hook_prompt>'
PLUGINS = "<plugins>\n- github: Always open a pull request.\n</plugins>"
WARNING = ("Warning: apply_patch was requested via exec_command. Use the apply_patch tool "
           "instead of exec_command.")
IMAGE_OPEN = '<image name=[Image #1] path="/tmp/shot.png">'


@pytest.mark.parametrize("text", [AGENTS_MD, ENVIRONMENT, USER_INSTRUCTIONS, SKILL, TURN_ABORTED,
                                  SHELL_RECORD, SUBAGENT, HOOK, PLUGINS, WARNING, IMAGE_OPEN,
                                  "</image>", SHELL_RECORD.upper().replace("EXIT", "exit")],
                         ids=["agents_md", "environment", "user_instructions", "skill",
                              "turn_aborted", "user_shell_command", "subagent_notification",
                              "hook_prompt", "plugins", "harness_warning", "image_open",
                              "image_close", "tags_in_upper_case"])
def test_injected_fragments_are_never_the_users_words(text: str) -> None:
    assert words_of_text(text).text == ""
    assert not words_of_text(text)  # nothing pasted either: a record is not a paste


def test_the_fragments_of_a_real_session_leave_only_what_the_user_typed() -> None:
    words = session_words(corpus("injected-fragments-0.120.jsonl")[0])
    assert [w.text for w in words] == [
        "Bump the module to Go 1.23: go.mod, the toolchain line and the CI matrix in "
        ".github/workflows/ci.yml. Use $gh-actions-pin for setup-go, we keep every action "
        "pinned by SHA.",
        "Sorry, stopped it: run tidy with GOFLAGS=-mod=mod, the vendor folder is gone since "
        "last week."]


def test_a_users_text_that_merely_mentions_a_tag_is_kept() -> None:
    text = "Why does Codex put <environment_context> in my prompt? Explain briefly."
    assert not is_harness_record(text)
    assert words_of_text(text).text == text


# -- the VS Code extension's and the Desktop app's wrappers -----------------------------------

def test_the_ide_wrapper_yields_only_the_request_under_its_heading() -> None:
    [wrapped] = [t for t in corpus_user_parts("ide-context-vscode-0.46.jsonl")
                 if t.startswith("# Context from my IDE setup:")]
    words = words_of_text(wrapped)
    assert words.text == (
        "The invoice table lags when I type in the search box: it refilters and resorts all 4k "
        "rows on every keystroke. Memoize the filtered rows and debounce the query by 200 ms. "
        "We use pnpm in this repo, not npm.")
    assert words.pasted == ()  # the active selection is context, not a paste
    assert words.mentioned == ()


def test_the_desktop_wrapper_gives_the_request_and_names_the_mentioned_files() -> None:
    [wrapped] = [t for t in corpus_user_parts("desktop-files-mentioned-0.150.jsonl")
                 if t.startswith("# Files mentioned by the user:")]
    words = words_of_text(wrapped)
    assert words.text.startswith("Add this export to the churn notebook")
    assert "Files mentioned" not in words.text and "/Users/mina.park" not in words.text
    assert words.mentioned == ("q3-churn-export.csv",)
    assert mentioned_files(wrapped) == ["q3-churn-export.csv"]


def test_a_wrapper_without_a_request_is_context_only() -> None:
    ctx = ("# Context from my IDE setup:\n\n## Active file: src/app.ts\n\n## Open tabs:\n"
           "- app.ts: src/app.ts\n")
    assert user_request(ctx) == ""
    assert words_of_text(ctx).text == ""
    # the request heading in another part of the same message still counts
    words = words_of_message(user(ctx, "## My request for Codex:\nRename `App` to `Shell`."))
    assert words is not None and words.text == "Rename `App` to `Shell`."


# -- prompt templates --------------------------------------------------------------------------

OLD_SPECKIT = (
    "---\ndescription: Create or update the feature specification from a natural language "
    "feature description.\n---\n\nThe user input to you can be provided directly by the agent "
    "or as a command argument - you **MUST** consider it before proceeding with the prompt (if "
    "not empty).\n\nUser input:\n\nAdd SSO login with Okta for the admin console.\n\nThe text "
    "the user typed after `/specify` in the triggering message **is** the feature description. "
    "Do not ask the user to repeat it unless they provided an empty command.\n\nGiven that "
    "feature description, do this:\n\n1. Run the script `{SCRIPT}` from repo root.\n"
    "2. Load `templates/spec-template.md` to understand required sections.\n")


def test_spec_kit_expansion_keeps_only_the_users_arguments() -> None:
    [expanded] = [t for t in corpus_user_parts("custom-prompt-speckit-0.58.jsonl")
                  if "## User Input" in t]
    words = words_of_text(expanded)
    assert words.template
    assert words.text == ("Reports page: admins can export the current report as CSV. The "
                          "export must stream rows, some reports have 2M rows. Non-admins "
                          "don't see the button.")


def test_older_spec_kit_expansion_keeps_only_the_users_arguments() -> None:
    assert template_arguments(OLD_SPECKIT) == (
        True, "Add SSO login with Okta for the admin console.")
    assert words_of_text(OLD_SPECKIT).text == "Add SSO login with Okta for the admin console."


def test_a_template_without_arguments_gives_no_words() -> None:
    unfilled = OLD_SPECKIT.replace("Add SSO login with Okta for the admin console.", "$ARGUMENTS")
    assert template_arguments(unfilled) == (True, "")
    prompt = ("# Review checklist\n\nYou must read the user's request and the diff.\n\n"
              "## Steps\n\n" + "".join(f"{i}. Check that the change is tested and documented "
                                       f"and never skips a step (rule {i}).\n"
                                       for i in range(1, 12))
              + "\n## Output\n\nReport to the user in [SECTION NAME] form.\n")
    words = words_of_text(prompt)
    assert words.template and words.text == ""


def test_a_users_own_structured_message_is_not_a_template() -> None:
    own = ("## Goal\n\nMove the nightly export to the new bucket.\n\n## Constraints\n\n"
           "- We always keep the old bucket for 30 days.\n- Never delete objects by hand.\n")
    assert template_arguments(own) == (False, own)
    assert "We always keep the old bucket for 30 days." in words_of_text(own).text


# -- pasted material ------------------------------------------------------------------------

def test_a_pasted_traceback_is_evidence_with_its_exception() -> None:
    [text] = [t for t in corpus_user_parts("pasted-pytorch-traceback-0.140.jsonl")
              if "Traceback" in t]
    words = words_of_text(text)
    assert "Traceback" not in words.text and "site-packages" not in words.text
    assert words.text.startswith("Training crashes as soon as the classifier head runs")
    assert [p.kind for p in words.pasted] == ["traceback"]
    assert words.pasted[0].describe() == (
        "a traceback (14 lines): RuntimeError: mat1 and mat2 shapes cannot be multiplied "
        "(32x1024 and 768x12)")


def test_an_unfenced_traceback_and_a_bare_error_line_are_set_apart() -> None:
    text = ("This fails since this morning:\n"
            "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n"
            "    main()\nKeyError: 'user_id'\nWe always pass user_id.")
    prose, pasted = split_pasted(text)
    assert [p.kind for p in pasted] == ["traceback"]
    assert "KeyError" not in prose and "We always pass user_id." in prose
    prose, pasted = split_pasted("Seen in CI:\nValueError: invalid literal for int()\nFix it.")
    assert [p.kind for p in pasted] == ["error"] and "ValueError" not in prose


def test_a_pasted_build_log_is_evidence_and_its_step_prefixes_go() -> None:
    [text] = [t for t in corpus_user_parts("pasted-docker-build-log-0.150.jsonl")
              if "#6" in t]
    words = words_of_text(text)
    assert "load build definition" not in words.text and "#6" not in words.text
    assert "The base image has to stay node:20-alpine" in words.text
    assert words.pasted[0].kind == "log"
    assert words.pasted[0].gist() == "npm error code ERESOLVE"


def test_a_pasted_table_and_csv_are_data_not_commands() -> None:
    [text] = [t for t in corpus_user_parts("pasted-csv-and-table-0.146.jsonl") if "|" in t]
    words = words_of_text(text)
    assert [p.kind for p in words.pasted] == ["table", "csv"]
    assert "|" not in words.text and "extra_storage" not in words.text
    assert words.pasted[0].describe() == (
        "a table (4 rows): columns: code, name, price_cents, seats, sso, trial_days")
    assert words.pasted[1].describe() == (
        "CSV data (3 rows): columns: code, name, price_cents, per_seat")


def test_a_pasted_data_record_keeps_its_field_names_only() -> None:
    [text] = [t for t in corpus_user_parts("pasted-test-data-personal-0.160.jsonl")
              if "Name:" in t]
    words = words_of_text(text)
    assert [p.kind for p in words.pasted] == ["data"]
    assert words.pasted[0].describe() == (
        "a data record (5 lines): fields: Name, Date of birth, Phone, Email, Clinic")
    for private in ("Aoife", "7700", "mailinator", "1987"):
        assert private not in words.text and private not in words.pasted[0].describe()
    assert "select elements by data-testid only" in words.text


@pytest.mark.parametrize(("text", "kind"), [
    ('{"user": {"id": 7, "roles": ["admin"]},\n "active": true}', "json"),
    ("diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2",
     "diff"),
    ("$ npm test\n> shop@1.0.0 test\n> vitest run\n 3 failed", "terminal"),
    ("2026-11-02 10:31:07 ERROR worker: lost connection\n"
     "2026-11-02 10:31:08 INFO worker: reconnecting", "log"),
    ("```python\ndef total(xs):\n    return sum(xs)\n```", "code"),
    ("> the assistant said the cache is warm\n> but it is not", "quote"),
    ("eyJhbGciOiJIUzI1NiJ9" + "QUJDRA" * 40, "blob"),
])
def test_other_pasted_shapes_are_set_apart(text: str, kind: str) -> None:
    prose, pasted = split_pasted("Look at this:\n" + text + "\nWe never cache sessions.")
    assert [p.kind for p in pasted] == [kind]
    assert prose.startswith("Look at this:") and prose.endswith("We never cache sessions.")
    body = text.splitlines()[1] if kind == "code" else text.splitlines()[0]
    assert body not in prose


@pytest.mark.parametrize("text", [
    "Plot monthly churn per plan (Starter, Team, Enterprise), finance joins on them.",
    "Note: keep the runbook's numbering style (1., 2., ...).",
    "Run `./gradlew test --tests '*Settlement*'` only.",
    "- first bullet\n- second bullet\n- third bullet",
    "Config lives in config/*.yaml and src/config.ts.",
])
def test_prose_with_commas_colons_and_lists_stays_prose(text: str) -> None:
    assert split_pasted(text) == (text, [])


# -- commands -------------------------------------------------------------------------------

@pytest.mark.parametrize("span", ["make check-quick", "pnpm vitest run", "./gradlew test",
                                  "GOFLAGS=-mod=mod go mod tidy", "$ cargo test -p tile-core",
                                  "pytest", "php artisan test --filter=OrderIndex"])
def test_commands_look_like_commands(span: str) -> None:
    assert looks_like_command(span)


@pytest.mark.parametrize("span", ["False", "True", "|--------|", "null",
                                  "inventory: <what changed>",
                                  "Subscription#renew!", "settings/base.py", "e2e/", "MySQL 8.4",
                                  "1., 2., ...", "filename*=UTF-8''", "starter", "--------",
                                  "src/config.ts is wrong"])
def test_values_rules_files_and_formats_are_not_commands(span: str) -> None:
    assert not looks_like_command(span)


# -- through the offline backend ----------------------------------------------------------------

def test_table_cells_never_become_command_entries() -> None:
    text = ("We always seed plans from the sheet, never by hand:\n\n"
            "| code | sso |\n|--------|-----|\n| `starter` | `False` |\n| `team` | `True` |\n\n"
            "We always run `make seed` after a change, and `True` means enabled.")
    r = extract([user(text)], "/home/ines/src/billing-core", None)
    assert "- command: `make seed`" in r.raw_memory
    for bad in ("`False`", "`True`", "|--------|", "`starter`"):
        assert f"command: {bad}" not in r.raw_memory, bad
        assert bad not in r.rollout_summary.replace("`True` means", ""), bad


@pytest.mark.parametrize("name", ["pasted-pytorch-traceback-0.140.jsonl",
                                  "pasted-docker-build-log-0.150.jsonl",
                                  "pasted-csv-and-table-0.146.jsonl",
                                  "windows-powershell-0.120.jsonl"])
def test_pasted_material_is_never_a_preference_or_a_fact(name: str) -> None:
    items, cwd, codes = corpus(name)
    r = extract(items, cwd, None, codes)
    summary_v2, _ = extract_v2(items, cwd, None, codes)
    lines = [ln for ln in (r.raw_memory + r.rollout_summary).splitlines()
             if re.match(r"- (user preference|fact|command|Preference signals|Reusable)", ln)]
    lines += [ln for ln in summary_v2.splitlines()
              if ln.startswith(("- Standing rules", "- Required for this task"))]
    for ln in lines:
        assert not re.search(r"Traceback|File \"|#\d+ \d|npm error|\||,False|RuntimeError", ln), ln
    assert "evidence the user pasted" in r.raw_memory or name.startswith("windows")


def test_custom_prompt_template_text_is_never_a_preference() -> None:
    items, cwd, codes = corpus("custom-prompt-speckit-0.58.jsonl")
    r = extract(items, cwd, None, codes)
    summary_v2, slug = extract_v2(items, cwd, None, codes)
    for text in (r.raw_memory, r.rollout_summary, summary_v2):
        for template in ("You **MUST** consider", "only ever run this script once",
                         "NEEDS CLARIFICATION", "business stakeholders", "User Input"):
            assert template not in text, template
    assert "- task requirement: The export must stream rows" in r.raw_memory
    assert r.rollout_slug == slug == "reports_page_admins_can_export_the"


@pytest.mark.parametrize("path", sorted(QUALITY.glob("*.jsonl")), ids=lambda p: p.name)
def test_no_harness_text_is_left_in_any_corpus_sessions_words(path: Path) -> None:
    for words in session_words(build_input(read_rollout(path)).items):
        for harness in ("<environment_context>", "AGENTS.md instructions", "<INSTRUCTIONS>",
                        "Context from my IDE setup", "My request for Codex", "Open tabs:",
                        "Files mentioned by the user", "<user_shell_command>", "turn_aborted",
                        "interrupted the previous turn", "<skill>", "consider the user input",
                        "Traceback (most recent", "|---", "@mailinator.com"):
            assert harness not in words.text, (harness, words.text[:80])


# -- found on the held-out corpus (tests/fixtures/quality_heldout/) -----------------------------

BRIEF = """# Changelog writer

You are preparing the changelog for a new release of this repository. Work through the steps
below in order.

## Inputs

- Version and notes from the user: v3.1.0, mention the new `--dry-run` flag
- Repository: the current working directory

## Steps

1. Find the previous tag with `git describe --tags --abbrev=0`.
2. Always write in the Keep a Changelog format and never include commit hashes.
3. Prefer user-facing wording over implementation detail.
4. Add the result to `CHANGELOG.md` under a new `## [<version>] - <YYYY-MM-DD>` heading.
   Do not touch older entries.

## Output

Reply with the section you added, and list any commit you could not classify.
"""


def test_a_brief_to_the_agent_in_numbered_steps_is_a_template_and_only_its_argument_counts():
    w = words_of_text(BRIEF)
    assert w.template
    assert w.text == "v3.1.0, mention the new `--dry-run` flag"
    assert "Keep a Changelog" not in w.text and "Prefer" not in w.text


def test_a_long_request_the_user_wrote_is_not_a_template():
    mine = ("## Context\n\nThe importer drops rows. " + "It matters for billing. " * 20 +
            "\n\n## What I want\n\nWe always use pnpm. Fix the importer and add a test.")
    w = words_of_text(mine)
    assert not w.template and "We always use pnpm." in w.text


def test_a_name_from_pasted_rows_is_scrubbed_from_the_users_sentence_too():
    text = ('The importer rejects these rows:\n\nname,email,phone,address\n'
            '"Ciarán O\'Donovan",ciaran@example.org,+44 7700 900417,"Flat 3, 27 Lindqvist Road, '
            'Bristol BS9 4QX"\n"Renée Duvall-Park",renee@example.net,+1 555-0142,"1180 Orchard '
            'Lane, Springfield, OR 97477"\n\nThe error is `invalid name "Ciarán O\'Donovan"`. '
            'Fix the validator.')
    w = words_of_text(text)
    assert "O'Donovan" not in w.text and "[REDACTED_NAME]" in w.text
    assert "Fix the validator." in w.text
    [block] = w.pasted
    assert block.kind == "csv"  # quoted commas do not split a field
    assert block.describe() == "CSV data (2 rows): columns: name, email, phone, address"
    assert "Lindqvist" not in block.describe() and "Orchard" not in block.describe()
