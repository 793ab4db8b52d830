"""Personal data in text memdeck writes: e-mail addresses, phone numbers, IBANs, payment card
numbers, street addresses, and values labelled as a name, a date of birth or an identity number.

`scrub_personal` replaces each with a marker naming its kind (`[REDACTED_EMAIL]`,
`[REDACTED_PHONE]`, …), the way `redact.py` replaces a secret. The offline phase-1 backends run
everything they keep through it (raw memory, rollout summary, slug): a memory is read by later
sessions and shared files, and the user's pasted test data is no reason to keep a person's
phone number (issue 9, requirement 2).

Recognised by shape, with checks that keep code and logs alone: a phone number needs a leading
`+` and 8 to 15 digits, a `(555) 123-4567` shape, grouped digits of a national shape
(`138 0013 8000`, `010-1234-5678`, `555-123-4567`, `07700 900461`), or a phone label before it
(`Phone:`, `电话`, `전화`, …); dates, versions, IP addresses, durations and sizes do not have
those shapes. IBANs pass the ISO 13616 mod-97 check and card numbers the Luhn check. An
e-mail address is `local@domain.tld`, except `git@host` and `user@host:path` (SSH remotes)
and a URL's user part. A name is only recognised after a label (`Name: Aoife Brennan`).
Stdlib only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PersonalFinding", "find_personal", "scrub_personal"]


@dataclass(frozen=True, slots=True)
class PersonalFinding:
    kind: str  # email | phone | iban | card | address | name | birth_date | id_number
    start: int
    end: int


MARKERS = {
    "email": "[REDACTED_EMAIL]", "phone": "[REDACTED_PHONE]", "iban": "[REDACTED_IBAN]",
    "card": "[REDACTED_CARD]", "address": "[REDACTED_ADDRESS]", "name": "[REDACTED_NAME]",
    "birth_date": "[REDACTED_BIRTH_DATE]", "id_number": "[REDACTED_ID]",
}

_EMAIL = re.compile(
    r"(?<![\w.+%-])(?P<local>[A-Za-z0-9][\w.+%-]*)@(?P<domain>[A-Za-z0-9](?:[A-Za-z0-9-]*"
    r"[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24})(?![\w-])")
_SSH_PATH = re.compile(r":[\w~./-]")

_SEP = r"[ .\-\u00a0]"
_PHONE_SHAPES = (
    # +44 7700 900461, +82 10-1234-5678, +1 (555) 123-4567, +8613800138000
    re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .\-\u00a0]?\(?\d{1,5}\)?){1,5}(?![\w])"),
    # (555) 123-4567
    re.compile(r"(?<![\w)])\(\d{2,4}\)[ .\-\u00a0]?\d{3,5}[ .\-\u00a0]\d{4}(?![\w])"),
    # 555-123-4567, 138 0013 8000, 010-1234-5678, 020 7946 0958
    re.compile(rf"(?<![\w.+\-/:])\d{{2,4}}(?P<s>{_SEP})\d{{3,4}}(?P=s)\d{{4}}(?![\w.\-/:])"),
    # 0912 345 678 (VN), 06 12 34 56 78 (FR), 07700 900461 (UK)
    re.compile(rf"(?<![\w.+\-/:])0\d{{2,3}}(?P<s>{_SEP})\d{{3}}(?P=s)\d{{3}}(?![\w.\-/:])"),
    re.compile(r"(?<![\w.+\-/:])0\d(?P<s>[ .])\d\d(?P=s)\d\d(?P=s)\d\d(?P=s)\d\d(?![\w.\-/:])"),
    re.compile(r"(?<![\w.+\-/:])0\d{4} \d{6}(?![\w.\-/:])"),
    # 98765 43210, 098765 43210 (IN mobiles: 6-9 first)
    re.compile(r"(?<![\w.+\-/:])0?[6-9]\d{4} \d{5}(?![\w.\-/:])"),
    # 0151 2345 6789 (DE mobiles: 015x, 016x, 017x)
    re.compile(r"(?<![\w.+\-/:])01[5-7]\d(?P<s>[ \-])\d{3,4}(?P=s)\d{4}(?![\w.\-/:])"),
)
_PHONE_DIGITS = ((8, 15), (10, 11), (10, 11), (10, 11), (10, 10), (11, 11), (10, 11), (11, 12))
_PHONE_LABEL = re.compile(
    # ("handy", "portable" and "dt" are English words and a variable name: their numbers are
    # caught by shape, not after the word)
    r"(?i)(?:\b(?:phone|telephone|tel|mobile|mob|cell|fax|whatsapp|téléphone|telefon|"
    r"tel[eé]fono|telefone|celular|m[oó]vil|телефон|тел|sđt|sdt|đt|"
    r"số điện thoại|so dien thoai|điện thoại|dien thoai)\b(?!\.\w)\.?|手机号?码?|电话|電話|"
    r"携帯|휴대폰|핸드폰|전화(?:번호)?)[^\d\n+]{0,12}(?<![A-Za-z])"
    r"(?P<num>\+?\d[\d ()./\-\u00a0]{5,20}\d)")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?"
                   r"(?![A-Za-z0-9])")
_CARD = re.compile(r"(?<![\w.\-])(?:\d{4}(?P<s>[ \-])\d{4}(?P=s)\d{4}(?P=s)\d{1,7}|"
                   r"\d{4}(?P<t>[ \-])\d{6}(?P=t)\d{5}|[3-6]\d{14,15})(?![\w.\-])")
_STREET_WORDS = (r"Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Boulevard|Blvd|Drive|Dr|Court|Ct|"
                 r"Way|Place|Pl|Terrace|Crescent|Square|Sq|Highway|Hwy|Close|Row|Parkway")
_ADDRESSES = (
    re.compile(rf"\b\d{{1,5}}[A-Za-z]?,? (?:[A-Z][\w'’.\-]*\.? ){{1,4}}(?:{_STREET_WORDS})\b\.?"),
    re.compile(r"\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|gasse|weg|allee|platz|ring|damm)"
               r" \d{1,4}[a-z]?\b"),
    re.compile(r"\b\d{1,4}(?:bis|ter)?,? (?i:rue|avenue|boulevard|chemin|impasse|quai|allée)"
               r" (?:d[eu']\s?|de la |des )?[A-ZÉ][\w'’\-]*(?: [A-ZÉ][\w'’\-]*){0,3}"),
    re.compile(r"\b(?:Calle|Avenida|Carrer|Rua|Via|Viale|Piazza|Corso)(?: (?:de|del|da|do|"
               r"della|di) )?(?: ?[A-ZÁÉÍÓÚ][\w'’\-]*){1,4},? \d{1,4}\b"),
)
_DATE = r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|\d{4}年\d{1,2}月\d{1,2}日"
_BIRTH = re.compile(
    r"(?i)(?:\bdate of birth\b|\bbirth ?date\b|\bbirthday\b|\bd\.?o\.?b\b\.?|\bborn(?: on)?\b|"
    r"生年月日|出生日期|生日|생년월일|ngày sinh)[^\d\n]{0,6}(?P<date>" + _DATE + ")")
_NAME = re.compile(
    r"(?im)(?:\b(?:full name|first name|last name|surname|name|patient|customer|contact)\b|"
    r"姓名|名前|氏名|이름|성명|họ tên|họ và tên)[ \t]*[:：=][ \t]*"
    r"(?P<name>[A-Z][a-z'’\-]+(?: [A-Z][a-z'’\-]+){1,3}|[\u4e00-\u9fff]{2,4}|"
    r"[\uac00-\ud7a3]{2,4}|"
    r"[\u3040-\u30ff\u4e00-\u9fff]{2,6}(?: [\u3040-\u30ff\u4e00-\u9fff]{1,6})?)"
    r"[ \t]*$")
# a person named with an honorific, in running text: "chị Trần Thị Mai", "Mrs Dana Whitfield",
# "田中さん", "김민수 님"; the honorific stays, the name goes
_UPPER_WORD = r"[A-ZÀ-ÖØ-ÞĐƠƯẠ-Ỹ][a-zà-öø-ÿđơưạ-ỹ'’\-]+"
_HONORIFIC_NAME = (
    re.compile(r"(?<![\w])(?:(?i:anh|chị|em|ông|bà|cô|chú|bác)|Mr\.?|Mrs\.?|Ms\.?|Miss|Dr\.?|Sr\.|"
               r"Sra\.|Srta\.|don|doña|Herr|Frau|Mme\.?|Mlle\.?)[ \t]+"
               rf"(?P<name>{_UPPER_WORD}(?:[ \t]+{_UPPER_WORD}){{0,3}})"),
    re.compile(r"(?P<name>[\u4e00-\u9fff]{2,4}|[\u30a0-\u30ff]{2,8})(?:さん|様|氏|先生|女士|小姐)"),
    re.compile(r"(?<![\uac00-\ud7a3])(?!(?:고객|선생|사장|부장|팀장|과장|대표|회원|관리자|사용자|"
               r"여러분|아저|아가)[ \t]?[님씨])(?P<name>[\uac00-\ud7a3]{2,3})[ \t]?(?:님|씨)"),
)
_ID_NUMBERS = (
    re.compile(r"(?<![\w\-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w\-])"),  # SSN
    re.compile(r"(?<![\w\-])\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-[1-8]\d{6}(?![\w\-])"),
)


def _digits(s: str) -> int:
    return sum(c.isdigit() for c in s)


def _email_spans(text: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _EMAIL.finditer(text):
        if m.group("local").lower() == "git" or _SSH_PATH.match(text, m.end()):
            continue  # git@github.com:org/repo, deploy@host.example.com:/srv
        if text[max(0, m.start() - 3):m.start()] == "://":
            continue  # https://user@host.example.com/: a URL's user part
        out.append(("email", m.start(), m.end()))
    return out


def _phone_spans(text: str) -> list[tuple[str, int, int]]:
    out = []
    for rx, (low, high) in zip(_PHONE_SHAPES, _PHONE_DIGITS, strict=True):
        for m in rx.finditer(text):
            if low <= _digits(m.group()) <= high:
                out.append(("phone", m.start(), m.end()))
    for m in _PHONE_LABEL.finditer(text):
        if 7 <= _digits(m.group("num")) <= 15:
            out.append(("phone", m.start("num"), m.end("num")))
    return out


def _iban_ok(s: str) -> bool:
    s = s.replace(" ", "")
    if not 15 <= len(s) <= 34:
        return False
    moved = s[4:] + s[:4]
    try:
        return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1
    except ValueError:
        return False


def _luhn_ok(s: str) -> bool:
    digits = [int(c) for c in s if c.isdigit()]
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def find_personal(text: str) -> list[PersonalFinding]:
    """Every piece of personal data in `text`, in order, overlaps merged (the first kind found
    at a place wins)."""
    spans = _email_spans(text)
    if any(c.isdigit() for c in text):
        spans += [("iban", m.start(), m.end()) for m in _IBAN.finditer(text)
                  if _iban_ok(m.group())]
        spans += [("card", m.start(), m.end()) for m in _CARD.finditer(text)
                  if _luhn_ok(m.group())]
        spans += _phone_spans(text)
        spans += [("address", m.start(), m.end()) for rx in _ADDRESSES for m in rx.finditer(text)]
        spans += [("birth_date", m.start("date"), m.end("date")) for m in _BIRTH.finditer(text)]
        spans += [("id_number", m.start(), m.end()) for rx in _ID_NUMBERS
                  for m in rx.finditer(text)]
    spans += [("name", m.start("name"), m.end("name")) for m in _NAME.finditer(text)]
    spans += [("name", m.start("name"), m.end("name")) for n, rx in enumerate(_HONORIFIC_NAME)
              for m in rx.finditer(text)  # Latin names: every word capitalised
              if n or all(w[0].isupper() for w in m.group("name").split())]
    spans.sort(key=lambda s: (s[1], -s[2]))
    merged: list[PersonalFinding] = []
    for kind, start, end in spans:
        if merged and start < merged[-1].end:
            last = merged[-1]
            merged[-1] = PersonalFinding(last.kind, last.start, max(last.end, end))
        else:
            merged.append(PersonalFinding(kind, start, end))
    return merged


def scrub_personal(text: str) -> str:
    """`text` with each piece of personal data replaced by its kind's marker."""
    if not text:
        return text
    found = find_personal(text)
    if not found:
        return text
    out, at = [], 0
    for f in found:
        out += [text[at:f.start], MARKERS[f.kind]]
        at = f.end
    out.append(text[at:])
    return "".join(out)
