#!/usr/bin/env python3
"""Benchmark memdeck's secret redaction against Codex's four patterns alone and detect-secrets.

Over the corpus in tests/data/redaction/:

  * recall: share of secret cases fully removed, i.e. no 8+ character part of a secret value is
    left in the output (parts that also occur outside the secret in the case's text are ignored);
  * detection: share of secret cases where the tool reports anything (what an accept gate uses);
  * false positives: benign lines changed (memdeck, Codex) or flagged (detect-secrets);
  * throughput in MB/s on a 10 MB mix (60% rollout fixture lines, 35% benign lines, 5% secret
    cases, by count), as one string (how phase 1 redacts a serialised rollout), line by line,
    and through `memdeck redact` as a subprocess.

detect-secrets does not redact, so its redaction is emulated by replacing every value it reports
with the marker. It is optional: `pip install detect-secrets` into the venv to include it.
`--scan PATH …` also runs memdeck and Codex over every text file under PATH and reports how
many lines each changes (on source code and docs, nearly every change is a false positive).

Run with the project's venv: `.venv/bin/python bench/redaction.py`. A benchmark, not a test:
the exit code is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memdeck.engine.redact import MARKER, codex_redact, find_secrets, redact  # noqa: E402

_spec = importlib.util.spec_from_file_location("redaction_corpus",
                                               ROOT / "tests" / "data" / "redaction" / "corpus.py")
assert _spec and _spec.loader
corpus = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


# -- detect-secrets, if installed --------------------------------------------------------------

class DetectSecrets:
    def __init__(self) -> None:
        from detect_secrets.__version__ import VERSION
        from detect_secrets.core.secrets_collection import SecretsCollection
        from detect_secrets.settings import default_settings

        self.version = VERSION
        self._collection = SecretsCollection
        self._settings = default_settings
        self._dir = Path(tempfile.mkdtemp(prefix="memdeck-ds-"))

    def findings(self, text: str) -> list[tuple[int, str]]:
        """(line number, reported value) for `text` scanned as a plain text file."""
        path = self._dir / "case.txt"
        path.write_text(text, encoding="utf-8")
        with self._settings():
            coll = self._collection()
            coll.scan_file(str(path))
        return [(s.line_number, s.secret_value or "") for f in coll.files for s in coll[f]]

    def redact(self, text: str) -> str:
        for _, value in self.findings(text):
            if value:
                text = text.replace(value, MARKER)
        return text


# -- measures ----------------------------------------------------------------------------------

def measure_corpus(name: str, redact_fn: Callable[[str], str],
                   detect_fn: Callable[[str], bool], flag_fn: Callable[[str], bool] | None,
                   cases: list, benign: list[str]) -> dict:
    misses = [c.label for c in cases if corpus.leaked(c, redact_fn(c.text))]
    detected = sum(1 for c in cases if detect_fn(c.text))
    if flag_fn is None:
        flagged = [line for line in benign if redact_fn(line) != line]
    else:
        flagged = [line for line in benign if flag_fn(line)]
    return {"name": name, "recall": 1 - len(misses) / len(cases), "misses": misses,
            "detection": detected / len(cases), "fp": len(flagged) / len(benign),
            "fp_lines": flagged}


def build_mix(target: int, seed: int, cases: list, benign: list[str]) -> str:
    rnd = random.Random(seed)
    rollout = [line for f in sorted((ROOT / "tests" / "fixtures" / "rollouts").glob("*.jsonl"))
               for line in f.read_text(encoding="utf-8", errors="replace").splitlines() if line]
    parts, size = [], 0
    while size < target:
        x = rnd.random()
        piece = (rnd.choice(cases).text if x < 0.05 else rnd.choice(benign) if x < 0.40
                 else rnd.choice(rollout))
        parts.append(piece)
        size += len(piece.encode()) + 1
    return "\n".join(parts) + "\n"


def best_of(n: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def scan_tree(paths: list[str]) -> dict:
    exts = {".py", ".md", ".txt", ".json", ".jsonl", ".yml", ".yaml", ".toml", ".cfg", ".ini",
            ".rst", ".sh", ".js", ".ts", ".env"}
    lines = codex_changed = extra = 0
    examples: list[str] = []
    for root in paths:
        for f in Path(root).rglob("*"):
            if f.suffix not in exts or not f.is_file():
                continue
            try:
                text = f.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for line in text.splitlines():
                lines += 1
                c = codex_redact(line)
                codex_changed += c != line
                if redact(line) != c:
                    extra += 1
                    if len(examples) < 12:
                        examples.append(f"{f.name}: {line.strip()[:110]}")
    return {"lines": lines, "codex": codex_changed, "extra": extra, "examples": examples}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=10.0, help="size of the throughput mix (MB)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scan", nargs="*", metavar="PATH", default=[],
                    help="also count lines changed in every text file under PATH")
    args = ap.parse_args(argv)

    cases, benign = corpus.load_secrets(), corpus.load_lines("benign.txt")
    inherited = corpus.load_lines("codex_inherited.txt")
    print(f"corpus: {len(cases)} secret cases ({sum(len(c.secrets) for c in cases)} secret "
          f"values), {len(benign)} benign lines, {len(inherited)} lines Codex alone changes\n")

    try:
        ds: DetectSecrets | None = DetectSecrets()
    except ImportError:
        ds = None

    rows = [
        measure_corpus("memdeck", redact, lambda t: bool(find_secrets(t)), None, cases, benign),
        measure_corpus("codex-only", codex_redact, lambda t: codex_redact(t) != t, None, cases,
                       benign),
    ]
    if ds is not None:
        rows.append(measure_corpus(f"detect-secrets {ds.version}", ds.redact,
                                   lambda t: bool(ds.findings(t)),
                                   lambda t: bool(ds.findings(t)), cases, benign))

    mix = build_mix(int(args.mb * 1_000_000), args.seed, cases, benign)
    mb = len(mix.encode()) / 1e6
    lines = mix.splitlines(keepends=True)
    speed = {
        "memdeck": mb / best_of(2, lambda: redact(mix)),
        "codex-only": mb / best_of(2, lambda: codex_redact(mix)),
    }
    per_line = mb / best_of(1, lambda: [redact(x) for x in lines])
    literal = mb / best_of(1, lambda: corpus.literal_codex(mix))
    with tempfile.NamedTemporaryFile(suffix=".txt", delete=False) as f:
        f.write(mix.encode())
    t = time.perf_counter()
    with open(f.name, "rb") as stdin:
        r = subprocess.run([sys.executable, "-m", "memdeck.tui.cli", "redact"], stdin=stdin,
                           stdout=subprocess.DEVNULL, cwd=ROOT, check=False)
    cli = mb / (time.perf_counter() - t) if r.returncode == 0 else float("nan")
    Path(f.name).unlink()
    if ds is not None:
        sample = mix[:1_000_000]
        speed[rows[-1]["name"]] = (len(sample.encode()) / 1e6) / best_of(
            1, lambda: ds.findings(sample))

    head = f"{'engine':<22} {'recall':>7} {'detect':>7} {'false pos':>10} {'MB/s':>8}"
    print(head)
    print("-" * len(head))
    for row in rows:
        print(f"{row['name']:<22} {row['recall']:>7.1%} {row['detection']:>7.1%} "
              f"{row['fp']:>10.1%} {speed.get(row['name'], float('nan')):>8.1f}")
    print()
    print(f"* memdeck line by line: {per_line:.1f} MB/s; `memdeck redact` (subprocess, "
          f"start-up included): {cli:.1f} MB/s; Codex's patterns as plain re.sub: "
          f"{literal:.1f} MB/s (memdeck's fast path gives the same output)")
    print(f"* throughput mix: {mb:.1f} MB (60% rollout fixture lines, 35% benign, 5% secret "
          "cases); detect-secrets timed on its first 1 MB")
    for row in rows:
        if row["misses"]:
            print(f"* {row['name']} misses ({len(row['misses'])}): "
                  + ", ".join(row["misses"][:40]) + (" …" if len(row["misses"]) > 40 else ""))
        if row["fp_lines"]:
            print(f"* {row['name']} false positives ({len(row['fp_lines'])}): "
                  + " | ".join(x[:60] for x in row["fp_lines"][:8]))
    same = sum(redact(x) == codex_redact(x) != x for x in inherited)
    print(f"* codex_inherited.txt: Codex changes {len(inherited)} non-secret lines; memdeck "
          f"changes the same {same} exactly as Codex does")
    if args.scan:
        s = scan_tree(args.scan)
        print(f"* scan of {s['lines']} lines under {', '.join(args.scan)}: Codex's patterns "
              f"change {s['codex']}, memdeck's own rules {s['extra']} more")
        for e in s["examples"]:
            print(f"    {e}")
    print()
    for row in rows:
        key = row["name"].split()[0]
        print(f"RESULT redaction.{key}.recall={row['recall']:.4f}")
        print(f"RESULT redaction.{key}.detection={row['detection']:.4f}")
        print(f"RESULT redaction.{key}.false_positive_rate={row['fp']:.4f}")
        print(f"RESULT redaction.{key}.mb_per_s={speed.get(row['name'], float('nan')):.1f}")
    print(f"RESULT redaction.memdeck.line_mb_per_s={per_line:.1f}")
    print(f"RESULT redaction.memdeck.cli_mb_per_s={cli:.1f}")
    if args.scan:
        print(f"RESULT redaction.scan.lines={s['lines']}")
        print(f"RESULT redaction.scan.codex_changed={s['codex']}")
        print(f"RESULT redaction.scan.memdeck_extra={s['extra']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
