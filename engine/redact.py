"""Secret redaction and the secret scan used by the accept gate.

`redact` applies Codex's four `redact_secrets` patterns first, in Codex's order and with its
replacements (docs/codex-format.md "Redaction"), then memdeck's own rules (secret_rules.py),
each of which replaces only the secret with `[REDACTED_SECRET]` (key names, URL schemes, users
and hosts stay). `find_secrets` reports the same secrets with their positions, for the accept
gate and the UI.

Secrets are recognised by shape (vendor prefixes, PEM blocks, JWTs, URL passwords) or by the
key they are assigned to (`DB_PASSWORD=…`, `"token": "…"`). A bare high-entropy string with no
such context is left alone on purpose: hashes, commit ids, UUIDs and base64 data (images
included) look the same. Text is also handled as the body of a JSON string, as in serialised
rollouts (`\\n`, `\\"`, `\\\\\\"`).

Speed: every pattern starts with a literal so `re` can skip ahead; token boundaries are checked
after the match, and case-insensitive keywords are searched in a lowercased copy (same length,
same offsets). Codex's patterns start with `\\b`, which defeats that, so their candidate
positions are found by a literal search and each is confirmed with Codex's own regex via
`match(text, pos)` — the same matches `re.sub` would find. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .secret_rules import MARKER, TOKEN_CHARS, own_spans

__all__ = ["MARKER", "SecretFinding", "codex_redact", "find_secrets", "redact", "redact_stream"]


@dataclass(frozen=True, slots=True)
class SecretFinding:
    kind: str
    start: int
    end: int
    preview: str  # masked, e.g. "sk-p…9Q"; never the whole secret


# -- Codex's four patterns (sanitizer.rs), exactly; `(?P<s>…)` only marks the secret's span ---
_C1 = re.compile(r"(?i:\bBearer)[ \t]+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)")
_C2 = re.compile(r"(?P<s>sk-[A-Za-z0-9]{20,})")
_C3 = re.compile(r"(?P<s>\bAKIA[0-9A-Z]{16}\b)")
_C4 = re.compile(r"(?i)\b(api[_-]?key|token|secret|password)\b(\s*[:=]\s*)([\"']?)"
                 r"(?P<s>[^\s\"']{8,})")
# The only characters outside ASCII that (?i) folds onto ASCII letters; str.lower() keeps
# offsets for everything else (İ is the one whose lower() is longer).
_ODD_FOLD = re.compile("[\u0130\u0131\u017f\u212a]")


def _lower(text: str) -> str | None:
    """`text` lowercased with unchanged offsets, or None when that is not exact."""
    if not text.isascii() and _ODD_FOLD.search(text):
        return None
    return text.lower()


_LITERALS = {w: re.compile(w) for w in ("AKIA", "bearer", "api", "token", "secret", "password")}


def _positions(s: str, *literals: str) -> list[int]:
    pos = [m.start() for w in literals if w in s for m in _LITERALS[w].finditer(s)]
    return sorted(pos) if len(literals) > 1 else pos


def _codex_matches(i: int, text: str, low: str | None) -> Iterator[re.Match[str]]:
    """What `_C<i>.finditer(text)` yields, found faster (see the module docstring)."""
    rx = (_C1, _C2, _C3, _C4)[i]
    if i == 1:
        if "sk-" in text:
            yield from rx.finditer(text)
        return
    if i == 2:
        cands = _positions(text, "AKIA")
    elif low is None:
        yield from rx.finditer(text)
        return
    else:
        cands = _positions(low, "bearer") if i == 0 else _positions(
            low, "api", "token", "secret", "password")
    end = 0
    for p in cands:
        if p >= end and (m := rx.match(text, p)):
            yield m
            end = m.end()


_CODEX_GATES = (("bearer",), ("sk-",), ("AKIA",), ("api", "token", "secret", "password"))


def codex_redact(text: str, low: str | None = None) -> str:
    """Codex's `redact_secrets`: its four replacements, in order. `low`: `_lower(text)`."""
    low = _lower(text) if low is None else low
    for i in range(4):
        src = text if i in (1, 2) else low
        if src is not None and not any(g in src for g in _CODEX_GATES[i]):
            continue  # the pattern cannot match (no gate for odd case folds: low is None)
        parts, last = [], 0
        for m in _codex_matches(i, text, low):
            parts.append(text[last:m.start()])
            parts.append("Bearer " + MARKER if i == 0 else
                         m.expand(r"\1\2\3[REDACTED_SECRET]") if i == 3 else MARKER)
            last = m.end()
        if parts:
            text = "".join(parts) + text[last:]
            low = _lower(text)
    return text



_GLUE_AFTER = re.compile(r"(?:[\w+/=~-]|\.(?=[\w-]))+", re.ASCII)


def _fragments(text: str) -> list[tuple[int, int, str]]:
    """Rest of a secret that another pattern cut short (Codex's `sk-` rule stops at `_`)."""
    spans = []
    i = text.find(MARKER)
    while i >= 0:
        j = i + len(MARKER)
        if m := _GLUE_AFTER.match(text, j):
            spans.append((*m.span(), "secret-fragment"))
        k = i
        while k > 0 and text[k - 1] in TOKEN_CHARS:
            k -= 1
        if k > 0 and text[k - 1] == "\\" and text[k] in "nrtbfu":
            k += 1  # keep a JSON escape such as `\n` intact
        if i - k >= 8 and re.search(r"[\dA-Z]", text[k:i]):
            spans.append((k, i, "secret-fragment"))
        i = text.find(MARKER, j)
    return spans


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    for a, b, kind in sorted(spans, key=lambda s: (s[0], -s[1])):
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b), out[-1][2])
        else:
            out.append((a, b, kind))
    return out


