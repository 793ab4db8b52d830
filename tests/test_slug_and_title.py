"""Names that mean something (issue 9, requirement 3): titles come from the user's request in
their script, slugs follow Codex's file-name rule (docs/codex-format.md "Rollout summary files":
each character an ASCII letter or digit or `_`, 60 characters) with a meaningful fallback for a
request in a script that rule cannot keep, and never a placeholder like `session`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from memdeck.engine.backends.offline_names import (
    cut,
    fallback_title,
    headline,
    rollout_slug,
    title_of,
    transliterate,
)
from memdeck.engine.backends.offline_phase1 import extract
from memdeck.engine.backends.offline_phase1_v2 import extract_v2
from memdeck.engine.codex.memory_layout import slugify
from memdeck.engine.codex.rollout import read_rollout
from memdeck.engine.codex.user_words import session_words
from memdeck.engine.phase1.input_v1 import build_input

QUALITY = Path(__file__).parent / "fixtures" / "quality"
PLACEHOLDERS = re.compile(r"^(session|user_input|user_shell_command|files_mentioned_by_the_user|"
                          r"context_from_my_ide_setup|my_request)")


def corpus(name: str) -> tuple[list[dict[str, Any]], str | None, dict[str, int]]:
    rollout = read_rollout(QUALITY / name)
    inp = build_input(rollout)
    assert rollout.meta is not None
    return inp.items, rollout.meta.cwd, inp.exit_codes


def names(name: str) -> dict[str, Any]:
    """Titles and slugs of a corpus session, memory v1 and v2."""
    items, cwd, codes = corpus(name)
    r = extract(items, cwd, None, codes)
    summary, slug_v2 = extract_v2(items, cwd, None, codes)
    title_v1 = re.search(r"(?m)^description: (.*)$", r.raw_memory)
    return {"title_v1": title_v1.group(1) if title_v1 else "",
            "heading_v1": (r.rollout_summary.splitlines() or [""])[0][2:],
            "title_v2": (summary.splitlines() or [""])[0][2:], "slug_v1": r.rollout_slug,
            "slug_v2": slug_v2}


# -- the corpus sessions: before issue 9 these were `context_from_my_ide_setup`, `user_input`,
#    `files_mentioned_by_the_user`, `user_shell_command` and `session` -----------------------

@pytest.mark.parametrize(("name", "title", "slug"), [
    ("ide-context-vscode-0.46.jsonl",
     "The invoice table lags when I type in the search box: it refilters and resorts all 4k "
     "rows on every keystroke", "the_invoice_table_lags_when_i"),
    ("desktop-files-mentioned-0.150.jsonl",
     "Add this export to the churn notebook and plot monthly churn per plan (Starter, Team, "
     "Enterprise)", "add_this_export_to_the_churn"),
    ("user-shell-command-0.169.jsonl",
     "The reorder point migration is untracked, it should have gone in with yesterday's commit",
     "the_reorder_point_migration_is_untracked"),
    ("custom-prompt-speckit-0.58.jsonl",
     "Reports page: admins can export the current report as CSV",
     "reports_page_admins_can_export_the"),
    ("request-chinese-0.120.jsonl", "移动端登录页点击“忘记密码”没有任何反应，帮我查一下原因并修复",
     "mall_h5_login_view"),
    ("request-chinese-failing-test-0.169.jsonl", "下单接口的单元测试挂了，帮我看看是什么原因并修好",
     "order_service_price"),
    ("request-japanese-0.169.jsonl",
     "本番ログに「Redis への接続がタイムアウトしました」が1時間に数百件出ています",
     "order_worker_redis_client"),
    ("request-korean-0.146.jsonl", "정산 내역 CSV 다운로드할 때 한글 파일명이 깨져요",
     "settlement_api_csv_export_controller"),
    ("request-vietnamese-0.140.jsonl",
     "Trang danh sách đơn hàng tải rất chậm khi có hơn 10.000 đơn",
     "trang_danh_sach_don_hang_tai"),
])
def test_titles_and_slugs_of_the_corpus_sessions(name: str, title: str, slug: str) -> None:
    got = names(name)
    assert got["title_v1"] == got["heading_v1"] == got["title_v2"] == title
    assert got["slug_v1"] == got["slug_v2"] == slug
    assert slugify(slug) == slug  # the stored slug is the one in the file name


@pytest.mark.parametrize("path", sorted(QUALITY.glob("*.jsonl")), ids=lambda p: p.name)
def test_no_corpus_slug_is_a_placeholder_or_changed_by_codexs_rule(path: Path) -> None:
    got = names(path.name)
    for slug in (got["slug_v1"], got["slug_v2"]):
        if slug is None:
            continue  # no memory kept
        assert not PLACEHOLDERS.match(slug), slug
        assert slugify(slug) == slug and len(slug) <= 60
        assert re.search(r"[a-z0-9]{3,}", slug)


# -- the rule ------------------------------------------------------------------------------

def test_vietnamese_is_transliterated_because_codexs_rule_would_break_it() -> None:
    title = "Trang danh sách đơn hàng tải rất chậm"
    # kept as it is, Codex's rule turns every letter with a diacritic into `_`
    assert slugify(title) == "trang_danh_s_ch___n_h_ng_t_i_r_t_ch_m"
    assert transliterate(title) == "Trang danh sach don hang tai rat cham"
    assert rollout_slug(title, "shop-admin") == "trang_danh_sach_don_hang_tai"
    assert rollout_slug("Đổi mật khẩu người dùng") == "doi_mat_khau_nguoi_dung"
    assert rollout_slug("Zażółć gęślą jaźń, Straße") == "zazolc_gesla_jazn_strasse"


@pytest.mark.parametrize(("title", "project", "files", "commands", "slug"), [
    ("修复支付回调重复记账的问题", "pay-gateway", ["app/callbacks/WechatNotify.java"], [],
     "pay_gateway_wechat_notify"),
    ("修复支付回调重复记账的问题", "pay-gateway", [], ["mvn -q test -Dtest=NotifyTest"],
     "pay_gateway_mvn_test"),
    ("把 Redis 的 TTL 改成一天", "cache-svc", ["cache/ttl.go"], [], "cache_svc_redis_ttl"),
    ("Исправь падающий тест логина", "auth", ["tests/test_login.py"], [], "auth_test_login"),
    ("修复支付回调", "unknown", [], [], None),  # nothing names it: no slug part at all
    ("修复支付回调", None, [], [], None),
])
def test_a_request_in_another_script_gives_a_meaningful_ascii_slug(
        title: str, project: str | None, files: list[str], commands: list[str],
        slug: str | None) -> None:
    assert rollout_slug(title, project, files, commands) == slug


def test_a_mixed_request_keeps_its_latin_words() -> None:
    assert rollout_slug("修复 login page 的 bug", "web") == "login_page_bug"
    assert rollout_slug("Fix the flaky test in tests/test_api.py") == "fix_the_flaky_test_in_tests"


def test_slugs_never_exceed_codexs_sixty_characters() -> None:
    slug = rollout_slug("Supercalifragilisticexpialidocious " * 4)
    assert slug is not None and len(slug) <= 60 and slugify(slug) == slug


def test_a_session_with_no_words_of_the_user_is_named_after_its_work() -> None:
    shell = ("<user_shell_command>\n<command>\ngit status --short\n</command>\n<result>\n"
             "Exit code: 0\nDuration: 0.0410 seconds\nOutput:\n?? db/0042.py\n\n</result>\n"
             "</user_shell_command>")
    items = [{"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": shell}]},
             {"type": "custom_tool_call", "name": "apply_patch", "call_id": "p1", "status":
              "completed", "input": "*** Begin Patch\n*** Update File: inventory/models.py\n@@\n"
                                    "-a\n+b\n*** End Patch"},
             {"type": "custom_tool_call_output", "call_id": "p1", "output": json_ok()}]
    r = extract(items, "/home/akira/src/inventory-api", None)
    assert "description: Changes to inventory/models.py in inventory-api" in r.raw_memory
    assert r.rollout_slug == "inventory_api_models"
    assert "user_shell_command" not in r.raw_memory + r.rollout_summary


def json_ok() -> str:
    return '{"output": "Success. Updated the following files:\\nM inventory/models.py\\n", ' \
           '"metadata": {"exit_code": 0, "duration_seconds": 0.0}}'


def test_fallback_titles_name_the_work() -> None:
    assert fallback_title("shop", ["a.py", "b.py"]) == "Changes to a.py and 1 more in shop"
    assert fallback_title("shop", [], ["make test"]) == "Ran `make test` in shop"
    assert fallback_title("shop") == "Work in shop"


# -- titles ----------------------------------------------------------------------------------

def test_the_title_is_the_first_substantive_sentence_in_the_users_script() -> None:
    words = session_words([
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "你好。订单列表加载很慢，请加上分页。每页 50 条。"}]}])
    assert title_of(words) == "订单列表加载很慢，请加上分页"
    assert headline("Fix it!!  Now.") == "Fix it"
    assert title_of([]) == ""


def test_long_titles_are_cut_at_a_word_or_a_character() -> None:
    long = "Make the export stream rows " + "and keep memory flat " * 10
    title = cut(long, 120)
    assert len(title) <= 120 and title.endswith("…") and not title.endswith(" …")
    assert title[:-1] == long[:len(title) - 1]  # cut at the end of a word
    cjk = "订单" * 100
    assert cut(cjk, 120) == "订单" * 59 + "订…"
