"""Issue 29, items 1 and 7: no byte of a secret anywhere memdeck writes.

Every case of the secrets corpus (tests/data/redaction/secrets.txt: keys whole and cut short,
on one line or many, in JSON, logs and prose, Twilio's included) is pasted by a user into
sessions, asked to be remembered and printed by a tool. Then the whole life of a memory
runs on them: extract (offline, and through the openai client against the local server),
consolidate, accept, reset with its backup, restore the backup, consolidate and accept
again. Afterwards every file under the home but Codex's own rollouts is read as bytes, git
objects unpacked and backups opened, and no 8-character piece of any secret may be found,
in the files or in what was sent to the model. Then a secret written into MEMORY.md by hand
is followed through history: a restore will not bring it back, and `memdeck history
--purge-secret` leaves no copy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from suite_clock import now

from memdeck.engine import Engine, MemdeckError
from memdeck.engine.codex.schema import create_memories_db
from memdeck.engine.redact import MARKER
from memdeck.tui.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent / "data" / "redaction"))
from corpus import SecretCase, leaked, load_secrets  # noqa: E402

CASES = load_secrets()
CODEX_INPUT = ("sessions", "archived_sessions")  # the rollouts: what the user pasted


def _ts(i: int) -> str:
    return f"2026-12-01T06:{i // 60:02d}:{i % 60:02d}.000Z"


def write_sessions(home: Path, cases: list[SecretCase], per: int = 8) -> int:
    """Sessions in which a user pastes each case, asks for it to be remembered, and a tool
    prints it (`cat .env`); idle for nine hours."""
    day = home / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True, exist_ok=True)
    count = 0
    for k in range(0, len(cases), per):
        tid = str(uuid.UUID(int=0x01a20000_0000_7000_8000_000000000000 + k))
        lines: list[dict] = [{"timestamp": _ts(0), "type": "session_meta", "payload": {
            "id": tid, "session_id": tid, "timestamp": _ts(0), "cwd": "/home/dev/src/shop",
            "originator": "codex_cli_rs", "cli_version": "0.169.0", "source": "cli",
            "model_provider": "openai"}}]
        i = 1
        for c in cases[k:k + per]:
            call = f"call_{i}"
            lines += [
                {"timestamp": _ts(i), "type": "response_item", "payload": {
                    "type": "message", "role": "user", "content": [{
                        "type": "input_text", "text": "Always deploy with this setting, "
                        f"remember it for next time: {c.text}"}]}},
                {"timestamp": _ts(i + 1), "type": "response_item", "payload": {
                    "type": "function_call", "name": "shell", "call_id": call,
                    "arguments": json.dumps({"command": ["bash", "-lc", "cat .env"]})}},
                {"timestamp": _ts(i + 2), "type": "response_item", "payload": {
                    "type": "function_call_output", "call_id": call, "output": json.dumps(
                        {"output": c.text, "metadata": {"exit_code": 0}})}},
                {"timestamp": _ts(i + 3), "type": "response_item", "payload": {
                    "type": "message", "role": "assistant", "content": [{
                        "type": "output_text", "text": f"Deployed with {c.text[:300]}"}]}}]
            i += 4
        p = day / f"rollout-2026-12-01T06-00-00-{tid}.jsonl"
        p.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n",
                     encoding="utf-8")
        t = now() - 9 * 3600
        os.utime(p, (t, t))
        count += 1
    return count


def _git_objects(gitdir: Path) -> Iterator[bytes]:
    r = subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "--batch-all-objects",
                        "--batch"], capture_output=True, check=True)
    yield r.stdout


def everything_kept(home: Path) -> Iterator[tuple[str, bytes]]:
    """(where, bytes) for every file memdeck's use of the home leaves, with git objects
    unpacked and backup archives opened."""
    for p in sorted(home.rglob("*")):
        rel = p.relative_to(home)
        if rel.parts[0] in CODEX_INPUT or p.is_symlink():
            continue
        if p.is_dir() and (p.name == ".git" or p.name.endswith(".git")) \
                and (p / "objects").is_dir():
            for blob in _git_objects(p):
                yield f"{rel} (git objects)", blob
        if not p.is_file():
            continue
        data = p.read_bytes()
        yield str(rel), data
        if p.name.endswith(".tar.gz"):
            with tarfile.open(p, "r:gz") as tar:
                for m in tar.getmembers():
                    if m.isfile():
                        yield f"{rel}:{m.name}", tar.extractfile(m).read()  # type: ignore[union-attr]


def identifying(part: str) -> bool:
    """A piece that can only come from the secret: a digit, mixed case, or base64 symbols.
    A piece of plain words or of a key's BEGIN line (`correct `, ` ENCRYPT`) is not: the
    same eight characters occur in prose, in the prompt and in other cases' text."""
    letters = [ch for ch in part if ch.isalpha()]
    return any(ch.isdigit() for ch in part) or any(ch in "+/=" for ch in part) or (
        any(ch.islower() for ch in letters) and any(ch.isupper() for ch in letters))


def assert_no_secret(blobs: list[tuple[str, bytes]]) -> None:
    text = [(where, data.decode("utf-8", errors="replace")) for where, data in blobs]
    found = []
    for c in CASES:
        for where, t in text:
            parts = [x for x in leaked(c, t) if identifying(x)] + [
                x for x in c.secrets if x in t]  # a whole secret of plain words too
            if parts:
                i = t.index(parts[0])
                found.append(f"[{c.label}] {parts[0]!r} in {where}: …{t[max(0, i - 80):i + 40]!r}")
                break
    assert found == [], "\n".join(found[:20])