def _splice(text: str, spans: list[tuple[int, int, str]]) -> str:
    parts, last = [], 0
    for a, b, _ in spans:
        parts.append(text[last:a])
        parts.append(MARKER)
        last = b
    return "".join(parts) + text[last:]


def _pass(text: str) -> str:
    low = _lower(text)
    if (out := codex_redact(text, low)) != text:
        text, low = out, _lower(out)
    if spans := own_spans(text, low):
        text = _splice(text, _merge(spans))
    if MARKER in text and (frags := _fragments(text)):
        keep, last = [], 0  # drop the fragments: the marker next to them already stands in
        for a, b, _ in _merge(frags):
            keep.append(text[last:a])
            last = b
        text = "".join(keep) + text[last:]
    return text


_SETTLED_AFTER = frozenset(" \t\r\n\"'")
_PEM_HEADS = re.compile(r"(?:-----BEGIN|\[REDACTED_SECRET\])[ A-Z0-9]*PRIVATE KEY")
_WS = re.compile(r"\s")


# Where a later pass could take a marker plus what follows it: Codex's pattern 4, a quoted
# value, a signed-URL parameter, `user:` in a URL or `curl -u` (unless `@` ends it there).
_BEFORE_VALUE = re.compile(r"(?:\b(?:api[_-]?key|token|secret|password)\s*[:=]\s*[\"']?|[\"'`]"
                           r"|sig(?:nature)?=|:)\Z", re.I)


# Codex's pattern 4 with part of its value before the marker: it can now take the marker too.
_C4_RUN = re.compile(r"(?i)\b(?:api[_-]?key|token|secret|password)\b\s*[:=]\s*[\"']?"
                     r"[^\s\"']+\Z")


def _after_separator(text: str, i: int, follower: str) -> bool:
    m = _BEFORE_VALUE.search(text, max(0, i - 40), i)
    return m is not None and not (follower == "@" and m.group() == ":")


def _settled(text: str) -> bool:
    """Would a second pass leave `text` alone? Codex's pattern 4 takes any non-space run after
    `token:`, so `token: [REDACTED_SECRET],x` changes again. A marker followed by a space or
    quote is final; around any other, the pass is re-run on a whitespace-bounded window."""
    if "PRIVATE KEY" in text and _PEM_HEADS.search(text):
        return False
    i = text.find(MARKER)
    while i >= 0:
        j = i + len(MARKER)
        if (j < len(text) and text[j] not in _SETTLED_AFTER and not text[j].isspace()
                and _after_separator(text, i, text[j])
                or i and text[i - 1] not in _SETTLED_AFTER and not text[i - 1].isspace()
                and _C4_RUN.search(text, max(0, i - 80), i)):
            a = max(text.rfind(c, 0, max(0, i - 256)) for c in " \n\t") + 1
            m = _WS.search(text, min(len(text), j + 256))
            b = m.start() if m else len(text)
            if j - a > 4096 or b - i > 4096:
                return False
            window = text[a:b]
            if _pass(window) != window:
                return False
            j = b
        i = text.find(MARKER, j)
    return True


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED_SECRET]`. Idempotent."""
    out = _pass(text)
    for _ in range(4):  # settle the rare case where a replacement exposes a neighbour
        if out == text or _settled(out):
            break
        text, out = out, _pass(out)
    return out


def _preview(kind: str, secret: str) -> str:
    if kind == "private-key":
        return secret[:secret.find("-----", 5) + 5] + "…"
    if len(secret) >= 16:
        return f"{secret[:4]}…{secret[-2:]}"
    return f"{secret[:2]}…" if len(secret) >= 10 else "…"


def find_secrets(text: str) -> list[SecretFinding]:
    """Every secret in `text`, in order; overlapping hits are merged into one finding."""
    hits = []
    low = _lower(text)
    for i, kind in enumerate(("bearer", "openai-key", "aws-access-key-id", "assignment")):
        for m in _codex_matches(i, text, low):
            if m.group("s") != MARKER:
                hits.append((*m.span("s"), kind))
    hits += own_spans(text, low)
    if MARKER in text:
        hits += _fragments(text)
    return [SecretFinding(kind, a, b, _preview(kind, text[a:b])) for a, b, kind in _merge(hits)]


_PEM_MARKS = re.compile(r"-----(BEGIN|END)[ A-Z0-9]*PRIVATE KEY")


def _inside_pem(text: str) -> bool:
    """Does `text` end inside a private-key block (a BEGIN line whose END is still to come)?"""
    marks = _PEM_MARKS.findall(text)
    return bool(marks) and marks[-1] == "BEGIN"


def redact_stream(src: BinaryIO, dst: BinaryIO, *, chunk: int = 1 << 16,
                  hold_limit: int = 1 << 20) -> None:
    """Copy `src` to `dst` through `redact`, whole lines at a time, as they arrive.

    Bytes are decoded as UTF-8 with `surrogateescape`, so invalid bytes pass through unchanged.
    Memory stays bounded except for one very long line. A private-key block spans lines, so
    text that ends inside one is held back until its END line (at most `hold_limit` chars).
    """
    read = getattr(src, "read1", src.read)
    pending, held = b"", ""

    def emit(text: str) -> None:
        dst.write(redact(text).encode("utf-8", "surrogateescape"))
        dst.flush()

    while data := read(chunk):
        pending += data
        cut = pending.rfind(b"\n") + 1
        if not cut:
            continue
        text = held + pending[:cut].decode("utf-8", "surrogateescape")
        pending = pending[cut:]
        held = ""
        if _inside_pem(text) and len(text) < hold_limit:
            held = text
        else:
            emit(text)
    if held or pending:
        emit(held + pending.decode("utf-8", "surrogateescape"))
