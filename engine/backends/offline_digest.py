"""What holds across sessions, for the three sections of memory_summary.md that Codex injects
first (issue 25, item 4): `## User preferences` (the standing rules the users set, a rule said
in several sessions folded into one line with all its sources), `## General Tips` (per
project, the check that passed, and the fix it proved) and `## User Profile` (what is true of
the user in at least two sessions: the languages they write in, their platforms, their main
projects and toolchains).

Read from the stage-1 records, V1's raw memories and V2's rollout summaries, as the offline
extractors write them (offline_phase1.py, offline_phase1_v2.py).

Which lines are the merge's own: a preference or tip ends with its sources,
`[rollout_summaries/<file>.md; …]`; a profile line ends with `[from N sessions]`. The merge
rewrites only those: a profile or tip line is rebuilt each time, a preference only gains or
loses sources (its words may have been edited). A line without the marker is a person's and
stays as written.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ..codex.memory_layout import SelectedMemory
from .offline_proof import CHECK_KINDS, PROOF, proves
from .offline_rules import standing_rule
from .offline_statements import project_name

SOURCES = re.compile(r"\s*\[((?:rollout_summaries/[^\]\s;]+\.md)(?:;\s*rollout_summaries/"
                     r"[^\]\s;]+\.md)*)\]\s*$")
PROFILE_MARK = re.compile(r"\s*\[from \d+ sessions?\]\s*$")
MAX_SOURCES = 4  # a folded rule cites at most this many sessions, the newest
_RULES_V2 = re.compile(r"^- (Standing rules the user set|Stated by the user) \(their words\): "
                       r"(.+)$", re.M)
_QUOTED = re.compile(r"\"([^\"]{4,200})\"")
_RULE_V1 = re.compile(r"^- user preference: (.+)$", re.M)
_PASSED = re.compile(r"^- (?:Ran `(?P<a>[^`]+)`: exited with code 0\s*$|Key steps: `(?P<b>[^`]+)` "
                     r"passed \(exit code 0\))", re.M)
_FIXED = re.compile(r"^- (?:Failure and fix|failure): `(?P<cmd>[^`]+)` failed .*?; fixed by "
                    r"changing (?P<files>[^:;]+?)(?::|;)", re.M)
_WORD = re.compile(r"[^\W_]+", re.U)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_RULE_TOOLS = frozenset("uv pip pnpm npm yarn bun clippy ruff black eslint prettier ktlint "
                        "mypy pytest vitest jest rspec make gofmt rustfmt terraform".split())
_TOOLS = {
    "pnpm": "pnpm", "npm": "npm", "yarn": "yarn", "bun": "bun", "npx": "npm", "cargo": "cargo",
    "go": "go", "uv": "uv", "poetry": "poetry", "pytest": "pytest", "dotnet": "dotnet",
    "gradle": "Gradle", "./gradlew": "Gradle", "gradlew": "Gradle", "mvn": "Maven", "mix": "mix",
    "bundle": "Bundler", "bin/rails": "Rails", "rails": "Rails", "php": "PHP", "flutter": "Flutter",
    "terraform": "Terraform", "docker": "Docker", "kubectl": "kubectl", "make": "make",
    "ctest": "CMake", "cmake": "CMake", "swift": "Swift", "deno": "Deno",
}


@dataclass
class Line:
    text: str  # without its sources
    sources: list[str]  # rollout_summaries/<file>.md, oldest first

    def render(self) -> str:
        shown = self.sources[-MAX_SOURCES:]
        return f"- {self.text} [{'; '.join(shown)}]"


def ref(m: SelectedMemory) -> str:
    return f"rollout_summaries/{m.file_stem}.md"


def _record(m: SelectedMemory) -> str:
    return f"{m.raw_memory}\n{m.rollout_summary}"


def rules_of(m: SelectedMemory) -> list[str]:
    """The standing rules one session's record quotes (both versions' extractors; an older
    record's every durable sentence is sorted again)."""
    found = [r.strip() for r in _RULE_V1.findall(m.raw_memory)]
    for _, line in _RULES_V2.findall(m.rollout_summary):
        found += [q.strip().rstrip(";,") for q in _QUOTED.findall(line)]
    return list(dict.fromkeys(f for f in found if f and standing_rule(f)))


def words_of(text: str) -> set[str]:
    """The words a line is compared by: words, and pairs of characters in CJK scripts."""
    text = SOURCES.sub("", PROFILE_MARK.sub("", text)).casefold()
    out = {w for w in _WORD.findall(text) if len(w) > 2 and not _CJK.search(w)}
    cjk = "".join(_CJK.findall(text))
    out |= {cjk[i:i + 2] for i in range(len(cjk) - 1)}
    return out


