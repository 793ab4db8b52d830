"""What the agent is shown of memory at the start of its next session (codex-format §5.1):
`memory_summary.md`, trimmed, cut to 2,500 tokens (head and tail kept, Codex's marker in
between), injected only while `[features] memories` and `[memories] use_memories` are on."""

from __future__ import annotations

from dataclasses import dataclass

from .home import CodexHome
from .phase1_input import truncate_middle

SUMMARY_TOKEN_LIMIT = 2500  # MEMORY_TOOL_DEVELOPER_INSTRUCTIONS_SUMMARY_TOKEN_LIMIT


@dataclass(frozen=True)
class InjectedSummary:
    text: str  # the summary as the agent gets it; "" when nothing is injected
    tokens: int  # estimated as Codex does: 4 bytes a token
    truncated_tokens: int  # cut from the middle to fit the limit
    active: bool  # whether a new session gets it at all
    note: str  # one line saying so, and why


def injected_summary(home: CodexHome) -> InjectedSummary:
    cfg = home.config
    if not cfg.feature_enabled:
        off = "not shown: memories are off ([features] memories = false)"
    elif not cfg.use_memories:
        off = "not shown: [memories] use_memories = false"
    else:
        off = ""
    path = home.memory_root / "memory_summary.md"
    try:
        text = path.read_bytes().decode("utf-8").strip()
    except FileNotFoundError:
        return InjectedSummary("", 0, 0, False, "nothing is shown: there is no "
                               f"{path.name} yet")
    except (OSError, UnicodeDecodeError):
        return InjectedSummary("", 0, 0, False,
                               f"nothing is shown: Codex cannot read {path.name}")
    text, cut = truncate_middle(text, SUMMARY_TOKEN_LIMIT)
    tokens = -(-len(text.encode("utf-8")) // 4)
    if not text:
        return InjectedSummary("", 0, 0, False, f"nothing is shown: {path.name} is empty")
    size = f"≈{tokens:,} tokens of {SUMMARY_TOKEN_LIMIT:,}"
    if cut:
        size += f"; {cut:,} tokens cut from the middle"
    if off:
        return InjectedSummary(text, tokens, cut, False, f"{off} (would be {size})")
    return InjectedSummary(text, tokens, cut, True,
                           f"shown at the start of every new session: {size}")
