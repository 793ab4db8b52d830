"""memdeck's own secret rules, after Codex's four patterns (redact.py): each replaces only the
secret with `MARKER` (key names, URL schemes, users and hosts stay). A rule is a regex that
starts with a literal (its `gate`: the text is not searched without it) and a check of the
match that gives the secret's span, or None for a placeholder, a word, a hash. `own_spans`
finds them all; redact.py merges, splices and repeats until nothing changes."""

from __future__ import annotations

import binascii
import math
import re
from collections.abc import Callable
from typing import NamedTuple

MARKER = "[REDACTED_SECRET]"
Span = tuple[int, int]
ASCII_LOWER = {c: c + 32 for c in range(65, 91)}  # str.translate: lowercase, same offsets
TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _starts_token(text: str, i: int) -> bool:
    """A token starts here: after a non-token character or a JSON escape such as `\\n`. A marker
    counts as part of a token (it stands for one), so a later pass sees the same extents."""
    if i == 0:
        return True
    if text[i - 1] in TOKEN_CHARS:
        return i >= 2 and text[i - 2] == "\\" and text[i - 1] in "nrt"
    return not text.endswith(MARKER, 0, i)


def _ends_token(text: str, j: int) -> bool:
    return j >= len(text) or text[j] not in TOKEN_CHARS and not text.startswith(MARKER, j)


class _Rule(NamedTuple):
    kind: str
    rx: re.Pattern[str]
    span: Callable[[re.Match[str], str], Span | None]
    low: bool = False  # run on the lowercased copy
    gate: str = ""  # a literal the text must contain


def _token(check: Callable[[str], bool] | None = None,
           end: bool = False) -> Callable[[re.Match[str], str], Span | None]:
    def span(m: re.Match[str], text: str) -> Span | None:
        a, b = m.span("s")
        if not _starts_token(text, a) or end and not _ends_token(text, b):
            return None
        return (a, b) if check is None or check(text[a:b]) else None
    return span


def _value(check: Callable[[str], bool] | None = None
           ) -> Callable[[re.Match[str], str], Span | None]:
    def span(m: re.Match[str], text: str) -> Span | None:
        a, b = m.span("s")
        v = text[a:b]
        return (a, b) if v != MARKER and (check is None or check(v)) else None
    return span


_ANY = _value()
_PLACEHOLDERS = frozenset(
    "null none nil true false undefined required optional string str bytes int bool env "
    "secret secrets password passwd pass pwd token tokens key apikey api_key redacted hidden "
    "masked placeholder example value todo tbd changeit".split())


def _placeholder(v: str, bare: bool = True) -> bool:
    """A variable, template, mask or type name rather than a value."""
    low = v.lower()
    return (low in _PLACEHOLDERS or v[0] in "$%{<" or bare and v[0] in "!*&#"
            or len(set(low)) == 1 or low.startswith(("your", "xxx", "...", "…", "[redacted"))
            or "{{" in v or "${" in v)


def _looks_random(v: str) -> bool:
    """Mixed, frequently switching character classes: a key, not a word, hash or id."""
    if len(v) < 16 or re.fullmatch(r"[0-9a-fA-F-]+", v) or not re.fullmatch(r"[\w+/=~-]+", v):
        return False
    if not re.search(r"[\d+/=]", v) or not _mixed_case(v):
        return False
    cls = ["a" if c.islower() else "A" if c.isupper() else "0" if c.isdigit() else c for c in v]
    switches = sum(a != b for a, b in zip(cls, cls[1:], strict=False)) / (len(v) - 1)
    counts = [v.count(c) for c in set(v)]
    entropy = -sum(n / len(v) * math.log2(n / len(v)) for n in counts)
    return switches >= 0.35 and entropy >= 3.3


def _mixed_case(v: str) -> bool:
    return any(c.isupper() for c in v) and any(c.islower() for c in v)