def code_words(text: str) -> set[str]:
    """The names a rule is about: what it quotes in backticks, and the tools it names."""
    quoted = " ".join(re.findall(r"`([^`]+)`", text)).casefold()
    words = re.findall(r"[\w./=-]+", text.casefold())
    named = {w for w in words if w in _TOOLS or w in _RULE_TOOLS}
    # identifiers: `ferreteria_test`, `DATABASE_URL`, `settings/base.py`, `--no-pub`
    code = {w.strip(".") for w in words if re.search(r"\w[_/=]\w|\w\.\w{1,4}$|^--\w", w)}
    whole = {w for w in re.findall(r"[\w./=-]{2,}", quoted)} | named | code
    # and their parts: `DATABASE_URL=postgres://localhost/app_test` names `app_test` too
    return whole | {p for w in whole for p in re.split(r"[/=:]+", w) if len(p) >= 3}


def similar(a: str, b: str, same_project: bool = False) -> bool:
    """The same rule said twice: most of the shorter one's words are in the other; in one
    project, fewer will do when both name the same tool or command ("uv, nunca pip" and
    "usa `uv run` para todo y nunca `pip install`")."""
    wa, wb = words_of(a), words_of(b)
    if not wa or not wb:
        return False
    overlap = len(wa & wb) / min(len(wa), len(wb))
    if overlap >= 0.75:
        return True
    return same_project and overlap >= 0.3 and bool(code_words(a) & code_words(b))


def rules(selected: list[SelectedMemory]) -> list[Line]:
    """Every standing rule, oldest first, repeated ones folded with all their sources."""
    out: list[Line] = []
    projects: dict[int, str] = {}  # id(line) -> the project it was first said in
    for m in sorted(selected, key=lambda m: (m.source_updated_at, m.thread_id)):
        project = project_name(m.cwd)
        for rule in rules_of(m):
            # a sentence may restate two rules ("uv run, and DATABASE_URL=… for the tests"):
            # it is a source of each
            same = [x for x in out if similar(x.text, rule, projects[id(x)] == project)]
            if not same:
                out.append(Line(rule, [ref(m)]))
                projects[id(out[-1])] = project
            for x in same:
                if ref(m) not in x.sources:
                    x.sources.append(ref(m))
    return out


def tips(selected: list[SelectedMemory], per_project: int = 3) -> list[Line]:
    """Per project, the best check that passed of each kind (tests first), with the fix it
    proved."""
    found: dict[tuple[str, str], Line] = {}
    for m in sorted(selected, key=lambda m: (m.source_updated_at, m.thread_id)):
        record = _record(m)
        fixes = {f.group("cmd"): f.group("files").strip() for f in _FIXED.finditer(record)}
        for hit in _PASSED.finditer(record):
            cmd = " ".join((hit.group("a") or hit.group("b") or "").split())
            kind = proves(cmd)
            if kind >= len(PROOF) or len(cmd) > 160:
                continue
            project = project_name(m.cwd)
            fix = fixes.get(cmd)
            text = (f"{project}: `{cmd}` passes ({CHECK_KINDS[kind]})"
                    + (f", after the fix in {fix}" if fix else ""))
            key = (project, cmd)
            if key in found:
                found[key].text = text if fix else found[key].text
                if ref(m) not in found[key].sources:
                    found[key].sources.append(ref(m))
            else:
                found[key] = Line(text, [ref(m)])
    by_project: dict[str, list[Line]] = {}
    for (project, _cmd), line in found.items():
        by_project.setdefault(project, []).append(line)
    out: list[Line] = []
    for lines in by_project.values():
        # the best check of each kind (tests, build or lint, migration), a fix held first
        lines.sort(key=lambda ln: (proves(ln.text.split("`")[1]), "after the fix" not in ln.text,
                                   -len(ln.sources)))
        kinds: set[int] = set()
        for ln in lines:
            kind = proves(ln.text.split("`")[1])
            if kind not in kinds and len(kinds) < per_project:
                kinds.add(kind)
                out.append(ln)
    return sorted(out, key=lambda ln: ln.sources[-1], reverse=True)  # newest first


# -- the profile --------------------------------------------------------------------------------
_VIET = re.compile(r"[ạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹđ]", re.I)
_LATIN_WORDS = {
    "English": {"the", "and", "to", "is", "in", "for", "with", "it", "this", "on", "of", "we"},
    "German": {"der", "die", "das", "und", "nicht", "ist", "mit", "bitte", "ich", "wir"},
    "Spanish": {"el", "la", "los", "que", "de", "para", "con", "por", "una", "es", "en"},
    "French": {"le", "les", "et", "est", "pour", "avec", "une", "des", "pas", "je"},
}


def language_of(text: str) -> str | None:
    if re.search(r"[\u3040-\u30ff]", text):
        return "Japanese"
    if re.search(r"[\uac00-\ud7af]", text):
        return "Korean"
    if re.search(r"[\u3400-\u9fff]", text):
        return "Chinese"
    if _VIET.search(text):
        return "Vietnamese"
    words = set(re.findall(r"[a-zà-ÿ]+", text.casefold()))
    scores = {lang: len(words & w) for lang, w in _LATIN_WORDS.items()}
    best = max(scores, key=lambda k: scores[k])
    return best if scores[best] else None


