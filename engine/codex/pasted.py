"""Pasted material in a user's message: what the user put in as evidence for the task rather
than said (issue 9, requirement 2).

Tracebacks and stack traces, logs and build output, SQL and query plans, diffs, Markdown
tables, CSV, JSON blobs, terminal transcripts, code, quoted text and data records (`Name: …` /
`Phone: …` lines) are set apart from the user's prose by `split_pasted`: the prose is what the
user said (their request, their statements of conventions and rules); a `Pasted` block is
evidence, never a preference, a fact or a command, and is told in one line (`Pasted.describe`)
with no more of its text than the line that matters (a traceback's exception, a log's first
error), personal data removed.

Recognised by shape, line by line: a fenced block (```` ``` ````, `~~~`) is pasted whatever it
holds, except a single short line (an inline command, kept in the prose as `` `…` ``); outside
fences, runs of lines of one shape. A single line is set apart only when its shape is strong
(a timestamped log line, `#6 2.913 npm error …`, a bare `SomeError: …`). Prose with a comma or
a colon in it stays prose.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..personal_data import scrub_personal

KIND_WORDS = {
    "traceback": "a traceback", "log": "a log", "diff": "a diff", "table": "a table",
    "csv": "CSV data", "json": "JSON", "terminal": "terminal output", "code": "code",
    "quote": "quoted text", "data": "a data record", "error": "an error message",
    "blob": "an encoded blob", "text": "a block of text", "sql": "SQL",
    "form": "a filled-in form",
}
GIST = 160
# where a block was taken out of the prose: `[pasted: a traceback]`, on a line of its own
PASTED_MARK = re.compile(r"\[pasted: [^\]\n]{1,40}\]")

_FENCE = re.compile(r"^\s*(?P<f>`{3,}|~{3,})\s*(?P<lang>[\w+#.-]*)")
_TRACE_START = re.compile(r"^\s*(Traceback \(most recent call last\):|Exception in thread |"
                          r"panic: |goroutine \d+ \[|Unhandled exception\.|thread '.+' panicked)")
_FRAME = re.compile(r"^\s+(at |File \"|\.\.\. \d+ more|--- End of)|^\s{2,}\S|^\t|^Caused by:|"
                    r"^During handling of the above|^The above exception")
# a Go panic's other lines: `[signal SIGSEGV: …]`, `goroutine 7 [running]:`, the function
# lines at column 0 (`pkg/path.(*T).Method(0xc000…)`), `created by …`
_GO_FRAME = re.compile(r"^(\[signal |goroutine \d+ \[|created by |"
                       r"[\w.-]+(/[\w.@-]+)*\.(\(\*?[\w.]+\)\.)?[\w.]+\(.*\)$)")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.$]*(Error|Exception|Exit|Interrupt|Warning|Failure)"
                        r"\b(:.*)?$")
_DIFF_START = re.compile(r"^(diff --git |--- a/|\+\+\+ b/|@@ -\d+(,\d+)? \+\d+(,\d+)? @@|"
                         r"Index: \S)")
_DIFF_LINE = re.compile(r"^([ +\-\\]|@@ |diff |index [0-9a-f]|(new|deleted) file mode|"
                        r"similarity index|rename (from|to) |--- |\+\+\+ )|^$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$|^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$")
_PROMPT = re.compile(r"^\s*(\$|PS [A-Za-z]:\\[^>]*>|[A-Za-z]:\\[^>]*>|[\w.-]+@[\w.-]+:\S*[$#%])"
                     r"\s+(?P<cmd>\S.*)$")
_QUOTE = re.compile(r"^\s*>(\s|$)")
_STRONG_LOG = re.compile(
    r"^\s*(\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[?\d\d:\d\d:\d\d[.,\]]|#\d+ (\[|\d+\.\d+ |DONE |"
    r"ERROR|CACHED|transferring |resolve |sha256:|exporting |naming |writing )|"
    r"(npm|yarn|pnpm) (ERR!|error|warn|WARN)\b|[EWIF]\d{4} \d\d:\d\d|"
    r"={5,}.*={5,}$|Step \d+/\d+ : | ---> |"
    r"\[[\w.-]+\] +(ALERT|ALARM|FIRING|RESOLVED|WARN(ING)?|ERROR|CRITICAL|INFO)\b)")
_WEAK_LOG = re.compile(
    r"^\s*(\[?(ERROR|WARN(ING)?|INFO|DEBUG|TRACE|FATAL|CRITICAL)\]?[:\s]|(error|warning)"
    r"(\[\w+\])?: |-->\s+\S+:\d+|\d+ \| |FAILED |PASSED |(FAIL|ok|PASS)\s+\S+\s+[\d.]+s$|"
    r"--- (FAIL|PASS): |make(\[\d+\])?: |[\w./\\-]+\.\w+:\d+(:\d+)?:? |-{4,}$|> \[|"
    r"\s*\^+\s*$|ERROR: |ERR! )")
_CODE = re.compile(
    r"^\s*(def |class |import |from [\w.]+ import |return\b|elif |else:|try:|except\b|"
    r"finally:|with .+:$|if .+:$|for .+:$|while .+:$|@\w+|#include|using |namespace |package |"
    r"public |private |protected |static |const |let |var |function\b|fn |impl |pub |struct |"
    r"enum |interface |type \w+ |func |SELECT |INSERT |UPDATE |DELETE FROM |CREATE |ALTER |"
    r"[}\])]+[;,]?$|<\/?[a-zA-Z][\w.-]*[ >/]|\w+(\.\w+)*\(.*\);?$|\w+ = .+;?$)|[;{]\s*$")
_SQL_START = re.compile(r"^\s*(SELECT\s|WITH\s+\w+\s+AS\s*\(|INSERT\s+INTO\s|"
                        r"UPDATE\s+[\w.\"]+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(UNIQUE\s+)?(TABLE|INDEX|VIEW|MATERIALIZED)\s|"
                        r"ALTER\s+TABLE\s|DROP\s+(TABLE|INDEX)\s|EXPLAIN(\s+ANALY[SZ]E)?\s)", re.I)
_SQL_MORE = re.compile(r"^\s*(FROM|JOIN|LEFT|RIGHT|INNER|OUTER|CROSS|FULL|WHERE|AND|OR|ON|"
                       r"GROUP\s+BY|ORDER\s+BY|LIMIT|OFFSET|HAVING|UNION|VALUES|SET|RETURNING|AS|CASE|WHEN|"
                       r"THEN|ELSE|END|SELECT|WITH|USING|INTO|\(|\))\b|^\s+\S|^\s*\)"
                       r"|,\s*$|^\s*[\w.\"]+\s*,\s*$", re.I)
# what EXPLAIN prints: `Seq Scan on orders  (cost=…)`, `->  Index Scan …`, `Planning Time: …`
_PLAN = re.compile(r"^\s*(->\s+)?(Seq Scan|Index (Only )?Scan|Bitmap (Heap|Index) Scan|"
                   r"Hash( Join)?|Nested Loop|Merge Join|Sort|Aggregate|HashAggregate|Limit|"
                   r"Gather)\b.*\(cost=|"
                   r"^\s*(Planning|Execution) Time: |^\s*QUERY PLAN\s*$|^\s*-{10,}\s*$|"
                   r"^\s*(Filter|Sort Key|Index Cond|Hash Cond|Rows Removed by Filter|Buffers): ")
_KEY_VALUE = re.compile(r"^\s*[-*]?\s*(?P<key>[^\W\d][\w .()/'’-]{0,30}?)\s*[:：=]\s*"
                        r"(?P<value>\S.{0,80})$")
_SENTENCE_END = re.compile(r"[.!?。！？]\s*$")
_PROSE = re.compile(r"^[A-Z][a-z']*(?: [\w'’,;:()-]+){3,}[.!?]$")  # a sentence the user wrote


@dataclass(frozen=True)
class Pasted:
    """A block the user pasted: its kind (`KIND_WORDS`) and its text as pasted."""

    kind: str
    text: str
    lang: str = ""  # a fence's info string (`python`, `text`, …)

    @property
    def lines(self) -> int:
        return len(self.text.splitlines())

    def gist(self) -> str:
        """The one line that matters, personal data removed: a traceback's exception, a
        log's first error, a table's or CSV's columns, a data record's field names (never
        its values)."""
        lines = [ln.strip() for ln in self.text.splitlines() if ln.strip()]
        if not lines:
            return ""
        if self.kind == "traceback":
            line = next((ln for ln in reversed(lines) if _EXCEPTION.match(ln)), lines[-1])
        elif self.kind in ("log", "terminal", "error"):
            line = next((_unprefixed(ln) for ln in lines if _error_word(ln)), "")
        elif self.kind == "table":
            cells = [c.strip(" `*") for c in lines[0].strip("|").split("|")]
            line = "columns: " + ", ".join(c for c in cells if c)
        elif self.kind == "csv":
            sep = "\t" if "\t" in lines[0] else ","
            cells = [c.strip() for c in _fields(lines[0], sep)]
            # a header names its columns; a first row of values (no header pasted) is data,
            # never repeated
            header = all(_HEADER_CELL.fullmatch(c) for c in cells)
            line = ("columns: " + ", ".join(cells)) if header else f"{len(cells)} columns"
        elif self.kind == "data":
            keys = [m.group("key").strip() for ln in lines if (m := _KEY_VALUE.match(ln))]
            line = "fields: " + ", ".join(dict.fromkeys(keys))
        elif self.kind == "form":  # its title and the first line filled in
            heads = [ln.strip("#* :") for ln in lines if _FORM_HEAD.match(ln)]
            filled = [x for ln in lines if (x := re.sub(r"<!--.*?(-->|$)", "", ln).strip())]
            first = next((ln for ln in filled if not _FORM_HEAD.match(ln)
                          and not _FORM_ITEM.match(ln)), "")
            line = f"{heads[0]}: {first}" if heads and first else (heads[0] if heads else "")
        elif self.kind == "sql":  # the tables it reads or writes, never its values
            tables = re.findall(r"(?i)\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+([A-Za-z_][\w.]*)",
                                self.text)
            tables = [t for t in tables if t.upper() not in ("SELECT", "ONLY", "IF", "LATERAL")]
            line = ("tables: " + ", ".join(dict.fromkeys(tables))) if tables else ""
        elif self.kind == "diff":
            files = re.findall(r"^(?:\+\+\+ b/|diff --git a/)(\S+)", self.text, re.M)
            line = "files: " + ", ".join(dict.fromkeys(files)) if files else ""
        elif self.kind == "json":
            line = _json_keys(self.text)
        else:
            line = ""
        line = scrub_personal(" ".join(line.split()))
        return line if len(line) <= GIST else line[: GIST - 1] + "…"

    def describe(self) -> str:
        """`a traceback (13 lines): RuntimeError: …`: what was pasted, in one line."""
        rows = self.lines
        if self.kind in ("table", "csv"):  # the header and a table's rule are not rows
            rows = sum(1 for ln in self.text.splitlines()
                       if ln.strip() and not re.fullmatch(r"[\s|:-]+", ln)) - 1
        what = f"{KIND_WORDS.get(self.kind, 'a block of text')} ({rows} "
        what += ("rows" if self.kind in ("table", "csv") else "lines" if rows != 1 else "line")
        what += ")"
        gist = self.gist()
        return f"{what}: {gist}" if gist else what


def _unprefixed(line: str) -> str:
    """A log line without its step number, timestamp or level tag (`#6 2.913 npm error x` →
    `npm error x`)."""
    line = re.sub(r"^#\d+ (\d+\.\d+ )?", "", line)
    line = re.sub(r"^\[?\d{4}-\d\d-\d\d[ T][\d:.,]+Z?\]?\s*", "", line)
    return line.strip()


def _error_word(line: str) -> bool:
    return re.search(r"(?i)\b(error|failed|failure|fatal|exception|panic|denied|cannot|"
                     r"could not|not found)\b", line) is not None


def _json_keys(text: str) -> str:
    try:
        obj = json.loads(text)
    except ValueError:
        return ""
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        obj = obj[0]
    return "keys: " + ", ".join(list(obj)[:8]) if isinstance(obj, dict) and obj else ""


# -- finding the blocks --------------------------------------------------------------------------

def _fence_end(lines: list[str], i: int, fence: str) -> int:
    """Index of the closing fence line (len(lines) when unclosed)."""
    for j in range(i + 1, len(lines)):
        s = lines[j].strip()
        if s.startswith(fence[0] * len(fence)) and not s.strip(fence[0]):
            return j
    return len(lines)


def _extend(lines: list[str], i: int, more: Callable[[str], bool], gaps: bool = True) -> int:
    """End (exclusive) of the run from `i` of lines `more` accepts; a blank line is inside the
    run when the next non-blank line is accepted too (`gaps`)."""
    j = i + 1
    while j < len(lines):
        if more(lines[j]):
            j += 1
            continue
        if gaps and not lines[j].strip():
            k = j
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k < len(lines) and more(lines[k]) and lines[k].strip():
                j = k
                continue
        break
    return j


def _traceback(lines: list[str], i: int) -> int:
    if not _TRACE_START.match(lines[i]):
        if not (_EXCEPTION.match(lines[i].strip()) and i + 1 < len(lines)
                and re.match(r"^\s+at ", lines[i + 1])):
            return 0
    j = _extend(lines, i, lambda ln: bool(_FRAME.match(ln) or _GO_FRAME.match(ln)))
    if j < len(lines) and _EXCEPTION.match(lines[j].strip()):
        j += 1  # the exception line that ends a Python traceback
    return j


def _diff(lines: list[str], i: int) -> int:
    if not _DIFF_START.match(lines[i]):
        return 0
    j = _extend(lines, i, lambda ln: bool(_DIFF_LINE.match(ln)) and ln != "", gaps=False)
    return j if j - i >= 2 else 0


def _table(lines: list[str], i: int) -> int:
    if not _TABLE.match(lines[i]):
        return 0
    j = _extend(lines, i, lambda ln: bool(_TABLE.match(ln)), gaps=False)
    return j if j - i >= 2 else 0


def _json(lines: list[str], i: int) -> int:
    s = lines[i].strip()
    if not s.startswith(("{", "[")) or s.startswith("[ ]") or re.match(r"^\[[^\]]*\]\(", s):
        return 0
    depth = 0
    for j in range(i, min(len(lines), i + 400)):
        depth += sum(lines[j].count(c) for c in "{[") - sum(lines[j].count(c) for c in "}]")
        if depth <= 0:
            block = "\n".join(lines[i:j + 1])
            try:
                json.loads(block)
            except ValueError:
                keyed = sum(bool(re.search(r'"[\w-]+"\s*:', ln)) for ln in lines[i:j + 1])
                return j + 1 if keyed >= 2 else 0
            return j + 1 if j > i or len(s) >= 20 else 0
    return 0


def _terminal(lines: list[str], i: int) -> int:
    if not _PROMPT.match(lines[i]):
        return 0
    return _extend(lines, i, lambda ln: bool(ln.strip()) and not _PROSE.match(ln), gaps=False)


def _log(lines: list[str], i: int) -> int:
    strong = bool(_STRONG_LOG.match(lines[i]))
    if not strong and not _WEAK_LOG.match(lines[i]):
        return 0

    def more(ln: str) -> bool:
        return bool(_STRONG_LOG.match(ln) or _WEAK_LOG.match(ln) or _FRAME.match(ln))

    j = _extend(lines, i, more)
    return j if strong or j - i >= 2 else 0


_HEADER_CELL = re.compile(r"[A-Za-z_][\w .()/#-]{0,40}")


def _fields(line: str, sep: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=sep))
    except (csv.Error, StopIteration):
        return line.split(sep)


def _csv(lines: list[str], i: int) -> int:
    def shape(ln: str) -> tuple[str, int]:
        sep = "\t" if ln.count("\t") >= 1 else ","
        fields = _fields(ln, sep)  # quote-aware: `"Flat 3, 27 Lindqvist Road"` is one field
        if len(fields) < 3 if sep == "," else len(fields) < 2:
            return sep, 0
        if any(len(f.split()) > 5 for f in ln.split(sep)) or _SENTENCE_END.search(ln):
            return sep, 0
        return sep, len(fields)

    first = shape(lines[i])
    if not first[1]:
        return 0
    j = _extend(lines, i, lambda ln: shape(ln) == first, gaps=False)
    return j if j - i >= 2 else 0


def _data(lines: list[str], i: int) -> int:
    def record(ln: str) -> bool:
        m = _KEY_VALUE.match(ln)
        return (m is not None and not _SENTENCE_END.search(ln) and len(m.group("key").split()) <= 4
                and m.group("key").lower() not in ("http", "https", "note", "ps", "e.g"))

    if not record(lines[i]):
        return 0
    j = _extend(lines, i, record, gaps=False)
    values = [m.group("value") for ln in lines[i:j] if (m := _KEY_VALUE.match(ln))]
    datalike = sum(bool(re.search(r"[\d@+]", v)) or scrub_personal(v) != v for v in values)
    return j if j - i >= 3 and datalike * 2 >= len(values) else 0


def _quote(lines: list[str], i: int) -> int:
    return _extend(lines, i, lambda ln: bool(_QUOTE.match(ln)), gaps=False) if _QUOTE.match(
        lines[i]) else 0


def _code(lines: list[str], i: int) -> int:
    if not _CODE.search(lines[i]) or _SENTENCE_END.search(lines[i].strip()):
        return 0

    def more(ln: str) -> bool:
        return bool(_CODE.search(ln)) or (ln.startswith(("    ", "\t")) and bool(ln.strip()))

    j = _extend(lines, i, more)
    return j if j - i >= 3 else 0


def _sql(lines: list[str], i: int) -> int:
    """A query pasted without a fence: a statement and its clause lines, or a query plan."""
    if _PLAN.match(lines[i]):
        return _extend(lines, i, lambda ln: bool(_PLAN.match(ln) or ln.startswith("  ")
                                                  or re.match(r"^\s*\(\d+ rows?\)", ln)))
    if not _SQL_START.match(lines[i]) or lines[i].rstrip().endswith(":"):
        return 0  # `EXPLAIN ANALYZE says:` introduces a paste, it is not one
    if lines[i].rstrip().endswith(";"):
        return i + 1 if len(lines[i].split()) >= 4 else 0
    j = i + 1
    while j < len(lines) and lines[j].strip() and _SQL_MORE.match(lines[j]):
        j += 1
        if lines[j - 1].rstrip().endswith(";"):
            break
    return j if j - i >= 2 else 0


_FORM_HEAD = re.compile(r"^\s*(#{1,6} \S.*|\*\*[^*\n]{2,60}\*\*:?\s*)$")
_FORM_ITEM = re.compile(r"^\s*([-*+] |\d+[.)] |>|\|)")
_CHECKBOX = re.compile(r"^\s*[-*] \[[ xX]\] ")
_TEMPLATE_HEADS = re.compile(
    r"(?i)describe the bug|steps to reproduce|expected behaviou?r|actual behaviou?r|"
    r"environment|checklist|type of change|how has this been tested|related issues?|"
    r"additional context|screenshots|before you submit|motivation|summary of changes|"
    r"bug report|feature request")


def _form(lines: list[str], i: int) -> int:
    """An issue or pull-request form pasted whole: headed sections (`### Bug report`,
    `**Steps to reproduce**`), with a checklist or a form's usual headings. It runs on
    across blank lines while the next line is a heading, a list item or a quote; the user's
    own sentence after it ends it."""
    if not _FORM_HEAD.match(lines[i]):
        return 0
    j, last = i + 1, i
    while j < len(lines):
        if lines[j].strip():
            last = j
            j += 1
            continue
        k = j
        while k < len(lines) and not lines[k].strip():
            k += 1
        if k < len(lines) and (_FORM_HEAD.match(lines[k]) or _FORM_ITEM.match(lines[k])):
            j = k
            continue
        break
    block = lines[i:last + 1]
    heads = [ln for ln in block if _FORM_HEAD.match(ln)]
    formlike = any(_CHECKBOX.match(ln) for ln in block) or sum(
        bool(_TEMPLATE_HEADS.search(h)) for h in heads) >= 2
    return last + 1 if len(heads) >= 2 and formlike else 0


def _blob(lines: list[str], i: int) -> int:
    """A long run of characters with no space: base64, a minified file, a token dump."""
    s = lines[i].strip()
    return i + 1 if len(s) >= 160 and not re.search(r"\s", s) else 0


_DETECTORS: tuple[tuple[str, Callable[[list[str], int], int]], ...] = (
    ("form", _form), ("traceback", _traceback), ("diff", _diff), ("table", _table), ("json", _json),
    ("terminal", _terminal), ("sql", _sql), ("log", _log), ("csv", _csv), ("code", _code),
    ("data", _data),
    ("quote", _quote), ("blob", _blob),
)


def classify(block: str, lang: str = "") -> str:
    """The kind of a fenced block's text."""
    lines = block.splitlines() or [""]
    for kind, found in _DETECTORS:
        if any(found(lines, i) for i in range(min(len(lines), 3))):
            return kind
    if len(lines) == 1 and _EXCEPTION.match(lines[0].strip()):
        return "error"
    if lang.lower() in ("", "text", "txt", "plain", "console", "shell", "sh", "bash", "log"):
        return "log" if any(_error_word(ln) for ln in lines) else "text"
    return "code"


