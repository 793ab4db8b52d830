"""Names for an offline memory: its title and its `rollout_slug` (issue 9, requirement 3).

The title is the user's request in the user's own words and script (`user_words.py`): the
first sentence of the first message that says something, cut at a word (or, in Chinese and
Japanese, a character) near 120 characters. A Chinese request gives a Chinese title.

The slug names the rollout summary file. Codex builds the file name from `rollout_slug` by
turning every character that is not an ASCII letter or digit into `_` and keeping 60
characters (docs/codex-format.md "Rollout summary files", `codex/memory_layout.py`). So:

- a request in a Latin script gives its first six words, diacritics transliterated
  (`Trang danh sách đơn hàng` → `trang_danh_sach_don_hang`; kept as they are, Codex's rule
  would make `trang_danh_s_ch___n_h_ng`);
- a request in another script (Chinese, Japanese, Korean, Cyrillic, …), whose characters would
  all become `_`, gives the project's name, the ASCII terms the request itself uses (`redis`,
  `csv`) and, when those are fewer than two, the first file the session changed or else the
  first command it ran (`mall_h5_login_view`);
- with none of these, no slug (Codex then names the file without one), never a placeholder
  word such as `session`.

Each slug is at most 60 characters of `[a-z0-9_]`, so the stored slug and the one in the file
name are the same.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import PurePosixPath, PureWindowsPath

from ..codex.pasted import PASTED_MARK
from ..codex.user_words import UserWords

SLUG_MAX = 60  # Codex keeps 60 characters of the slug in the file name
SLUG_WORDS = 6
TITLE_MAX = 120

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_END_PUNCT = ".!?;:,。！？；：，、 "
# letters that NFKD does not take apart into an ASCII letter and a mark
_TRANSLIT = str.maketrans({"đ": "d", "Đ": "D", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L",
                           "ß": "ss", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "þ": "th",
                           "Þ": "Th", "ð": "d", "Ð": "D", "ı": "i", "ħ": "h", "ŧ": "t"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_MARKER = re.compile(r"\[REDACTED_[A-Z_]+\]")
_GENERIC_STEMS = frozenset("""
base index main init mod lib app utils util helpers common core settings config conf models
views view types constants schema routes urls test tests spec setup readme changelog package
""".split())


def sentences(text: str) -> list[str]:
    """The sentences of a text, split after `.!?;` and a space, after `。！？；`, and at line
    breaks; fragments of three characters or fewer are left out."""
    return [s.strip() for s in _SENTENCE.split(text)
            if len(s.strip()) > 3 and not PASTED_MARK.fullmatch(s.strip())]


# a greeting, alone in its sentence, in the languages memdeck's users write in
_GREETING = re.compile(
    r"^(hi|hello|hey|hiya|good (morning|afternoon|evening)|hola|buenas( tardes| noches)?|"
    r"buenos d[ií]as|hallo|moin|servus|guten (morgen|tag|abend)|bonjour|salut|ciao|ol[aá]|oi|"
    r"(xin )?chào( bạn| anh| chị| em| cả nhà)?|你好|您好|大家好|嗨|こんにちは|おはようございます|"
    r"お疲れ様です|お疲れさまです|안녕하세요|안녕)([ ,]+[\w.-]+)?[\s.!,，。！~]*$", re.I)


def _substantive(sentence: str) -> bool:
    """More than a greeting or an acknowledgement: two words, or four letters of a script
    written without spaces, and not a greeting ("Hola.", "Chào bạn.", "안녕하세요")."""
    if _GREETING.match(sentence.strip()):
        return False
    return len(sentence.split()) >= 2 or sum(_script(c) == "other" for c in sentence) >= 4


def headline(text: str, limit: int = TITLE_MAX) -> str:
    """A text's first sentence that says something (not a greeting), without its closing
    punctuation, cut near `limit`."""
    found = sentences(text) or [text]
    first = next((s for s in found if _substantive(s)), found[0])
    return cut(first.rstrip(_END_PUNCT), limit)


def title_of(words: Sequence[UserWords]) -> str:
    """The first substantive sentence the user wrote, in their script, at most about 120
    characters; '' when the user wrote nothing."""
    firsts = [next((s for s in found if _substantive(s)), found[0])
              for w in words if w.text and (found := sentences(w.text))]
    if not firsts:
        return ""
    first = next((s for s in firsts if _substantive(s)), firsts[0])
    return cut(first.rstrip(_END_PUNCT), TITLE_MAX)


def cut(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters: cut at a space when there is one in the
    last third, else at a character, with `…`."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    space = head.rfind(" ")
    if space > limit * 2 // 3:
        head = head[:space]
    return head.rstrip(_END_PUNCT) + "…"


def cut_words(text: str, limit: int) -> str:
    """The user's words on one line within `limit` characters, what they pasted left as
    `[pasted: …]` marks: when too long, the start and the end, whole sentences where they
    fit, with ` … ` between: the instruction that follows a paste is usually at the end."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    parts = [" ".join(s.split()) for s in sentences(text)]
    keep = [False] * len(parts)
    room = limit - 3
    for k in [0, *range(len(parts) - 1, 0, -1)]:  # the first sentence, then from the end
        if len(parts[k]) + 1 <= room:
            keep[k] = True
            room -= len(parts[k]) + 1
        elif k:
            break
    if not any(keep):
        return cut(flat, limit)
    out: list[str] = []
    for k, part in enumerate(parts):
        if keep[k]:
            out.append(part)
        elif not out or out[-1] != "…":
            out.append("…")
    return " ".join(out)


