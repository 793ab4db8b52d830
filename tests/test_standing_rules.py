"""Preferences are standing rules the user set, not questions, complaints, one task's
requirements, form fields or templates (issue 25, item 1; engine/backends/offline_rules.py)."""

from __future__ import annotations

import pytest

from memdeck.engine.backends.offline_phase1 import extract
from memdeck.engine.backends.offline_phase1_v2 import extract_v2
from memdeck.engine.backends.offline_rules import standing_rule

RULES = [
    "We use pnpm in this repo, not npm.",
    "From now on, always run the linter before you commit.",
    "Prices are always in cents, never decimals.",
    "Our commit messages look like `inventory: <what changed>`.",
    "I prefer table-driven tests.",
    "Never add comments in Chinese.",
    "never edit mix.lock by hand",
    "We're on Rust 1.82, stable only, no nightly features.",
    "以后路由跳转都用 name，不要写死路径。",
    "我们前端统一用 pnpm，别生成 package-lock.json。",
    "請一律用繁體中文回覆",
    "設定値は必ず settings/base.py に集約してください。",
    "테스트는 항상 `flutter test --no-pub`으로 돌려 주세요.",
    "Lưu ý: trong repo này luôn chạy test bằng `dotnet test --no-restore`.",
    "Bitte immer deutsche Commit-Nachrichten schreiben.",
    "Usa siempre Black para formatear el código.",
]
NOT_RULES = [
    # questions
    "can you always make it faster?",
    "should we use uv?",
    "Is it always this slow",
    "这个接口以后还会用吗？",
    # complaints
    "this test is always red",
    "the build keeps failing on CI",
    "사내 프록시 때문에 pub get이 매번 실패해요.",
    "它总是报错",
    # one task's requirements
    "The export must stream rows, some reports have 2M rows.",
    "the endpoint must return 404 for a missing user",
    "Don't touch the users table.",
    "don't change the parser yet, I only want the cause.",
    "Fix the code, don't touch the fixtures in tests/data/.",
    "Don't refactor for now, just make the test pass.",
    "Non-admins don't see the button.",
    "A 422 means our payload is bad, so retrying is pointless.",
    "Our CI is slow today.",
    # a bare prohibition has no mark of permanence: the task's requirement
    "don't add comments in Chinese",
    "Bump the module to Go 1.23: go.mod, the toolchain line and the CI matrix.",
    "这次先别动数据库。",
    # form fields, checklists, templates
    "- [ ] Tests always added",
    "## Always include a screenshot",
    "**Severity**: never",
    "Reviewer (required): must be from the platform team",
    "Breaking change: no",
]


@pytest.mark.parametrize("sentence", RULES)
def test_a_standing_rule_is_a_rule(sentence: str) -> None:
    assert standing_rule(sentence)


@pytest.mark.parametrize("sentence", NOT_RULES)
def test_what_only_sounds_like_a_rule_is_not(sentence: str) -> None:
    assert not standing_rule(sentence)


def _session(*messages: str) -> list[dict[str, object]]:
    items: list[dict[str, object]] = []
    for n, text in enumerate(messages):
        items.append({"type": "message", "role": "user",
                      "content": [{"type": "input_text", "text": text}]})
        items.append({"type": "function_call", "name": "shell", "call_id": f"c{n}",
                      "arguments": '{"command": ["bash", "-lc", "pytest -q"]}'})
        items.append({"type": "function_call_output", "call_id": f"c{n}",
                      "output": '{"output": "3 passed", "metadata": {"exit_code": 0}}'})
    return items


def test_a_task_requirement_stays_with_the_task_in_both_versions() -> None:
    items = _session("The endpoint must return 404 for a missing user. Can you always "
                     "make the errors JSON? We always use problem+json for errors.")
    v1 = extract(items, "/home/ana/src/api", "main")
    assert "- user preference: We always use problem+json for errors." in v1.raw_memory
    assert "- task requirement: The endpoint must return 404 for a missing user." \
        in v1.raw_memory
    assert "user preference: The endpoint" not in v1.raw_memory
    assert "Can you always" not in "".join(
        ln for ln in v1.raw_memory.splitlines() if ln.startswith("- user preference"))
    v2, _ = extract_v2(items, "/home/ana/src/api", "main")
    rules = next(ln for ln in v2.splitlines() if ln.startswith("- Standing rules"))
    task = next(ln for ln in v2.splitlines() if ln.startswith("- Required for this task"))
    assert "problem+json" in rules and "404" not in rules and "Can you" not in rules
    assert "404" in task


def test_a_greeting_is_never_the_title() -> None:
    from memdeck.engine.backends.offline_names import headline

    assert headline("Hola. Cuando creo un producto con un SKU repetido la API devuelve 500.") \
        == "Cuando creo un producto con un SKU repetido la API devuelve 500"
    assert headline("Chào bạn. Khách báo lỗi khi nhập số điện thoại.") \
        == "Khách báo lỗi khi nhập số điện thoại"
    assert headline("Hello world crashes on start.") == "Hello world crashes on start"
