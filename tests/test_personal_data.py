"""No e-mail address, phone number or other personal data in anything the offline backend
writes: raw memory, rollout summary, slug (issue 9, requirement 2). The scrubber itself
(engine/personal_data.py) on international formats, and the shapes it must leave alone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memdeck.engine.backends.offline_phase1 import OfflinePhase1, extract
from memdeck.engine.backends.offline_phase1_v2 import extract_v2
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.personal_data import find_personal, scrub_personal
from memdeck.engine.phase1.input_v1 import build_input
from memdeck.engine.phase1.input_v2 import build_input_v2

QUALITY = Path(__file__).parent / "fixtures" / "quality"


@pytest.mark.parametrize(("text", "kind"), [
    ("+82 10-1234-5678", "phone"),  # Korea, international
    ("010-1234-5678", "phone"),  # Korea, national
    ("138 0013 8000", "phone"),  # China, mobile in groups
    ("+86 138 0013 8000", "phone"),
    ("(555) 123-4567", "phone"),  # US
    ("+1 (555) 123-4567", "phone"),
    ("555-123-4567", "phone"),
    ("+44 7700 900461", "phone"),  # UK
    ("07700 900461", "phone"),
    ("090-1234-5678", "phone"),  # Japan
    ("0912 345 678", "phone"),  # Vietnam
    ("+84 912 345 678", "phone"),
    ("06 12 34 56 78", "phone"),  # France
    ("+49 30 12345678", "phone"),  # Germany
    ("aoife.brennan@mailinator.com", "email"),
    ("j.doe+billing@example.co.uk", "email"),
    ("DE89 3704 0044 0532 0130 00", "iban"),
    ("GB82WEST12345698765432", "iban"),
    ("4111 1111 1111 1111", "card"),
    ("4111-1111-1111-1111", "card"),
    ("378282246310005", "card"),  # Amex, no separators
    ("221B Baker Street", "address"),
    ("1600 Pennsylvania Avenue", "address"),
    ("Hauptstraße 5", "address"),
    ("12 rue de la Paix", "address"),
    ("123-45-6789", "id_number"),  # a US SSN
])
def test_personal_data_is_found_in_international_formats(text: str, kind: str) -> None:
    sentence = f"Use this for the test: {text} and nothing else."
    [found] = find_personal(sentence)
    assert (found.kind, sentence[found.start:found.end]) == (kind, text)
    assert text not in scrub_personal(sentence)


@pytest.mark.parametrize(("text", "secret"), [
    ("Phone: 13800138000", "13800138000"),
    ("电话：13800138000", "13800138000"),
    ("휴대폰 01012345678", "01012345678"),
    ("Date of birth: 1987-03-14", "1987-03-14"),
    ("生年月日：1990年4月1日", "1990年4月1日"),
    ("Name: Aoife Brennan", "Aoife Brennan"),
    ("姓名：张伟", "张伟"),
])
def test_labelled_values_are_found(text: str, secret: str) -> None:
    assert secret not in scrub_personal(text)
    assert scrub_personal(text).startswith(text[:2])  # the label stays


@pytest.mark.parametrize("text", [
    "released 2026-11-25 at 10:30:07", "version 2.3.45.6789 of the API", "192.168.1.100:8080",
    "took 0.0410 seconds", "more than 10.000 orders", "service_test.go:58", "32x1024 and 768x12",
    "pid 12345 on port 8080", "commit 3f2c9e1b7d4a", "0194f5a6-89ab-7cde-8123-456789abcdef",
    "timestamp 1764201600123", "13421772800 bytes", "git@github.com:org/repo.git",
    "ssh deploy@build.example.com:/srv/app", "https://ci@example.com/job", "eslint@9.9.1",
    "eslint-config-next@14.2.5", "@types/node@20.1.0", "+100 lines, -20 lines",
    "1 000 000 rows", "RFC 5987", "4111 1111 1111 1112", "DE89 3704 0044 0532 0130 01",
    "name: gh-actions-pin", "Clinic: Rathmines", "ISO 8601: 2024-01-15T10:30:00Z",
    "the 2 Way merge", "step 3 Drive the test",
])
def test_code_logs_and_identifiers_are_left_alone(text: str) -> None:
    assert scrub_personal(text) == text


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


PERSONAL = ("Call Min-jun at +82 10-2345-6789 or (555) 123-4567 when the deploy is done, and "
            "mail minjun.kim@example.kr. We always deploy with `make deploy`. "
            "Ship the refund to IBAN DE89 3704 0044 0532 0130 00, never by card 4111 1111 1111 "
            "1111; he lives at 221B Baker Street.")
PRIVATE = ("2345-6789", "123-4567", "minjun.kim", "example.kr", "DE89", "4111", "Baker Street")


def test_the_offline_backends_keep_no_personal_data_of_the_users_prose() -> None:
    items = [_user(PERSONAL),
             {"type": "function_call", "name": "shell", "call_id": "c1",
              "arguments": json.dumps({"command": ["bash", "-lc", "make deploy"]})},
             {"type": "function_call_output", "call_id": "c1",
              "output": json.dumps({"output": "notify 138 0013 8000 ops@example.org: failed",
                                    "metadata": {"exit_code": 2}})}]
    r = extract(items, "/home/minjun/src/shop", "main")
    v2, slug_v2 = extract_v2(items, "/home/minjun/src/shop", "main")
    assert "We always deploy with `make deploy`" in r.raw_memory  # the rest is kept
    assert "make deploy" in v2
    for text in (r.raw_memory, r.rollout_summary, r.rollout_slug or "", v2, slug_v2 or ""):
        for private in (*PRIVATE, "0013 8000", "ops@example.org"):
            assert private not in text, (private, text)
    assert "[REDACTED_PHONE]" in r.raw_memory and "[REDACTED_EMAIL]" in r.rollout_summary


def test_a_phone_number_in_the_request_leaves_no_trace_in_the_slug() -> None:
    r = extract([_user("+44 7700 900461 keeps getting the SMS twice. We must dedupe by "
                       "message id.")], "/home/dev/notify", None)
    assert r.rollout_slug is not None
    assert not re.search(r"\d{3}|redacted", r.rollout_slug), r.rollout_slug
    assert "7700" not in r.raw_memory + r.rollout_summary


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_corpus_session_with_pasted_test_data_keeps_none_of_it(version: str) -> None:
    path = QUALITY / "pasted-test-data-personal-0.160.jsonl"
    rollout = read_rollout(path)
    inp = (build_input_v2 if version == "v2" else build_input)(rollout)
    assert rollout.meta is not None

    class S:  # the two Session fields the backend reads
        cwd = rollout.meta.cwd
        git_branch = "main"

    out = OfflinePhase1().extract(inp, S())  # type: ignore[arg-type]
    kept = f"{out.raw_memory}\n{out.rollout_summary}\n{out.rollout_slug}"
    assert "data-testid" in kept  # the user's own rule is kept
    for private in ("Aoife", "Brennan", "7700 900461", "aoife.brennan", "mailinator", "1987-03-14"):
        assert private not in kept, private
    assert not re.search(r"[\w.+-]+@[\w-]+\.[a-z]{2,}", kept)


@pytest.mark.parametrize("text, name", [
    ("Ví dụ đơn của chị Trần Thị Mai, sdt bị lỗi", "Trần Thị Mai"),
    ("Anh Lê Quốc Bảo nhập số cũng bị lỗi", "Lê Quốc Bảo"),
    ("Please call Mrs Dana Whitfield about the invoice", "Dana Whitfield"),
    ("Frage Herr Müller nach dem Zugang", "Müller"),
    ("田中さんに確認してください", "田中"),
    ("김민수 님께 보내 주세요", "김민수"),
])
def test_a_person_named_with_an_honorific_is_removed(text: str, name: str) -> None:
    scrubbed = scrub_personal(text)
    assert name not in scrubbed and "[REDACTED_NAME]" in scrubbed


@pytest.mark.parametrize("text", ["고객님께 안내 메일을 보내요", "皆さん、おはよう", "the anh dao"])
def test_common_words_beside_an_honorific_stay(text: str) -> None:
    assert scrub_personal(text) == text
