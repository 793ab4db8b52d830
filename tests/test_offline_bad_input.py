"""A session in a form the offline extractor does not read yields no memory and a reason that
says so, never invented content, and never passes for "nothing durable" (issue 9, "Bad input").

Real homes, real `memdeck extract` and `memdeck sessions` runs with the offline backend, v1 and
v2; the session is cli-preferences.jsonl (which, read normally, gives a raw memory) with its
user messages rewritten into shapes memdeck does not know.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memdeck.engine.backends.offline_reasons import NOTHING_DURABLE, empty_reason
from memdeck.tui.cli import main
from tests.conftest import FIXTURES

QUALITY = Path(__file__).parent / "fixtures" / "quality"
CLI_ID = "01a23054-a1fc-7969-acf0-6947af085e83"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def rewritten(tmp_path: Path, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Path:
    """cli-preferences.jsonl with every user `message` response item passed through `change`
    (None drops the line); the events, which decide the session's status, stay."""
    out = []
    for line in (FIXTURES / "cli-preferences.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        p = rec.get("payload") or {}
        if rec.get("type") == "response_item" and p.get("type") == "message" \
                and p.get("role") == "user":
            new = change(p)
            if new is None:
                continue
            rec["payload"] = new
        out.append(json.dumps(rec, ensure_ascii=False))
    path = tmp_path / "cli-preferences.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def as_string(p: dict[str, Any]) -> dict[str, Any]:
    """A newer-looking message: its content a bare string instead of a list of parts."""
    text = " ".join(c.get("text", "") for c in p["content"] if isinstance(c, dict))
    return {**p, "content": text}


def as_unknown_parts(p: dict[str, Any]) -> dict[str, Any]:
    return {**p, "content": [{"type": "input_text_v9", "body": c.get("text")}
                             for c in p["content"] if isinstance(c, dict)]}


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("change", [as_string, as_unknown_parts])
def test_unread_messages_give_no_memory_and_say_why(capsys, home, tmp_path, version,
                                                     change) -> None:
    if version == "v1":
        home.v1()
    home.add(rewritten(tmp_path, change))
    root = str(home.root)
    code, out, err = run(capsys, "extract", "--backend", "offline", "--json", "--home", root)
    assert code == 0, err
    [result] = json.loads(out)["results"]
    assert result["outcome"] == "no_output"
    assert re.fullmatch(r"no memory: its 4 user message\(s\) hold no text in a form memdeck "
                        r"reads \(content: \w+; text parts expected\)", result["detail"])
    # the listing says the same, not "nothing durable"
    code, out, _ = run(capsys, "sessions", "--json", "--home", root)
    [s] = [d for d in json.loads(out) if d["id"] == CLI_ID]
    assert s["status"] == "no_output"
    assert "hold no text in a form memdeck reads" in s["reason"]
    assert NOTHING_DURABLE not in s["reason"]
    # and nothing was invented: no memory file anywhere
    memories = home.root / ("memories" if version == "v1" else "memories_v2")
    written = [p for p in memories.rglob("*") if p.is_file()] if memories.exists() else []
    assert not [p for p in written if p.suffix == ".md"]


def test_the_same_session_read_normally_still_gives_a_memory(capsys, home) -> None:
    """The control: the unchanged session is extracted, so the reason above is the shape."""
    home.add("cli-preferences.jsonl")
    code, out, err = run(capsys, "extract", "--backend", "offline", "--json", "--home",
                         str(home.root))
    assert code == 0, err
    assert [r["outcome"] for r in json.loads(out)["results"]] == ["extracted"]


def test_a_session_with_nothing_durable_says_exactly_that(capsys, home) -> None:
    home.add(QUALITY / "nothing-durable-question-0.150.jsonl")
    code, out, err = run(capsys, "extract", "--backend", "offline", "--json", "--home",
                         str(home.root))
    assert code == 0, err
    assert [(r["outcome"], r["detail"]) for r in json.loads(out)["results"]] == [
        ("no_output", NOTHING_DURABLE)]


def test_empty_reason_names_what_it_saw() -> None:
    assert empty_reason([]).startswith("no memory: nothing in the session is a message")
    calls = [{"type": "function_call", "name": "exec_command", "arguments": "{}"}] * 3
    assert empty_reason(calls) == ("no memory: no user message among its 3 items "
                                   "(function_call ×3), so nothing the user said to remember")
    said = [{"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "hi"}]}]
    assert empty_reason(said) == NOTHING_DURABLE