def _mark(block: Pasted) -> str:
    return f"[pasted: {KIND_WORDS.get(block.kind, 'a block of text')}]"


def split_pasted(text: str) -> tuple[str, list[Pasted]]:
    """(the prose, the pasted blocks in order). The prose keeps its line breaks; a line
    `[pasted: <kind>]` (`PASTED_MARK`) stands where a block was taken out."""
    lines = text.splitlines()
    prose: list[str] = []
    pasted: list[Pasted] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m:
            end = _fence_end(lines, i, m.group("f"))
            body = lines[i + 1:end]
            if len(body) == 1 and len(body[0].strip()) <= 120 and not _EXCEPTION.match(
                    body[0].strip()) and not _STRONG_LOG.match(body[0]):
                prose.append(f"`{body[0].strip()}`")  # a one-line command, fenced
            elif any(ln.strip() for ln in body):
                block = "\n".join(body)
                pasted.append(Pasted(classify(block, m.group("lang")), block, m.group("lang")))
                prose.append(_mark(pasted[-1]))
            i = end + 1
            continue
        for kind, found in _DETECTORS:
            end = found(lines, i)
            if end > i:
                pasted.append(Pasted(kind, "\n".join(lines[i:end]).strip("\n")))
                prose.append(_mark(pasted[-1]))
                i = end
                break
        else:
            stripped = lines[i].strip()
            if stripped and prose and PASTED_MARK.fullmatch(prose[-1]) and i + 1 < len(lines) \
                    and any(found(lines, i + 1) > i + 1 for _, found in _DETECTORS):
                # one line between two pasted blocks, with no break: part of the paste
                last = pasted[-1]
                pasted[-1] = Pasted(last.kind, f"{last.text}\n{lines[i]}", last.lang)
            elif (_EXCEPTION.match(stripped) and ":" in stripped
                  and " " not in stripped.split(":")[0]):
                pasted.append(Pasted("error", stripped))  # a bare `RuntimeError: …` line
                prose.append(_mark(pasted[-1]))
            else:
                prose.append(lines[i])
            i += 1
    out = re.sub(r"\n{3,}", "\n\n", "\n".join(prose)).strip()
    return ("" if not PASTED_MARK.sub("", out).strip() else out), pasted
