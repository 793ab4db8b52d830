"""Regenerate engine/codex/schema_0171/*.json from the real Codex binary.

    .venv/bin/python tests/codex_oracle/capture_schema.py [--out DIR]

Runs one `codex exec` on a fresh temp home with `[features] memories = true` (a fresh home is
V2, so Codex creates `state_5.sqlite`, `memories_1.sqlite` — always, by the state runtime — and
`memories_v2_1.sqlite` — only with memories on and the version resolving to v2), then dumps
each database: its pragmas, every `sqlite_master` row in rowid order (the order Codex created
them), every `_sqlx_migrations` row (checksum as hex) and the rows the migrations seed.
engine/codex/schema.py rebuilds databases from these files; tests/test_codex_schema.py
compares the two.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
if __name__ == "__main__":  # run as a script: make `codex_oracle` importable
    sys.path.insert(0, str(HERE.parent.parent))

from codex_oracle.fake_responses import FakeResponses  # noqa: E402
from codex_oracle.runner import codex_version, run_exec, write_config  # noqa: E402

DATABASES = ("state_5.sqlite", "memories_1.sqlite", "memories_v2_1.sqlite")
PRAGMAS = ("auto_vacuum", "journal_mode", "page_size", "user_version", "application_id")
# Rows Codex's migrations leave in a new database (seen as well on a home where no session
# ever ran, after `codex archive <nil uuid>`); every other table starts empty.
SEED_TABLES = ("thread_sections", "consolidation_progress")
DEFAULT_OUT = HERE.parent.parent.parent / "engine" / "codex" / "schema_0171"


def dump_db(path: Path, *, migrations: bool = True) -> dict[str, Any]:
    """Pragmas, sqlite_master rows (rowid order) and `_sqlx_migrations` rows of one DB."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        pragmas = {p: conn.execute(f"PRAGMA {p}").fetchone()[0] for p in PRAGMAS}
        schema = [dict(type=t, name=n, tbl_name=tb, sql=s) for t, n, tb, s in conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid")]
        rows = []
        if migrations and any(o["name"] == "_sqlx_migrations" for o in schema):
            rows = [dict(version=v, description=d, installed_on=i, success=s,
                         checksum=c.hex(), execution_time=e)
                    for v, d, i, s, c, e in conn.execute(
                        "SELECT version, description, installed_on, success, checksum, "
                        "execution_time FROM _sqlx_migrations ORDER BY version")]
        names = {o["name"] for o in schema if o["type"] == "table"}
        seeds = {t: [list(r) for r in conn.execute(f'SELECT * FROM "{t}" ORDER BY rowid')]
                 for t in SEED_TABLES if t in names}
        return {"pragmas": pragmas, "schema": schema, "migrations": rows, "seed_rows": seeds}
    finally:
        conn.close()


def capture(out: Path) -> list[Path]:
    version = codex_version()
    with tempfile.TemporaryDirectory(prefix="memdeck-capture-") as tmp:
        home = Path(tmp) / "home"
        write_config(home, memories=True)
        with FakeResponses() as server:
            rc, _out, err = run_exec(home, server, "create your databases", timeout=120)
        if rc != 0:
            raise SystemExit(f"codex exec failed ({rc}): {err[-2000:]}")
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name in DATABASES:
            db = home / name
            if not db.exists():
                raise SystemExit(f"codex {version} did not create {name}")
            data = {"codex_version": version, "database": name, **dump_db(db)}
            dest = out / (name.removesuffix(".sqlite") + ".json")
            dest.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
            written.append(dest)
        return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    for p in capture(args.out):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