def _basic_b64(v: str) -> bool:
    """Decodes to `user:password`."""
    try:
        raw = binascii.a2b_base64(v + "=" * (-len(v) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw and raw.isascii()


# A value after `key=` / `key: ` / `"key": ` (plain, JSON, or JSON inside a JSON string).
_VALUE = r"""(?:
      \\+"(?P<s1>[^"\\\r\n]{N,})\\+"
    | "(?P<s2>(?:[^"\\\r\n]|\\[^\r\n]){N,})"
    | '(?P<s3>[^'\r\n]{N,})'
    | (?P<oq>\\*["'`])?(?P<s4>(?:[^\s"'`\\;&<>(){}\[\],]|,(?=[^\s,])|\[redacted_secret\]){N,})
)"""
_STRONG_QUALIFIER = re.compile(
    r"(?:api|access|secret|private|encryption|signing|master|client|account|app|webhook|jwt|"
    r"hmac|session|service|license|admin|auth|storage|consumer|shared)[_-]?\Z")
_ENV_CONTEXT = re.compile(r"(?:\bENV|\bsetenv|\bconfigure set|\bexport)[ \t]+\Z")
_CODE_VALUE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_SIGNED = re.compile(r"[?&](?:x-(?:amz|goog)-)?\Z", re.I)
_SCHEMES = frozenset("basic bearer token digest apikey api-key negotiate ntlm sso-key".split())


def _key_run_start(text: str, i: int) -> int:
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_.-"):
        i -= 1
    return i


def _assignment(m: re.Match[str], text: str) -> Span | None:
    g, kw, k0, sep = m.lastgroup, m.group("k"), m.start("k"), m.group("sep")
    if g is None:  # never: the value's alternatives are the pattern's last groups
        return None
    s0, s1 = m.span(g)
    password = kw.startswith(("pass", "pwd"))
    weak = kw in ("auth", "credential", "credentials") or kw == "key" and not \
        _STRONG_QUALIFIER.search(text[max(0, k0 - 12):k0].lower())  # api_key, SECRET_KEY
    if s1 - s0 < (16 if weak else 6 if password else 8):
        return None
    value, bare = text[s0:s1], g == "s4" and not m.group("oq")
    if ":" not in sep and "=" not in sep:  # `--token X`, `ENV X_PASSWORD X`, `PASSWORD 'x'`
        run = _key_run_start(text, k0)
        if not (text[run] == "-" or _ENV_CONTEXT.search(text, max(0, run - 20), run)):
            if g == "s4":
                return None
        elif value[0] == "-" or value.isalpha() and value.islower():
            return None  # `--password options`, `--token --cut-at-cursor`
    if MARKER in value or _placeholder(value, bare):
        return None  # a marker inside: an earlier pass decided on this value already
    if kw in ("pass", "pwd") and not (k0 and (text[k0 - 1] in "_.-" or text[k0 - 1].islower()
                                             and text[k0].isupper())):
        return None  # only DB_PASS, smtp.pass, dbPwd: not "a single pass: …", OLDPWD
    if kw == "pwd" and value[0] in "/~.":
        return None  # $PWD is a directory
    if " " in value and not password:
        return None  # tokens and keys have no spaces; passphrases may
    if bare:
        if s1 < len(text) and text[s1] in "([.":
            return None  # a call or subscript: os.environ["X"], get_token()
        if value.isalpha() and value[1:].islower() and re.match(r" [a-z]+\b", text[s1:s1 + 24]):
            return None  # prose: `client_secret: Configuration options for …`
        if _CODE_VALUE.fullmatch(value) and (sep.lstrip(" \t")[:1] == "=" != sep[:1] or (
                not re.search(r"\d", value) and ("." in value or re.search(
                    r"pass|secret|token|key|auth", value.lower())))):
            return None  # code: `x_pass = opt_api + …`, access_token, self.password
    return (s0, s1) if not weak or _looks_random(value) else None


def _authorization(m: re.Match[str], text: str) -> Span | None:
    a, b = m.span("s")
    v = text[a:b]
    if MARKER in v or _placeholder(v, False) or v.lower() in _SCHEMES:
        return None
    if m.group("scheme"):
        return (a, b) if len(v) >= 6 else None
    return (a, b) if _looks_random(v) or _basic_b64(v) else None


def _curl_user(m: re.Match[str], text: str) -> Span | None:
    if not _starts_token(text, m.start()):
        return None
    line = max(text.rfind("\n", 0, m.start()), text.rfind("\\n", 0, m.start()))
    if not re.search(r"\b(?:curl|wget|https?)\b", text[line + 1:m.start()]):
        return None
    a, b = m.span("s")
    v = text[a:b]
    return None if v == MARKER or _placeholder(v) or v.isdigit() else (a, b)


def _pem(m: re.Match[str], text: str) -> Span | None:
    return m.span("s")


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags | re.ASCII)


_PEM_HEAD = r"[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
_NL = r"(?:\\+r|\\+n|[\r\n])"  # a real line break, or one JSON-escaped once or more
_SEP = r"[ \t]*[:=][ \t]*"

# A key's body after a cut: base64 lines, or the same pieces on one line (a pasted key whose
# line breaks became spaces, then cut short by a backend or a preview). Across a line break
# any piece is body; across spaces only a piece that cannot be a word of the prose after it
# (16+ characters, a digit, + / =, or a capital after its first letter).
_B64 = r"[A-Za-z0-9+/=]"
_PEM_PIECE = (r"(?:" + _B64 + r"{16,}|(?=[A-Za-z]*[0-9+/=])" + _B64 + r"+|" + _B64
              + r"[a-z]*[A-Z]" + _B64 + r"*)")
_PEM_BODY = (_B64 + r"*(?:[ \t]*" + _NL + r"[\s]*(?:" + _B64 + r"+|(?:Proc-Type|DEK-Info|"
             r"Comment|Version|Hash):[^\r\n\\]*)|[ \t]+" + _PEM_PIECE + r")*")

_RULES: tuple[_Rule, ...] = (
    *(_Rule("private-key", _rx(  # a whole block, or a cut one up to the last piece of its body
        "(?P<s>" + re.escape(start) + _PEM_HEAD + r"(?:[\s\S]{0,65536}?" + _PEM_END
        + r"|" + _PEM_BODY + r"))"), _pem, gate=start)
      # the head may already be cut by Codex's pattern 4: `secret = "[REDACTED_SECRET] PRIVATE…`
      for start in ("-----BEGIN", MARKER)),
    _Rule("url-password", _rx(r"://[^\s:/@\"'\\]*:(?P<s>[^\s/@\"'\\]+)@"),
          # a password that already holds a marker was redacted (a key inside it): again
          # would eat what is left around the marker, and redact() must be idempotent
          _value(lambda v: not _placeholder(v) and MARKER not in v), gate="://"),
    _Rule("anthropic-key", _rx(r"(?P<s>sk-ant-(?:api|admin|sid|oat|ort)\d\d-[\w-]{20,})"),
          _token(), gate="sk-ant-"),
    _Rule("openai-key", _rx(r"(?P<s>sk-(?:(?:proj|svcacct|admin|None)-)?[\w-]{20,})"),
          _token(lambda v: v.startswith(("sk-proj-", "sk-svcacct-", "sk-admin-"))
                 or (bool(re.search(r"\d", v)) and _mixed_case(v[3:]))), gate="sk-"),
    _Rule("aws-access-key-id", _rx(r"(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})"),
          _token(end=True)),
    _Rule("aws-secret-access-key", _rx(  # aws_secret_access_key, SecretAccessKey, secret_key
        r"secret_?(?:access_?)?key[\"'\\]*[ \t]*(?:[:=]|[ \t])[ \t]*[\"'\\]*"
        r"(?P<s>[a-z0-9/+]{40})(?![a-z0-9/+=\[])"), _value(), low=True, gate="secret"),
    _Rule("google-api-key", _rx(r"(?P<s>AIza[\w-]{35})"), _token(end=True), gate="AIza"),
    _Rule("azure-storage-key", _rx(r"key=(?:(?<=accountkey=)|(?<=sharedaccesskey=))"
                                   r"(?P<s>[a-z0-9+/]{20,}=*)"), _value(), low=True, gate="key="),
    _Rule("github-token", _rx(r"(?P<s>gh[pousr]_[A-Za-z0-9]{30,})"), _token(), gate="gh"),
    _Rule("github-token", _rx(r"(?P<s>github_pat_\w{30,})"), _token(), gate="github_pat_"),
    _Rule("gitlab-token", _rx(r"(?P<s>gl(?:pat|dt|rt|ptt|soat|ft|cbt|imt)-[\w-]{20,})"),
          _token(), gate="gl"),
    _Rule("gitlab-token", _rx(r"(?P<s>GR1348941[\w-]{20,})"), _token(), gate="GR1348941"),
    _Rule("slack-token", _rx(r"(?P<s>xox[abeprs](?:\.xox[bp])?-[A-Za-z0-9-]{10,})"),
          _token(lambda v: bool(re.search(r"\d", v))), gate="xox"),
    _Rule("slack-token", _rx(r"(?P<s>xapp-\d-[A-Za-z0-9-]{10,})"), _token(), gate="xapp-"),
    _Rule("webhook-url", _rx(r"hooks\.slack\.com/(?:services|workflows|triggers)/"
                             r"(?P<s>[\w/+-]{10,})"), _value(), gate="hooks.slack.com"),
    _Rule("webhook-url", _rx(r"discord(?:app)?\.com/api/webhooks/(?P<s>[\w/+-]{10,})"),
          _value(), gate="discord"),
    _Rule("stripe-key", _rx(r"k_(?:live|test)_(?<=[sr]k_live_|[sr]k_test_)[A-Za-z0-9]{16,}"),
          lambda m, t: (m.start() - 1, m.end()) if _starts_token(t, m.start() - 1) else None,
          gate="k_"),
    _Rule("stripe-key", _rx(r"(?P<s>whsec_[A-Za-z0-9+/=]{20,})"), _token(), gate="whsec_"),
    _Rule("npm-token", _rx(r"(?P<s>npm_[A-Za-z0-9]{36})"), _token(end=True), gate="npm_"),
    _Rule("twilio-key", _rx(r"(?P<s>SK[0-9a-fA-F]{32})"),  # an API key's SID; 32 hex alone
          _token(lambda v: bool(re.search(r"[0-9]", v)), end=True), gate="SK"),  # is a hash
    _Rule("pypi-token", _rx(r"(?P<s>pypi-AgE[\w-]{40,})"), _token(), gate="pypi-AgE"),
    _Rule("huggingface-token", _rx(r"(?P<s>hf_[A-Za-z0-9]{30,})"),
          _token(_mixed_case, end=True), gate="hf_"),
    _Rule("jwt", _rx(r"(?P<s>eyJ[\w-]{8,}\.(?:eyJ[\w-]{4,}\.[\w-]*|[\w-]{8,}\.[\w-]{8,}))"),
          _token(), gate="eyJ"),
    _Rule("authorization", _rx(
        r"authorization[\"'\\]*" + _SEP + r"[\"'\\]*(?:(?P<scheme>basic|bearer|token|digest|"
        r"apikey|api-key|negotiate|ntlm|sso-key)[ \t]+)?(?P<s>(?:[a-z0-9+/=._~-]"
        r"|\[redacted_secret\]){6,})"),
          _authorization, low=True, gate="authorization"),
    _Rule("basic-auth", _rx(r"Basic[ \t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})"),
          lambda m, t: _value(_basic_b64)(m, t) if _starts_token(t, m.start()) else None,
          gate="Basic"),
    _Rule("curl-user", _rx(r"(?:-u|--user)[ \t=]*[\"']?[^\s:\"'/@]+:(?P<s>[^\s\"'\\]+)"),
          _curl_user, gate="-"),
    _Rule("signed-url", _rx(r"sig(?:nature)?=(?P<s>[^&\s\"'\\#]{8,})"),
          lambda m, t: _ANY(m, t) if _SIGNED.search(t, max(0, m.start() - 10), m.start())
          else None, low=True, gate="sig"),
) + tuple(
    _Rule("assignment", _rx(rf"(?P<k>{core})(?![a-z0-9_])(?P<kq>\\*[\"'])?"
                            rf"(?P<sep>[ \t]*(?::=|=>|[:=])[ \t]*|[ \t]+)"
                            + _VALUE.replace("N,", str(n) + ","), re.X),
          _assignment, low=True, gate=core[:3])
    for core, n in (("pass(?:word|wd|phrase|code)?", 6), ("pwd", 6), ("secret", 8),
                    ("token", 8), ("key", 8), ("auth", 8), ("credentials?", 8))
)


_BY_SOURCE = (tuple((r.gate, r.rx, r.span, r.kind) for r in _RULES if not r.low),
              tuple((r.gate, r.rx, r.span, r.kind) for r in _RULES if r.low))


def own_spans(text: str, low: str | None) -> list[tuple[int, int, str]]:
    low = low if low is not None else text.translate(ASCII_LOWER)
    out = []
    for src, rules in zip((text, low), _BY_SOURCE, strict=True):
        for gate, rx, span_of, kind in rules:
            if gate not in src:
                continue
            pos = 0
            while m := rx.search(src, pos):
                span = span_of(m, text)
                if span and span[0] < span[1]:
                    out.append((*span, kind))
                    pos = m.end()
                else:  # a rejected match must not hide one that starts inside it
                    pos = m.start() + 1
    return out
