"""The words the offline note folding compares (offline_notes.py's rules (a) and (b)): a
line or a note made comparable, its words that count, and when two words are the same."""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset("""
a an the and or but of to in on at for with by from as is are was were be been being it its
this that these those my our your their me we you he she they them us i about any all
anything everything some please what which who whom there here do does did so than then
into onto over also just very much more most
""".split())
ABBREVIATIONS = {"db": "database", "dbs": "databases", "env": "environment",
                 "envs": "environments", "dir": "directory", "dirs": "directories",
                 "pw": "password", "pwd": "password", "k8s": "kubernetes",
                 "creds": "credentials", "deps": "dependencies", "docs": "documentation",
                 "pkg": "package", "msg": "message", "repo": "repository",
                 "config": "configuration", "prod": "production", "dev": "development"}
_WORD = re.compile(r"[^\W_]+")
_TAGS = re.compile(r"(\s*\[(?:Task \d+|ad-hoc note|rollout_summaries/[^\]]*)\])+\s*$", re.I)
_MARKS = re.compile(r"[`*\"“”‘’']")
# scripts written without spaces between words: a word there is matched as written
UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def normal(text: str) -> str:
    """Case-folded, Markdown marks and trailing citations dropped, spaces collapsed."""
    text = _TAGS.sub("", text.strip().removeprefix("- "))
    text = _MARKS.sub("", unicodedata.normalize("NFKC", text)).casefold()
    return " ".join(text.split()).rstrip(".;:!")


def words(text: str) -> list[str]:
    """The words of `text` that count for matching (offline_notes.py, rule (b))."""
    found = _WORD.findall(_MARKS.sub("", unicodedata.normalize("NFKC", text)).casefold())
    return [w for w in dict.fromkeys(found) if w not in STOPWORDS
            and (len(w) >= 2 or UNSPACED.search(w))]


def same_word(a: str, b: str) -> bool:
    if a == b or ABBREVIATIONS.get(a) == b or ABBREVIATIONS.get(b) == a:
        return True
    return min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a))
