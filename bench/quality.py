#!/usr/bin/env python3
"""Benchmark the quality of the offline memory on the fixture corpus (issue 9, requirement 6).

Builds a temporary Codex home from tests/fixtures/quality/ (each rollout copied into
`sessions/YYYY/MM/DD/` with an mtime 8 to 12 hours old, `config.toml` with memories on and
the memory version chosen), then runs what a user without a model endpoint gets, through the
facade: `Engine.extract(backend="offline")`, `Engine.consolidate(backend="offline")` and
`Engine.accept`. It scores what was kept against the hand-written gold
(tests/fixtures/quality/gold.json):

  * recall, per shape: gold `must` items found in the session's raw memory, rollout summary
    and summary file (or its title / slug where the item says so), over all `must` items; a
    session whose gold says `memory: false` scores its one item when it left no memory;
  * forbidden: gold `must_not` items found anywhere in what is kept (every raw memory,
    rollout summary, summary file name and text, MEMORY.md, memory_summary.md,
    raw_memories.md), or in the session's own records where the item says `session`.

Targets: recall >= 0.8 for every shape, forbidden 0. A benchmark, not a test: it prints
PASS or FAIL and exits 0 either way (tests/test_quality.py asserts the targets).

    .venv/bin/python bench/quality.py [--version v1|v2|both] [--verbose] [--show ID] [--corpus DIR]
                                      [--backend offline|openai [--base-url URL] [--model M]]

Then the consolidation score (bench/quality_consolidation.py): the memory files read as the
next agent reads them — real preferences / all >= 0.9, every session indexed, tips present,
every file within what Codex injects.

`--verbose` lists, per session, the gold items missed and where each forbidden item was
found. `--show ID` prints one session's raw memory and rollout summary (ID: a corpus file
name or its start, a shape, or a thread id prefix).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memdeck.engine.clock import SystemClock  # the engine's one clock

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "quality"
GOLD = CORPUS / "gold.json"
RECALL_TARGET = 0.8
_SUMMARY_NAME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-[0-9A-Za-z]{4}(?:-(.*))?\.md$")
NO_MEMORY = {"fact": "no raw memory, no rollout summary, no summary file"}


# -- the home ----------------------------------------------------------------------------------

def load_gold(path: Path = GOLD) -> dict[str, Any]:
    gold: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return gold


def corpus_files(corpus: Path = CORPUS) -> list[Path]:
    return sorted(corpus.glob("*.jsonl"))


def thread_meta(path: Path) -> dict[str, Any]:
    """The first line's session_meta payload (every corpus file starts with one)."""
    with path.open(encoding="utf-8") as f:
        first = json.loads(f.readline())
    payload: dict[str, Any] = first["payload"]
    return payload


def build_home(home: Path, version: str, corpus: Path = CORPUS) -> dict[str, Path]:
    """A Codex home holding the corpus as live sessions; returns file name -> rollout path."""
    placed: dict[str, Path] = {}
    now = SystemClock().now()
    for i, src in enumerate(corpus_files(corpus)):
        meta = thread_meta(src)
        start = datetime.fromisoformat(meta["timestamp"].replace("Z", "+00:00"))
        day = home / "sessions" / f"{start:%Y}" / f"{start:%m}" / f"{start:%d}"
        day.mkdir(parents=True, exist_ok=True)
        dest = day / f"rollout-{start:%Y-%m-%dT%H-%M-%S}-{meta['id']}.jsonl"
        shutil.copyfile(src, dest)
        idle = now - 8 * 3600 - i * 600  # idle enough for phase 1, young enough to keep
        os.utime(dest, (idle, idle))
        placed[src.name] = dest
    (home / "config.toml").write_text(
        f'[features]\nmemories = true\n\n[memories]\nversion = "{version}"\n', encoding="utf-8")
    return placed


