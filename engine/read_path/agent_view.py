"""What the agent is shown of memory at the start of its next session
(docs/codex-format.md "Memory injection").

Codex reads `<root>/memory_summary.md`, trims it, cuts it to 2,500 tokens (the first and last
5,000 bytes kept, `…N tokens truncated…` between), and places it inside its read-path
instructions, injected only while `[features] memories` and `[memories] use_memories` are on.
V1 sends that text as one developer-message part; V2 uses a shorter template and cuts the text
into parts of at most 8,900 bytes (docs/codex-format.md "Memory injection": consecutive
`input_text` parts of one developer message). The preview renders memdeck's own wording of those
instructions (prompts/read_path*.md) around exactly the summary bytes Codex sends, cut the same
way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..codex.home import CodexHome
from ..phase1.input_v1 import truncate_middle
from ..phase1.input_v2 import split_chunks

SUMMARY_TOKEN_LIMIT = 2500  # MEMORY_TOOL_DEVELOPER_INSTRUCTIONS_SUMMARY_TOKEN_LIMIT
PART_BYTES = 8_900  # V2: the largest piece of read-path text Codex sends
TEMPLATES = {"v1": "read_path", "v2": "read_path_v2"}


@dataclass(frozen=True)
class InjectedSummary:
    text: str  # the summary as the agent gets it; "" when nothing is injected
    tokens: int  # of `text`, estimated as Codex does: 4 bytes a token
    truncated_tokens: int  # cut from the middle to fit the limit
    active: bool  # whether a new session gets it at all
    note: str  # one line saying so, and why
    version: str = "v1"
    messages: tuple[str, ...] = ()  # the read-path text as sent: V1 one part, V2 ≤ 8,900 B each
    message_tokens: int = 0  # of all `messages` together

    @property
    def message_text(self) -> str:
        return "".join(self.messages)


def render_read_path(version: str, base_path: str, summary: str) -> tuple[str, ...]:
    """The developer text around `summary` (already trimmed and cut), as parts."""
    from memdeck import prompts

    text = prompts.render(TEMPLATES[version], base_path=base_path, memory_summary=summary)
    return tuple(split_chunks(text, PART_BYTES)) if version == "v2" else (text,)


def _tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // 4)


def injected_summary(home: CodexHome) -> InjectedSummary:
    cfg = home.config
    version = home.memory_version
    if not cfg.feature_enabled:
        off = "not shown: memories are off (config.toml does not set [features] memories = true)"
    elif not cfg.use_memories:
        off = "not shown: [memories] use_memories = false"
    else:
        off = ""
    root = home.memory_root
    path = root / "memory_summary.md"
    try:
        text = path.read_bytes().decode("utf-8").strip()
    except FileNotFoundError:
        return InjectedSummary("", 0, 0, False, "nothing is shown: there is no "
                               f"{path.name} yet (in {root.name}/)", version)
    except (OSError, UnicodeDecodeError):
        return InjectedSummary("", 0, 0, False,
                               f"nothing is shown: Codex cannot read {path.name}", version)
    text, cut = truncate_middle(text, SUMMARY_TOKEN_LIMIT)
    if not text:
        return InjectedSummary("", 0, 0, False, f"nothing is shown: {path.name} is empty",
                               version)
    tokens = _tokens(text)
    messages = render_read_path(version, str(root), text)
    total = sum(_tokens(m) for m in messages)
    size = f"≈{tokens:,} tokens of {SUMMARY_TOKEN_LIMIT:,}"
    if cut:
        size += f"; {cut:,} tokens cut from the middle"
    parts = f"{len(messages)} parts" if len(messages) > 1 else "one part"
    sent = f" ({version}: ≈{total:,} tokens with the instructions, in {parts})"
    if off:
        return InjectedSummary(text, tokens, cut, False, f"{off} (would be {size})", version,
                               messages, total)
    return InjectedSummary(text, tokens, cut, True,
                           f"shown at the start of every new session: {size}{sent}", version,
                           messages, total)
