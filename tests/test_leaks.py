"""Issue 12, items 6 and 7: a secret from outside (an endpoint's error text, a refusal, a key
the model made up, a user's first message, a token the model wrote into a proposal) is stored
and printed only redacted, and a refused proposal leaves no file behind.

Every check looks for the secrets themselves in everything memdeck keeps or prints: the
pipeline DB and memdeck's DB as SQL dumps (call log, session index, proposals), every file
under the proposals folder, and the CLI's stdout and stderr."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from llm_server import (
    LLMServer,
    Reply,
    json_reply,
    raw_reply,
    refusal_reply,
    status_reply,
)
from llm_server import llm_server as llm_server  # noqa: F401  (the fixture)

from memdeck.engine import Engine, demo_home
from memdeck.engine.index.session_index import SessionIndex
from memdeck.engine.phase2.proposals import discard_all_proposal_files
from memdeck.engine.redact import MARKER
from memdeck.engine.store import Store
from memdeck.tui.cli import main

OPENAI_KEY = "sk-proj-Zx81QmLp0aRt5VbN7cYw2KdE4hJ6sF9uG3iO"
AWS_KEY_ID = "AKIAZ7Q2XK4MBN5RT8WC"
GITHUB_TOKEN = "ghp_Q8mZ2xL5pR7tV1nB4cY6wK9dE3hJ0sF5uG2i"
SECRETS = (OPENAI_KEY, AWS_KEY_ID, GITHUB_TOKEN)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def dump(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


def assert_nowhere(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret[:8]}… leaked: …{_around(text, secret)}…"


def _around(text: str, secret: str) -> str:
    i = text.index(secret)
    return text[max(0, i - 60): i + len(secret) + 20]


def folder_text(root: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(root.rglob("*"))
                     if p.is_file())


# -- item 6: what the endpoint says ----------------------------------------------------------
FAULTS = {
    "a 500 body": status_reply(500, f"upstream auth failed for {OPENAI_KEY} (token={GITHUB_TOKEN})",
                               headers={"x-should-retry": "false"}),
    "a 400 body": status_reply(400, f"invalid api key {OPENAI_KEY}; AWS id {AWS_KEY_ID}"),
    "a refusal": refusal_reply(f"I will not reuse the credentials {GITHUB_TOKEN} and "
                               f"{AWS_KEY_ID} found in this session."),
    "a bad schema key": json_reply({"rollout_summary": "s", "rollout_slug": None,
                                    "raw_memory": "r", AWS_KEY_ID: OPENAI_KEY}),
    "an error with HTTP 200": raw_reply(json.dumps(
        {"error": {"message": f"quota for key {OPENAI_KEY} exceeded"}})),
    "a body that is not JSON": raw_reply(f"<html>proxy error for {GITHUB_TOKEN}</html>",
                                         content_type="text/html"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_endpoint_error_text_is_stored_and_printed_redacted(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, llm_server: LLMServer,
        fault: str) -> None:
    home = demo_home(tmp_path / "demo")
    eng = Engine.open(home)
    eng.config_set("memdeck.base_url", llm_server.url)
    eng.config_set("memdeck.max_retries", "0")
    reply: Reply = FAULTS[fault]
    llm_server.handler = lambda body: reply

    code, out, err = run(capsys, "extract", "--home", str(home))
    code_json, out_json, err_json = run(capsys, "extract", "--json", "--home", str(home))
    _, status_out, status_err = run(capsys, "sessions", "--json", "--home", str(home))

    assert code == 1 and llm_server.chat_requests(), (out, err)
    pipeline = dump(home / "memories_1.sqlite")
    memdeck_db = dump(home / "memdeck" / "memdeck.sqlite")
    assert_nowhere(out, err, out_json, err_json, status_out, status_err, pipeline, memdeck_db)
    # the errors are there, with the secret's place marked: the test looked at the real text
    conn = sqlite3.connect(home / "memories_1.sqlite")
    errors = [r[0] for r in conn.execute("SELECT last_error FROM jobs WHERE status = 'error' "
                                         "AND last_error LIKE 'model %'")]  # not the demo's
    conn.close()
    assert errors and all(MARKER in e for e in errors), errors
    logged = Engine.open(home).store.conn().execute(
        "SELECT error FROM model_calls WHERE error IS NOT NULL").fetchall()
    assert logged and all(MARKER in r[0] for r in logged)
    assert MARKER in out + err


def test_a_call_logged_before_redaction_is_shown_redacted(tmp_path: Path) -> None:
    from memdeck.engine.call_log import recent_calls

    store = Store(tmp_path / "memdeck.sqlite")
    store.conn().execute(
        "INSERT INTO model_calls (started_at, backend, purpose, prompt_name, prompt_hash, "
        "model, thread_id, input_tokens, output_tokens, duration_ms, error) VALUES "
        "(1, 'openai', 'phase1', 'p', 'h', 'm', 't', 0, 0, 0, ?)",
        (f"model endpoint x failed with HTTP 500: bad key {OPENAI_KEY}",))
    [call] = recent_calls(store.conn())
    assert call.error is not None and MARKER in call.error
    assert_nowhere(call.error)


# -- item 7: the user's first words in the session index -------------------------------------
def _plant_in_first_message(home: Path) -> str:
    """Put the secrets into one session's first user message; returns its thread id."""
    eng = Engine.open(home)
    s = next(s for s in eng.sessions() if s.preview and s.id)
    path = Path(s.rollout_path)
    words = json.dumps(s.preview)[1:-1]  # as the rollout's JSON holds it
    text = path.read_text(encoding="utf-8")
    assert words in text
    planted = f"{words} (use my key {OPENAI_KEY}, aws {AWS_KEY_ID}, gh {GITHUB_TOKEN})"
    path.write_text(text.replace(words, planted), encoding="utf-8")
    return s.id or ""