@contextmanager
def isolated_env(tmp: Path, keep_endpoint: bool = False) -> Iterator[None]:
    """No real key, endpoint or XDG folder of the user's leaks into the run (the endpoint's
    pair stays for `--backend openai`)."""
    saved = dict(os.environ)
    endpoint = () if keep_endpoint else ("OPENAI_API_KEY", "OPENAI_BASE_URL")
    for var in (*endpoint, "CODEX_SQLITE_HOME", "MEMDECK_DEBUG"):
        os.environ.pop(var, None)
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        os.environ[var] = str(tmp / var.lower())
    os.environ["CODEX_HOME"] = str(tmp / "codex-home")
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# -- what was kept -----------------------------------------------------------------------------

@dataclass
class SessionKept:
    file: str
    thread_id: str
    outcome: str = "not extracted"  # the phase-1 outcome memdeck reported
    detail: str = ""
    raw_memory: str = ""
    rollout_summary: str = ""
    slug: str | None = None
    summary_file: str | None = None  # rollout_summaries/<name>.md, after the accept
    summary_text: str = ""
    memory_block: str = ""  # what the shared files say about this session (`_attach_files`)

    @property
    def has_memory(self) -> bool:
        return bool(self.raw_memory.strip() or self.rollout_summary.strip() or self.summary_file)

    @property
    def title(self) -> str:
        for line in self.rollout_summary.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
        m = re.search(r"(?m)^description:\s*(.*)$", self.raw_memory)
        return m.group(1).strip() if m else ""

    @property
    def file_slug(self) -> str:
        if not self.summary_file:
            return ""
        m = _SUMMARY_NAME.match(Path(self.summary_file).name)
        return (m.group(1) or "") if m else ""


@dataclass
class Kept:
    version: str
    sessions: dict[str, SessionKept]
    files: dict[str, str]  # memory-root relative path -> text
    problems: list[str] = field(default_factory=list)
    corpus: Path = CORPUS
    injected_truncated: int = 0  # tokens Codex would cut from memory_summary.md (the preview)
    backend: str = "offline"


def run_corpus(version: str = "v1", corpus: Path = CORPUS, backend: str = "offline",
               settings: dict[str, str] | None = None) -> Kept:
    """Extract, consolidate and accept the corpus in a fresh home; what was kept.
    `backend="openai"` uses the endpoint the environment or `settings` (memdeck.* keys, set
    in the fresh home) configure."""
    from memdeck.engine import Engine

    with tempfile.TemporaryDirectory(prefix="memdeck-quality-") as tmp_name:
        tmp = Path(tmp_name)
        with isolated_env(tmp, keep_endpoint=backend != "offline"):
            home = tmp / "codex-home"
            placed = build_home(home, version, corpus)
            eng = Engine.open(home)
            for key, value in (settings or {}).items():
                eng.config_set(key, value)
            problems: list[str] = []
            by_id = {thread_meta(corpus / name)["id"]: name for name in placed}
            sessions = {name: SessionKept(name, tid) for tid, name in by_id.items()}
            report = eng.extract(backend=backend)
            for r in report.results:
                if r.thread_id in by_id:
                    s = sessions[by_id[r.thread_id]]
                    s.outcome, s.detail = r.outcome, r.detail
            try:
                proposal = eng.consolidate(backend=backend)
                if proposal is not None and proposal.status == "pending":
                    eng.accept(proposal.id)
            except Exception as exc:  # a benchmark reports, it does not stop
                problems.append(f"consolidate/accept: {type(exc).__name__}: {exc}")
            truncated = eng.preview().next_session.truncated_tokens
            for row in eng.memories().rows:
                if row.thread_id in by_id:
                    s = sessions[by_id[row.thread_id]]
                    s.raw_memory, s.rollout_summary = row.raw_memory, row.rollout_summary
                    s.slug = row.rollout_slug
            files = _memory_files(eng.home.memory_root)
    _attach_files(sessions, files)
    return Kept(version, sessions, files, problems, corpus, truncated, backend)


