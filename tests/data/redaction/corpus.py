"""Reads the redaction corpus; shared by tests/test_redact.py and bench/redaction.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
_MARK = re.compile(r"⟦(.*?)⟧", re.S)


@dataclass(frozen=True)
class SecretCase:
    label: str
    text: str  # markers removed
    secrets: tuple[str, ...]


def load_secrets(path: Path = HERE / "secrets.txt") -> list[SecretCase]:
    cases: list[SecretCase] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line or line.startswith("#"):
            continue
        label, _, body = line.partition("] ")
        if body == "<<<":
            block = []
            while lines[i] != ">>>":
                block.append(lines[i])
                i += 1
            i += 1
            body = "\n".join(block)
        cases.append(SecretCase(label.lstrip("["), _MARK.sub(r"\1", body),
                                tuple(_MARK.findall(body))))
    return cases


def load_lines(name: str) -> list[str]:
    text = (HERE / name).read_text(encoding="utf-8")
    return [line for line in text.split("\n") if line and not line.startswith("#")]


def leaked(case: SecretCase, output: str, window: int = 8) -> list[str]:
    """Parts (8+ chars) of a secret value still in `output`, ignoring parts that also occur
    in the case's text outside the secrets (e.g. a prefix like `github_p` in the prose)."""
    rest = case.text
    for s in case.secrets:
        rest = rest.replace(s, "\0")
    found = []
    for s in case.secrets:
        for k in range(len(s) - window + 1):
            part = s[k:k + window]
            if part in output and part not in rest:
                found.append(part)
    return found


def literal_codex(text: str) -> str:
    """docs/codex-format.md "Redaction" transcribed literally: the reference memdeck's fast path
    must equal."""
    text = re.sub(r"(?i:\bBearer)[ \t]+[A-Za-z0-9._~+/-]{16,}=*", "Bearer [REDACTED_SECRET]",
                  text)
    text = re.sub(r"sk-[A-Za-z0-9]{20,}", "[REDACTED_SECRET]", text)
    text = re.sub(r"\bAKIA[0-9A-Z]{16}\b", "[REDACTED_SECRET]", text)
    return re.sub(r"(?i)\b(api[_-]?key|token|secret|password)\b(\s*[:=]\s*)([\"']?)[^\s\"']{8,}",
                  r"\1\2\3[REDACTED_SECRET]", text)