def transliterate(text: str) -> str:
    """Latin letters with their diacritics removed (`đơn hàng` → `don hang`); other scripts
    unchanged."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_TRANSLIT))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _script(ch: str) -> str:
    """`latin` for a Latin letter (with or without diacritics), `other` for a letter of any
    other script, `` for anything that is not a letter."""
    if not ch.isalpha():
        return ""
    if ch.isascii():
        return "latin"
    return "latin" if "LATIN" in unicodedata.name(ch, "") else "other"


def is_latin(text: str) -> bool:
    """Whether most of the text's letters are Latin (English, Vietnamese, Polish, …)."""
    scripts = [_script(c) for c in text]
    latin, other = scripts.count("latin"), scripts.count("other")
    return latin > 0 and latin >= 2 * other


def _ascii_words(text: str) -> list[str]:
    text = _MARKER.sub(" ", text)  # `[REDACTED_PHONE]` names nothing
    return re.findall(r"[a-z0-9]+", transliterate(text).lower())


def _name_words(name: str) -> list[str]:
    """Words of a file or project name: `LoginView.vue` → login, view."""
    return _ascii_words(_CAMEL.sub(" ", name))


def _file_words(path: str) -> list[str]:
    """Words of a file's name; its folder's too when the name alone says little
    (`settings/base.py` → settings, base)."""
    p = PureWindowsPath(path) if "\\" in path else PurePosixPath(path)
    words = _name_words(p.stem)
    if p.stem.lower().strip("_") in _GENERIC_STEMS and p.parent.name:
        words = _name_words(p.parent.name) + words
    return words


def _files_words(files: Sequence[str]) -> list[str]:
    """The words of the first changed file with a telling name, else of the first file."""
    for f in files:
        p = PureWindowsPath(f) if "\\" in f else PurePosixPath(f)
        if p.stem.lower().strip("_") not in _GENERIC_STEMS and _file_words(f):
            return _file_words(f)
    return next((_file_words(f) for f in files if _file_words(f)), [])


def _command_words(command: str) -> list[str]:
    """A command's program and subcommand: `go test ./internal/...` → go, test."""
    words = [w for w in command.split() if not w.startswith("-") and "=" not in w]
    head = [PurePosixPath(w).name for w in words[:2] if re.fullmatch(r"[\w./+-]+", w)]
    return _ascii_words(" ".join(head))


def _join(parts: list[str]) -> str:
    slug = ""
    for part in parts:
        nxt = f"{slug}_{part}" if slug else part
        if len(nxt) > SLUG_MAX:
            break
        slug = nxt
    return slug


def rollout_slug(title: str, project: str | None = None, files: Sequence[str] = (),
                 commands: Sequence[str] = ()) -> str | None:
    """The slug for a memory titled `title` (see the module docstring); None when nothing
    names it."""
    words = _ascii_words(title)
    if words and is_latin(title):
        return _join(words[:SLUG_WORDS]) or None
    parts = _name_words(project) if project and project != "unknown" else []
    terms = [w for w in dict.fromkeys(words) if len(w) > 1 and not w.isdigit()][:3]
    parts += [w for w in terms if w not in parts]
    if len(terms) < 2:
        extra = _files_words(files) or next(
            (_command_words(c) for c in commands if _command_words(c)), [])
        parts += [w for w in extra if w not in parts]
    return _join(parts) or None


def fallback_title(project: str, files: Sequence[str] = (), commands: Sequence[str] = ()) -> str:
    """A title for a session in which the user wrote nothing of their own (a shell-command
    record, a template with no argument): what it worked on."""
    if files:
        more = f" and {len(files) - 1} more" if len(files) > 1 else ""
        return f"Changes to {files[0]}{more} in {project}"
    if commands:
        return f"Ran `{cut(commands[0], 80)}` in {project}"
    return f"Work in {project}"



_SPACELESS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                        r"\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]")


def word_count(text: str) -> int:
    """Words in a text, a script written without spaces (Chinese, Japanese, Thai, …) counted
    at two characters a word (`下单接口的单元测试挂了` is about five)."""
    spaceless = len(_SPACELESS.findall(text))
    return len(_SPACELESS.sub(" ", text).split()) + (spaceless + 1) // 2
