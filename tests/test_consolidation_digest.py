"""What the consolidation makes of several sessions (issue 25, item 4;
engine/backends/offline_digest.py): a rule said twice is one line with both sources, the
checks that passed become tips, the profile holds what two or more sessions show, every
session is indexed, and every file stays within what Codex injects."""

from __future__ import annotations

from memdeck.engine.backends.offline_phase1_v2 import SUMMARY_BUDGET, extract_v2
from memdeck.engine.backends.offline_summary import INJECTED_BYTES, merge_summary
from memdeck.engine.backends.offline_summary_v2 import V2_LIMIT, merge_summary_v2
from memdeck.engine.codex.memory_layout import SelectedMemory


def v2_record(title: str, rules: list[str] = (), ran: list[str] = (),
              fix: str | None = None) -> str:
    lines = [f"# {title}", "", "## Task 1: x", "", f"- The user asked: \"{title}\""]
    if rules:
        lines.append("- Standing rules the user set (their words): "
                     + "; ".join(f"\"{r}\"" for r in rules))
    lines += [f"- Ran `{c}`: exited with code 0" for c in ran]
    if fix:
        lines.append(f"- Failure and fix: `{ran[0]}` failed (1 failed); fixed by changing "
                     f"{fix}: `x = 1`; it then passed")
    return "\n".join(lines) + "\n"


def mem(i: int, summary: str, cwd: str = "/home/lan/src/shop", day: int = 1,
        raw: str = "") -> SelectedMemory:
    tid = f"0194f5a6-89ab-7cde-8123-{i:012x}"
    return SelectedMemory(tid, 1_764_547_200 + day * 86_400 + i, raw, summary, f"task {i}",
                          f"/r/{tid}.jsonl", cwd, "main")


def ref(m: SelectedMemory) -> str:
    return f"rollout_summaries/{m.file_stem}.md"


def section(text: str, heading: str) -> list[str]:
    body = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [ln for ln in body.splitlines() if ln.startswith("- ")]


def test_a_rule_said_in_two_sessions_is_one_line_citing_both() -> None:
    a = mem(1, v2_record("Fix the cart", ["We use pnpm in this repo, never npm."]))
    b = mem(2, v2_record("Add the coupon page", ["we use pnpm in this repo, not npm"]), day=3)
    c = mem(3, v2_record("Tidy CSS", ["Always write CSS modules, no global styles."]), day=4)
    text = merge_summary_v2("", [a, b, c])
    prefs = section(text, "User preferences")
    pnpm = [p for p in prefs if "pnpm" in p]
    assert len(pnpm) == 1 and ref(a) in pnpm[0] and ref(b) in pnpm[0]
    assert any("CSS modules" in p and ref(c) in p for p in prefs)
    # forgetting one session leaves the rule with the other; forgetting both drops it
    assert ref(a) not in merge_summary_v2(text, [b, c])
    assert "pnpm" in "".join(section(merge_summary_v2(text, [b, c]), "User preferences"))
    assert "pnpm" not in "".join(section(merge_summary_v2(text, [c]), "User preferences"))


def test_checks_that_passed_become_tips_and_a_persons_tip_stays() -> None:
    a = mem(1, v2_record("Fix the refund fee", ran=["pytest tests/test_refunds.py -q", "ls"],
                         fix="payouts/refunds.py"))
    b = mem(2, v2_record("Lint", ran=["ruff check ."]), cwd="/home/lan/src/api")
    text = merge_summary_v2("", [a, b])
    tips = section(text, "General Tips")
    assert any("shop: `pytest tests/test_refunds.py -q` passes (tests), after the fix in "
               "payouts/refunds.py" in t and ref(a) in t for t in tips), tips
    assert any("api: `ruff check .`" in t for t in tips)
    assert not any("`ls`" in t for t in tips)  # a look-up proves nothing
    mine = text.replace("## General Tips\n", "## General Tips\n- Staging needs the VPN.\n")
    again = merge_summary_v2(mine, [b])
    tips = section(again, "General Tips")
    assert tips[0] == "- Staging needs the VPN." and not any("refunds" in t for t in tips)


def test_the_profile_holds_only_what_two_sessions_show() -> None:
    vi = [mem(i, v2_record(f"Sửa lỗi phân trang đơn hàng số {i}"), cwd="D:\\src\\shop-admin")
          for i in range(2)]
    text = merge_summary_v2("", [*vi, mem(5, v2_record("Fix the login page"))])
    profile = section(text, "User Profile")
    assert any("Vietnamese (2)" in p for p in profile), profile
    assert any("Windows (2)" in p for p in profile)
    assert any("shop-admin (2)" in p for p in profile)
    assert all(p.endswith("[from 3 sessions]") for p in profile)
    assert section(merge_summary_v2("", [vi[0]]), "User Profile") == ["- none yet"]


def test_v2_indexes_every_session_within_the_limit() -> None:
    many = [mem(i, v2_record(f"Fixed bug {i} in the checkout flow, with a regression test",
                             [f"Always run the linter before commit {i % 3}."],
                             ran=[f"pytest tests/test_{i}.py"]), cwd=f"/src/p{i % 9}",
                day=i % 30) for i in range(90)]
    text = merge_summary_v2("", many)
    assert len(text.encode()) < V2_LIMIT
    assert all(f"rollout_summaries/{m.file_stem}.md" in text for m in many)
    assert "not listed here" not in text


def test_v1_summary_stays_within_what_codex_injects() -> None:
    raw = "\n".join(f"- user preference: Always name the {w} module after its table."
                    for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta"))
    many = [mem(i, f"# Task {i}\n\n- Key steps: `pytest -q tests/t{i}.py` passed (exit code 0)\n",
                cwd=f"/src/p{i}", raw=raw.replace("module", f"module {i}")) for i in range(60)]
    memory_md = "".join(
        f"# Task Group: p{i}\nscope: x\napplies_to: cwd=/src/p{i}; reuse_rule=x\n\n"
        f"## Task 1: Task {i}, success\n### rollout_summary_files\n- {ref(m)} (cwd=/src/p{i}, "
        f"rollout_path=/r, updated_at=2025-12-01T00:00:00Z, thread_id={m.thread_id})\n"
        f"### keywords\n- k{i}\n\n" for i, m in enumerate(many))
    text = merge_summary("v1\n", memory_md, 1_764_547_200, selected=many)
    assert len(text.encode()) <= INJECTED_BYTES
    assert section(text, "User preferences") and section(text, "General Tips")


def test_a_long_session_summary_fits_codexs_cap_without_a_cut_line() -> None:
    items: list[dict[str, object]] = []
    for n in range(30):
        items.append({"type": "message", "role": "user", "content": [{
            "type": "input_text", "text": f"Request {n}: " + "please refactor the parser " * 30}]})
        for k in range(12):
            items.append({"type": "function_call", "name": "shell", "call_id": f"c{n}-{k}",
                          "arguments": f'{{"command": ["bash", "-lc", "pytest tests/t{k}.py"]}}'})
            items.append({"type": "function_call_output", "call_id": f"c{n}-{k}",
                          "output": '{"output": "ok", "metadata": {"exit_code": 0}}'})
        items.append({"type": "message", "role": "assistant", "content": [{
            "type": "output_text", "text": "Done. " * 200}]})
    text, _ = extract_v2(items, "/src/p", "main")
    assert len(text.encode()) <= SUMMARY_BUDGET
    assert text.startswith("# Request 0") and text.endswith("(no model).\n")
    assert "later requests are not described here" in text