def _request(m: SelectedMemory) -> str:
    for line in m.rollout_summary.splitlines():
        if line.startswith("# "):
            return line[2:]
    hit = re.search(r"(?m)^description: (.+)$", m.raw_memory)
    return hit.group(1) if hit else ""


def _platform(cwd: str) -> str | None:
    if re.match(r"^[A-Za-z]:[\\/]", cwd) or cwd.startswith("\\\\"):
        return "Windows"
    if cwd.startswith("/Users/"):
        return "macOS"
    if cwd.startswith(("/home/", "/root", "/srv/", "/opt/", "/var/")):
        return "Linux"
    return None


def _tools(m: SelectedMemory) -> set[str]:
    cmds = re.findall(r"(?m)^- (?:Ran|Key steps: ran|command:|Key steps:) `([^`]+)`", _record(m))
    out = set()
    for cmd in cmds:
        first = cmd.split()[0] if cmd.split() else ""
        name = _TOOLS.get(first) or _TOOLS.get(first.rsplit("/", 1)[-1])
        if name:
            out.add(name)
    return out


def _counted(counts: Counter[str], least: int = 2, most: int = 4) -> str:
    kept = [(k, n) for k, n in counts.most_common() if n >= least][:most]
    return ", ".join(f"{k} ({n})" for k, n in kept)


def profile(selected: list[SelectedMemory]) -> list[str]:
    """Lines about the user that at least two sessions support, each with `[from N sessions]`."""
    n = len(selected)
    if n < 2:
        return []
    out: list[str] = []
    langs = Counter(lang for m in selected if (lang := language_of(_request(m))))
    if langs and max(langs.values()) >= 2:
        out.append(f"Writes to the agent in {_counted(langs, least=1)}")
    platforms = Counter(p for m in selected if (p := _platform(m.cwd or "")))
    if platforms and max(platforms.values()) >= 2:
        out.append(f"Works on {_counted(platforms, least=1, most=3)}")
    projects = Counter(project_name(m.cwd) for m in selected)
    if max(projects.values()) >= 2:
        out.append(f"Works in {len(projects)} projects, most often: {_counted(projects)}")
    tools = Counter(t for m in selected for t in _tools(m))
    if tools and max(tools.values()) >= 2:
        out.append(f"Toolchains used in several sessions: {_counted(tools, most=6)}")
    return [f"- {line} [from {n} sessions]" for line in out]


# -- merging into what the file holds -------------------------------------------------------------
def _sources(line: str) -> list[str] | None:
    hit = SOURCES.search(line)
    return [s.strip() for s in hit.group(1).split(";")] if hit else None


def merge_rules(existing: list[str], computed: list[Line], present: set[str],
                new: set[str]) -> list[str]:
    """`## User preferences` after the merge: a person's line as written; the merge's own
    lines keep their words and cite the sessions that still say them (gone when none does);
    a rule no line says yet is added when a newly consolidated session states it."""
    out: list[str] = []
    used: set[int] = set()
    for line in existing:
        cited = _sources(line)
        text = SOURCES.sub("", line).removeprefix("- ").strip()
        same = [i for i, c in enumerate(computed) if i not in used and similar(c.text, text)]
        used.update(same)
        if cited is None:
            out.append(line)
            continue
        refs = [r for r in cited if r in present]
        refs += [s for i in same for s in computed[i].sources if s in present and s not in refs]
        if refs:
            out.append(Line(text, refs).render())
    out += [c.render() for i, c in enumerate(computed) if i not in used
            and any(s in new for s in c.sources)]
    return out


def merge_generated(existing: list[str], computed: list[str]) -> list[str]:
    """`## General Tips` or `## User Profile` after the merge: a person's lines as written,
    the merge's own (marked with their sources or `[from N sessions]`) rebuilt; a rebuilt line
    a person already says in their words is left out."""
    mine = [x for x in existing if not (SOURCES.search(x) or PROFILE_MARK.search(x))]
    return mine + [c for c in computed if not any(similar(c, x) for x in mine)]


def generated(line: str) -> bool:
    return bool(SOURCES.search(line) or PROFILE_MARK.search(line))


def size(lines: list[str]) -> int:
    return sum(len(x.encode("utf-8")) + 1 for x in lines)


def within(lines: list[str], budget: int) -> list[str]:
    """`lines` within `budget` bytes: the merge's own lines give way, the one said in the
    fewest sessions first, the oldest of those first (lines are in the order they were
    said); a person's lines are never left out."""
    out = list(lines)
    while size(out) > budget:
        mine = [(len(_sources(x) or ()), i) for i, x in enumerate(out) if generated(x)]
        if not mine:
            break
        del out[min(mine)[1]]
    return out