def _memory_files(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if not root.is_dir():
        return out
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and not any(part.startswith(".") for part in rel.parts):
            out[rel.as_posix()] = p.read_text(encoding="utf-8", errors="replace")
    return out


def _attach_files(sessions: dict[str, SessionKept], files: dict[str, str]) -> None:
    """Give each session its summary file and the parts of the shared files that are about
    it: its raw_memories.md block, its MEMORY.md task block with the group lines citing that
    task (`[Task n]`), the memory_summary.md lines carrying its title."""
    by_id = {s.thread_id: s for s in sessions.values()}
    for rel, text in files.items():
        if rel.startswith("rollout_summaries/"):
            m = re.search(r"(?m)^thread_id:\s*(\S+)", text)
            if m and m.group(1) in by_id:
                s = by_id[m.group(1)]
                s.summary_file, s.summary_text = rel, text
    raw_blocks = re.split(r"(?m)^(?=## Thread )", files.get("raw_memories.md", ""))
    groups = re.split(r"(?m)^(?=# Task Group)", files.get("MEMORY.md", ""))
    summary_lines = files.get("memory_summary.md", "").splitlines()
    for s in sessions.values():
        parts = [b for b in raw_blocks if f"`{s.thread_id}`" in b.split("\n", 1)[0]]
        if s.summary_file:
            name = Path(s.summary_file).name
            for group in groups:
                for task in re.split(r"(?m)^(?=## )", group):
                    head = re.match(r"## Task (\d+)\b", task)
                    if name not in task:
                        continue
                    parts.append(task)
                    if head:
                        cite = re.compile(rf"\[Task[^\]]*\b{head.group(1)}\b[^\]]*\]")
                        parts += [ln for ln in group.splitlines() if cite.search(ln)]
        title = s.title[:40]
        for ln in summary_lines:  # v2 names the summary file; v1 only repeats the title
            named = re.search(r"rollout_summaries/[^\s\]);,]+\.md", ln)
            if named:
                if s.summary_file and named.group(0) == s.summary_file:
                    parts.append(ln)
            elif title and title in ln:
                parts.append(ln)
        s.memory_block = "\n".join(parts)


# -- scoring -----------------------------------------------------------------------------------

def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def matches(item: dict[str, Any], text: str) -> bool:
    if "re" in item:
        return re.search(item["re"], text, re.M) is not None
    return _norm(item["text"]) in _norm(text)


def match_line(item: dict[str, Any], text: str) -> str:
    """The line an item was found on, for --verbose."""
    for line in text.splitlines():
        if matches(item, line):
            return line.strip()[:140]
    return "(across lines)"


def _places(s: SessionKept, where: str, kept: Kept) -> list[tuple[str, str]]:
    """(place, text) pairs an item with this `in` is looked for in."""
    if where == "title":
        return [(f"title of {s.file}", s.title)]
    if where == "slug":
        return [(f"slug of {s.file}", f"{s.slug or ''}\n{s.file_slug}")]
    own = [(f"raw memory of {s.file}", s.raw_memory),
           (f"rollout summary of {s.file}", s.rollout_summary)]
    if s.summary_file:
        own.append((s.summary_file, s.summary_text))
    if where == "memory":
        return own
    own.append((f"slug of {s.file}", f"{s.slug or ''}\n{s.file_slug}"))
    if s.memory_block:
        own.append((f"shared files (MEMORY.md, memory_summary.md, raw_memories.md) about "
                    f"{s.file}", s.memory_block))
    if where == "session":
        return own
    everything = []  # "all"
    for other in kept.sessions.values():
        everything += [(f"raw memory of {other.file}", other.raw_memory),
                       (f"rollout summary of {other.file}", other.rollout_summary),
                       (f"slug of {other.file}", f"{other.slug or ''}\n{other.file_slug}")]
    for rel, text in kept.files.items():
        everything += [(rel, text), (f"file name {rel}", rel)]
    return everything


@dataclass
class SessionScore:
    file: str
    shape: str
    found: list[dict[str, Any]]
    missed: list[dict[str, Any]]
    forbidden: list[tuple[dict[str, Any], list[str]]]  # item, where it was found


def score_session(name: str, g: dict[str, Any], kept: Kept) -> SessionScore:
    s = kept.sessions.get(name) or SessionKept(name, "?")
    found: list[dict[str, Any]] = []
    missed: list[dict[str, Any]] = []
    must = g["must"] if g.get("memory", True) else [NO_MEMORY]
    for item in must:
        if item is NO_MEMORY:
            ok = not s.has_memory
        else:
            ok = any(matches(item, text) for _, text in _places(s, item.get("in", "memory"),
                                                               kept))
        (found if ok else missed).append(item)
    forbidden = []
    for item in g["must_not"]:
        hits = [place for place, text in _places(s, item.get("in", "all"), kept)
                if text and matches(item, text)]
        if hits:
            forbidden.append((item, hits))
    return SessionScore(name, g["shape"], found, missed, forbidden)


def score(gold: dict[str, Any], kept: Kept) -> list[SessionScore]:
    return [score_session(name, g, kept) for name, g in gold["sessions"].items()]


@dataclass
class ShapeRow:
    shape: str
    sessions: int
    found: int
    total: int
    forbidden: int

    @property
    def recall(self) -> float:
        return self.found / self.total if self.total else 1.0


def by_shape(scores: list[SessionScore]) -> list[ShapeRow]:
    rows: dict[str, ShapeRow] = {}
    for sc in scores:
        row = rows.setdefault(sc.shape, ShapeRow(sc.shape, 0, 0, 0, 0))
        row.sessions += 1
        row.found += len(sc.found)
        row.total += len(sc.found) + len(sc.missed)
        row.forbidden += len(sc.forbidden)
    return list(rows.values())


def total(rows: list[ShapeRow]) -> ShapeRow:
    return ShapeRow("total", sum(r.sessions for r in rows), sum(r.found for r in rows),
                    sum(r.total for r in rows), sum(r.forbidden for r in rows))


def passes(rows: list[ShapeRow]) -> bool:
    return all(r.recall >= RECALL_TARGET for r in rows) and total(rows).forbidden == 0


# -- report ------------------------------------------------------------------------------------

def print_table(kept: Kept, scores: list[SessionScore], verbose: bool) -> list[ShapeRow]:
    rows = by_shape(scores)
    where = kept.corpus.relative_to(REPO) if kept.corpus.is_relative_to(REPO) else kept.corpus
    print(f"quality of the {kept.backend} memory ({kept.version}): {len(scores)} sessions of "
          f"{where}/")
    for p in kept.problems:
        print(f"  problem: {p}")
    print(f"  {'shape':<22} {'sessions':>8} {'recall':>14} {'forbidden':>10}")
    for r in [*rows, total(rows)]:
        mark = "" if r.shape == "total" or r.recall >= RECALL_TARGET else "  < 0.8"
        print(f"  {r.shape:<22} {r.sessions:>8} {f'{r.found}/{r.total}':>8} {r.recall:5.2f} "
              f"{r.forbidden:>10}{mark}")
    verdict = "PASS" if passes(rows) else "FAIL"
    print(f"  target: recall >= {RECALL_TARGET} for every shape, forbidden 0: {verdict}")
    if verbose:
        for sc in scores:
            s = kept.sessions.get(sc.file)
            outcome = f"{s.outcome}" + (f" ({s.detail})" if s and s.detail else "") if s else "?"
            print(f"\n{sc.file} [{sc.shape}] {len(sc.found)}/{len(sc.found) + len(sc.missed)}"
                  f", phase 1: {outcome}")
            if s and s.title:
                print(f"  title: {s.title}")
            for item in sc.missed:
                print(f"  missed: {item['fact']}  [{item.get('re') or item.get('text')}]"
                      + (f" in {item['in']}" if item.get("in") else ""))
            for item, places in sc.forbidden:
                print(f"  FORBIDDEN: {item['why']}  [{item.get('re') or item.get('text')}]")
                for place in places:
                    text = _place_text(kept, place)
                    print(f"      in {place}: {match_line(item, text)}")
    return rows


def _place_text(kept: Kept, place: str) -> str:
    if place in kept.files:
        return kept.files[place]
    if place.startswith("file name "):
        return place[len("file name "):]
    for s in kept.sessions.values():
        for where in ("session", "title", "slug"):
            for p, text in _places(s, where, kept):
                if p == place:
                    return text
    return ""


def _prefix(kept: Kept) -> str:
    prefix = "quality" if kept.version == "v1" else f"quality.{kept.version}"
    if kept.corpus != CORPUS:  # another corpus (the held-out one): its own figures
        prefix = f"{prefix}.{kept.corpus.name}"
    return prefix


def _load_sibling(name: str) -> Any:
    """A module beside this file (bench/ is not a package)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec and spec.loader
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def print_results(kept: Kept, rows: list[ShapeRow]) -> None:
    prefix = _prefix(kept)
    for r in rows:
        print(f"RESULT {prefix}.{r.shape}.recall={r.recall:.4f}")
        print(f"RESULT {prefix}.{r.shape}.forbidden={r.forbidden}")
    t = total(rows)
    print(f"RESULT {prefix}.recall={t.recall:.4f}")
    print(f"RESULT {prefix}.forbidden={t.forbidden}")
    print(f"RESULT {prefix}.pass={int(passes(rows))}")


def find(kept: Kept, gold: dict[str, Any], key: str) -> list[SessionKept]:
    out = [s for name, s in kept.sessions.items()
           if name == key or name.startswith(key) or s.thread_id.startswith(key)
           or gold["sessions"].get(name, {}).get("shape") == key]
    return sorted(out, key=lambda s: s.file)


def show(kept: Kept, gold: dict[str, Any], key: str) -> None:
    found = find(kept, gold, key)
    if not found:
        print(f"--show {key}: no session of the corpus matches")
    for s in found:
        print(f"\n=== {s.file} (thread {s.thread_id}, memory {kept.version}): phase 1 "
              f"{s.outcome}" + (f" ({s.detail})" if s.detail else ""))
        print(f"--- slug: {s.slug!r}; summary file: {s.summary_file or '(none)'}")
        print("--- raw memory:")
        print(s.raw_memory.rstrip() or "(empty)")
        print("--- rollout summary:")
        print(s.rollout_summary.rstrip() or "(empty)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", choices=("v1", "v2", "both"), default="v1",
                    help="memory version to extract and consolidate (default v1)")
    ap.add_argument("--verbose", action="store_true",
                    help="per session: missed gold items and where forbidden ones were found")
    ap.add_argument("--show", metavar="ID", action="append", default=[],
                    help="print one session's raw memory and summary (repeatable)")
    ap.add_argument("--corpus", metavar="DIR", type=Path, default=CORPUS,
                    help="a corpus folder with its gold.json (default tests/fixtures/quality;"
                         " tests/fixtures/quality_heldout was written without reading the "
                         "extractor)")
    ap.add_argument("--backend", choices=("offline", "openai"), default="offline",
                    help="offline (default), or openai: the endpoint OPENAI_BASE_URL / "
                         "OPENAI_API_KEY or --base-url name, scored on the same gold")
    ap.add_argument("--base-url", help="memdeck.base_url for --backend openai")
    ap.add_argument("--model", help="memdeck.extract_model and memdeck.consolidation_model "
                                    "for --backend openai")
    ap.add_argument("--api-key-env", help="memdeck.api_key_env for --backend openai")
    ap.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                    help="any other memdeck setting for the run (memdeck.input_budget=6000)")
    args = ap.parse_args()
    corpus = args.corpus.resolve()
    gold = load_gold(corpus / "gold.json")
    settings = {f"memdeck.{k}": v for k, v in (("base_url", args.base_url),
                                               ("extract_model", args.model),
                                               ("consolidation_model", args.model),
                                               ("api_key_env", args.api_key_env)) if v}
    settings.update(kv.split("=", 1) for kv in args.set if "=" in kv)
    consolidation = _load_sibling("quality_consolidation")
    for version in (("v1", "v2") if args.version == "both" else (args.version,)):
        kept = run_corpus(version, corpus, args.backend, settings)
        scores = score(gold, kept)
        rows = print_table(kept, scores, args.verbose)
        print_results(kept, rows)
        c = consolidation.score_consolidation(gold, kept)
        consolidation.print_consolidation(c, _prefix(kept), args.verbose)
        for key in args.show:
            show(kept, gold, key)
        print()


if __name__ == "__main__":
    main()
