"""Codex's rollout summary file names and layouts
(docs/codex-format.md "Rollout summary files")."""

from memdeck.engine.codex.memory_layout import (
    SelectedMemory,
    render_raw_memories,
    render_rollout_summary,
    rollout_summary_file_stem,
    slugify,
)


def test_codex_file_name_vector() -> None:
    assert rollout_summary_file_stem(
        "0194f5a6-89ab-7cde-8123-456789abcdef", 0, None) == "2025-02-11T15-35-19-jqmb"


def test_codex_slug_vector() -> None:
    slug = "Unsafe Slug/With Spaces & Symbols + EXTRA_LONG_12345_67890_ABCDEFGHIJKLMNOP"
    assert slugify(slug) == "unsafe_slug_with_spaces___symbols___extra_long_12345_67890_a"


def test_slug_edge_cases() -> None:
    assert slugify(None) == ""
    assert slugify("___") == ""
    assert slugify("Ünïcode ok") == "_n_code_ok"
    stem = rollout_summary_file_stem("0194f5a6-89ab-7cde-8123-456789abcdef", 0, "Fix CI")
    assert stem == "2025-02-11T15-35-19-jqmb-fix_ci"


def test_v4_ids_use_source_updated_at() -> None:
    stem = rollout_summary_file_stem("9b2f4c1e-3d5a-4f6b-8c7d-1e2f3a4b5c6d", 1_700_000_000, "")
    assert stem.startswith("2023-11-14T22-13-20-")


def _m(tid: str, branch: str | None = "main") -> SelectedMemory:
    return SelectedMemory(tid, 1_755_698_700, "  raw memory body\n", "summary body", "slug",
                          "/h/.codex/sessions/r.jsonl", "/src/app", branch)


def test_rollout_summary_layout() -> None:
    text = render_rollout_summary(_m("0194f5a6-89ab-7cde-8123-456789abcdef"))
    assert text == (
        "thread_id: 0194f5a6-89ab-7cde-8123-456789abcdef\n"
        "updated_at: 2025-08-20T14:05:00+00:00\n"
        "rollout_path: /h/.codex/sessions/r.jsonl\ncwd: /src/app\ngit_branch: main\n\n"
        "summary body\n")
    assert "git_branch" not in render_rollout_summary(_m("x", None))


def test_raw_memories_layout_is_sorted_by_thread_id() -> None:
    assert render_raw_memories([]) == "# Raw Memories\n\nNo raw memories yet.\n"
    text = render_raw_memories([_m("b"), _m("a")])
    assert text.index("## Thread `a`") < text.index("## Thread `b`")
    assert "Merged stage-1 raw memories (stable ascending thread-id order):" in text
    assert "\nraw memory body\n" in text