def pasted(home: Path) -> Path:
    (home / "memories").mkdir(parents=True)
    (home / "config.toml").write_text("[features]\nmemories = true\n")
    create_memories_db(home / "memories_1.sqlite")
    assert write_sessions(home, CASES) > 10
    return home


@pytest.fixture
def pasted_home(tmp_path: Path) -> Path:
    return pasted(tmp_path / "codex-home")


def test_no_piece_of_any_secret_is_kept_through_the_whole_life_of_a_memory(
        pasted_home: Path, llm_server, capsys, tmp_path: Path) -> None:
    from llm_server import json_reply

    home = pasted_home
    eng = Engine.open(home)
    report = eng.extract(backend="offline")
    assert {r.outcome for r in report.results} == {"extracted"}
    eng.accept(eng.consolidate().id)
    live = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert MARKER in live  # what the user said reached memory, with its secrets cut out
    backup = eng.reset().id
    eng.restore_backup(backup)
    eng.memory_note("deploys go through the staging cluster first")
    eng.accept(eng.consolidate().id)
    # the same sessions through the openai client: nothing of a secret reaches the model
    llm_server.handler = lambda body: json_reply({
        "rollout_summary": "# deploy\n", "rollout_slug": "deploy",
        "raw_memory": "---\ndescription: deploy\n---\n\n### Task 1\n- deploy\n"})
    served = pasted(tmp_path / "served-home")
    other = Engine.open(served)
    other.config_set("memdeck.base_url", llm_server.url)
    other.config_set("memdeck.max_retries", "0")
    assert main(["extract", "--backend", "openai", "--home", str(served)]) == 0
    capsys.readouterr()
    sent = [(f"request {i}", json.dumps(r.body).encode()) for i, r in
            enumerate(llm_server.chat_requests())]
    assert len(sent) > 10
    assert_no_secret(sent)
    assert_no_secret(list(everything_kept(home)))
    assert_no_secret(list(everything_kept(served)))


# -- item 7: a secret written by hand, in history --------------------------------------------
HAND = "sk-proj-Hq7Vt2Lw9Rx4Nb6Zc8Jd1Kf3Mg5Ps0Ty2Uw4Xa6Eb8"


def test_restore_refuses_to_bring_a_secret_back_and_purge_leaves_no_copy(
        accepted_home: Path, capsys) -> None:
    home = accepted_home
    eng = Engine.open(home)
    memory = home / "memories" / "MEMORY.md"
    clean = memory.read_text()
    f = eng.memory_read("MEMORY.md")
    memory.write_text(f.text + f"- the deploy key is {HAND}\n")  # by hand, outside memdeck
    eng.record_outside_edits()
    with_secret = eng.history()[0].commit
    f = eng.memory_read("MEMORY.md")
    eng.memory_save("MEMORY.md", clean, f.version)  # removed again
    eng.reset()  # and a reset with its backup: the secret is still kept in three places
    assert any(HAND.encode() in data for _, data in everything_kept(home))

    with pytest.raises(MemdeckError, match="would put back a secret") as e:
        eng.restore(with_secret)
    assert "\n" not in str(e.value) and "--purge-secret" in str(e.value)
    assert HAND not in memory.read_text() if memory.exists() else True

    assert main(["history", "--purge-secret", HAND, "--home", str(home)]) == 0
    out = capsys.readouterr().out
    assert "commits rewritten" in out
    assert not any(HAND.encode() in data for _, data in everything_kept(home)), [
        where for where, data in everything_kept(home) if HAND.encode() in data]
    # history still works, and the purged state restores (with the marker in its place)
    eng = Engine.open(home)
    states = eng.history()
    assert len(states) >= 4
    purged = next(s for s in states if s.summary == "changed outside memdeck")
    eng.restore(purged.commit)
    assert MARKER in memory.read_text() and HAND not in memory.read_text()


def test_purge_refuses_while_the_live_folder_holds_the_secret(accepted_home: Path) -> None:
    home = accepted_home
    memory = home / "memories" / "MEMORY.md"
    memory.write_text(memory.read_text() + f"- key {HAND}\n")
    eng = Engine.open(home)
    eng.record_outside_edits()
    with pytest.raises(MemdeckError, match="MEMORY.md still holds it"):
        eng.purge_secret(HAND)
    with pytest.raises(MemdeckError, match="at least 8 characters"):
        eng.purge_secret("key")


def test_a_model_that_writes_control_characters_is_flagged_and_refused(
        accepted_home: Path) -> None:
    """A NUL or an escape sequence in what a consolidation adds: Review marks the line and
    accept refuses it, as for a secret."""
    import sqlite3

    home = accepted_home
    eng = Engine.open(home)
    eng.memory_note("prefer uv over pip")
    p = eng.consolidate()
    ws = home / "memdeck" / "proposals" / p.id / "workspace" / "MEMORY.md"
    ws.write_text(ws.read_text() + "- colours \x1b[31mred\x1b[0m and a NUL \x00 here\n")
    conn = sqlite3.connect(home / "memdeck" / "memdeck.sqlite")  # as the model left it
    conn.close()
    with pytest.raises(MemdeckError, match="adds a control character") as e:
        eng.accept(p.id)
    assert "U+001B" in str(e.value) or "U+0000" in str(e.value)
    assert "\x1b" not in (home / "memories" / "MEMORY.md").read_text()