def test_first_user_message_is_indexed_and_listed_redacted(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    home = demo_home(tmp_path / "demo")
    tid = _plant_in_first_message(home)

    code, out, err = run(capsys, "sessions", "--json", "--home", str(home))
    code2, text_out, text_err = run(capsys, "sessions", "--home", str(home))
    assert code == 0 and code2 == 0
    [row] = [r for r in json.loads(out) if r["id"] == tid]
    assert MARKER in row["preview"], row["preview"]
    assert_nowhere(out, err, text_out, text_err, dump(home / "memdeck" / "memdeck.sqlite"))
    eng = Engine.open(home)  # and the listing's head the app keeps for its next start
    eng.keep_listing_head(eng.listing())
    head = (home / "memdeck" / "listing-head.json").read_text(encoding="utf-8")
    assert MARKER in head
    assert_nowhere(head)


def test_an_old_index_is_shown_redacted_and_rewritten(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Rows written before previews were redacted: shown redacted at once, and rescanned
    (and so stored redacted) by the next refresh."""
    home = demo_home(tmp_path / "demo")
    Engine.open(home).sessions()  # the index exists
    db = home / "memdeck" / "memdeck.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE sessions SET preview = preview || ?", (f" key {OPENAI_KEY}",))
    conn.execute("UPDATE meta SET value = '4' WHERE key = 'scan_version'")
    conn.commit()
    conn.close()
    assert OPENAI_KEY in dump(db)  # planted as an older memdeck would have kept it

    eng = Engine.open(home)
    shown = SessionIndex(eng.home, eng.store).sessions(refresh=False)
    assert shown and all(OPENAI_KEY not in s.preview for s in shown)
    assert any(MARKER in s.preview for s in shown)

    code, out, err = run(capsys, "sessions", "--json", "--home", str(home))
    assert code == 0
    assert_nowhere(out, err, dump(db))


# -- item 7: what the model wrote into a proposal --------------------------------------------
@pytest.fixture
def extracted(tmp_path: Path) -> Path:
    home = demo_home(tmp_path / "demo")
    Engine.open(home).extract(backend="offline")
    return home


def _plant_in_raw_memory(home: Path) -> None:
    """As if the model had written a token into a raw memory (phase 2 then carries it into
    the proposal's MEMORY.md and raw_memories.md)."""
    conn = sqlite3.connect(home / "memories_1.sqlite")
    conn.execute("UPDATE stage1_outputs SET raw_memory = raw_memory || ? WHERE rollout_slug = "
                 "'docs_broken_links'", (f"\n- deploy with {GITHUB_TOKEN} and {OPENAI_KEY}\n",))
    conn.commit()
    conn.close()


def test_reject_removes_what_the_model_wrote(capsys: pytest.CaptureFixture[str],
                                             extracted: Path) -> None:
    _plant_in_raw_memory(extracted)
    p = Engine.open(extracted).consolidate()
    assert p is not None and p.secrets
    pdir = extracted / "memdeck" / "proposals" / p.id
    assert GITHUB_TOKEN in folder_text(pdir)  # the proposal really held it

    code, out, err = run(capsys, "reject", p.id, "--reason", "holds a token",
                         "--home", str(extracted))
    assert code == 0, err
    assert not pdir.exists()
    [row] = Engine.open(extracted).proposals()
    assert (row.status, row.reason) == ("rejected", "holds a token")
    _, diff_out, diff_err = run(capsys, "diff", p.id, "--home", str(extracted))
    assert_nowhere(out, err, diff_out, diff_err, folder_text(extracted / "memdeck"),
                   dump(extracted / "memdeck" / "memdeck.sqlite"))


def test_a_partly_accepted_proposal_can_be_rejected(capsys: pytest.CaptureFixture[str],
                                                    extracted: Path) -> None:
    eng = Engine.open(extracted)
    p = eng.consolidate()
    assert p is not None
    taken = next(f["path"] for f in p.files if f["path"].startswith("rollout_summaries/"))
    accepted = eng.accept(p.id, files=[taken])
    assert accepted.status == "partial"
    decided = eng.store.conn().execute("SELECT decided_at FROM proposals WHERE id = ?",
                                       (p.id,)).fetchone()[0]

    code, out, err = run(capsys, "reject", p.id, "--reason", "rest not wanted",
                         "--home", str(extracted))
    assert code == 0, err
    assert not (extracted / "memdeck" / "proposals" / p.id).exists()
    row = Engine.open(extracted).store.conn().execute(
        "SELECT status, reason, decided_at FROM proposals WHERE id = ?", (p.id,)).fetchone()
    # still `partial` (what was taken is in memory), and when memory changed is unchanged
    assert tuple(row) == ("partial", "rest not wanted", decided)
    assert (extracted / "memories" / taken).is_file()
    code, _, err = run(capsys, "reject", p.id, "--home", str(extracted))  # nothing left: fine
    assert code == 0, err


def test_an_accepted_proposal_cannot_be_rejected(capsys: pytest.CaptureFixture[str],
                                                 extracted: Path) -> None:
    eng = Engine.open(extracted)
    p = eng.consolidate()
    assert p is not None
    eng.accept(p.id)
    code, _, err = run(capsys, "reject", p.id, "--home", str(extracted))
    assert code == 1 and "is accepted, not pending" in err and err.count("\n") == 1


def test_discard_all_proposal_files(extracted: Path) -> None:
    """What reset calls: every proposal folder goes, a pending one is marked rejected, a
    folder without a row (a consolidation killed midway) goes too."""
    _plant_in_raw_memory(extracted)
    eng = Engine.open(extracted)
    first = eng.consolidate()
    assert first is not None
    eng.reject(first.id, "first")
    (extracted / "memdeck" / "proposals" / first.id).mkdir()  # as if left by an old memdeck
    (extracted / "memdeck" / "proposals" / first.id / "proposal.diff").write_text(GITHUB_TOKEN)
    pending = eng.consolidate()
    assert pending is not None
    orphan = extracted / "memdeck" / "proposals" / "20260101T000000Z-dead" / "workspace"
    orphan.mkdir(parents=True)
    (orphan / "MEMORY.md").write_text(f"- {OPENAI_KEY}\n")

    removed = discard_all_proposal_files(eng.home, eng.store, now=2e9)
    assert removed == 3
    assert list((extracted / "memdeck" / "proposals").iterdir()) == []
    rows = {p.id: (p.status, p.reason) for p in Engine.open(extracted).proposals()}
    assert rows == {first.id: ("rejected", "first"),
                    pending.id: ("rejected", "discarded by reset")}
    assert_nowhere(dump(extracted / "memdeck" / "memdeck.sqlite"))
    assert discard_all_proposal_files(eng.home, eng.store, now=2e9) == 0


def test_an_error_codex_stored_is_listed_redacted(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    """Codex (or an older memdeck) wrote the endpoint's words into `last_error` unredacted:
    `memdeck sessions` shows them redacted."""
    home = demo_home(tmp_path / "demo")
    tid = next(s.id for s in Engine.open(home).sessions() if s.id and s.status != "unreadable")
    conn = sqlite3.connect(home / "memories_1.sqlite")
    conn.execute("INSERT OR REPLACE INTO jobs (kind, job_key, status, retry_remaining, "
                 "last_error, input_watermark, retry_at) VALUES ('memory_stage1', ?, 'error', "
                 "2, ?, 99999999999, 99999999999)",
                 (tid, f"HTTP 500: upstream said key {OPENAI_KEY} is invalid"))
    conn.commit()
    conn.close()
    code, out, err = run(capsys, "sessions", "--json", "--home", str(home))
    assert code == 0
    [row] = [r for r in json.loads(out) if r["id"] == tid]
    assert row["status"] == "failed" and MARKER in row["reason"], row
    assert_nowhere(out, err)
