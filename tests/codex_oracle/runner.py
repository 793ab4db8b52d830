"""Run the real Codex binary (0.171.0) on a Codex home against `fake_responses.FakeResponses`.

Finding the binary: `$MEMDECK_CODEX_BIN`, else `~/.cache/memdeck-codex/node_modules/.bin/codex`
(where `.ci/run` installs it; `${XDG_CACHE_HOME}` is honoured like `.ci/run` does), else `codex`
on PATH when its `--version` says 0.171.0. `require_codex()` (or the `codex_bin` fixture)
skips with one line when it is missing, and FAILS instead when `CI` is set: the oracle tests
must run in CI.

    bin = require_codex()
    with FakeResponses() as server:
        r = run_exec(home, server, "say hi")      # r.returncode, r.stdout, r.stderr (a tuple)
        tui = run_tui(home, server, ["first turn", "second turn"])   # tmux; screens, stderr

Both run Codex with CODEX_HOME=home, HOME=<home>/../codex-user-home (created; nothing of the
user's real ~ is read), cwd <home>/../codex-work, FAKE_KEY set, RUST_LOG=warn (Codex reports
database failures at WARN), the custom provider `fake` and `OFFLINE_CONFIG` (no plugin sync
to github.com) given with `-c` flags (no config.toml edit needed), stdin closed, a timeout,
and the process group killed on timeout. `extra_config={"memories.version": "v2"}` adds -c
overrides. For finer TUI control use `codex_oracle.tui.TuiSession` (`wait_ready`, `turn`,
`screen()`, `quit()`, `close()`); `run_tui` is that in one call. Both TUI paths end with
`codex app-server daemon stop` and a SIGKILL, by pid, of any process whose environment has
this CODEX_HOME.

## Making Codex run its own memory pipeline (measured on 0.171.0)

    write_config(home, memories=False)                 # the session itself: no pipeline
    run_tui(home, server, ["remember that I like tabs"])   # an interactive thread (source cli)
    write_config(home, memories=True, min_rollout_idle_hours=0)   # version: v2 on a fresh home
    age_rollouts(home, 2)                               # idle for 2 h
    server = FakeResponses(phase2_files=valid_phase2_files(memory_version(home)))
    run_exec(home, server, "next", keep_open=5, until=pipeline_finished(home))
    jobs(home)                                          # phase 1 + phase 2 `done`

What that rests on:
- Codex runs its pipeline at the START of every root session (`codex exec` or the TUI), in
  parallel with the first turn: phase-1 request at ~+0.3 s, phase 2 at ~+0.4 s. When the
  session ends first (a plain `codex exec` ends at once) the jobs are cut off (the global job
  stays `running`): keep the first turn open with `keep_open=` seconds (3 s is plenty).
- Phase 1 claims only threads of source `cli`/`vscode` (the TUI in tmux writes `cli` here;
  `exec` threads never), not the current one, with `memory_mode = 'enabled'`, idle at least
  `min_rollout_idle_hours` (0 behaves as 1 hour; 0.5 h old is not claimed, 2 h is). Idle is
  judged from the thread row's `updated_at`/`updated_at_ms` in state_5.sqlite, NOT the file
  mtime (aging only the mtime claims nothing once the thread is indexed; Codex copies the
  mtime into the row only when it indexes a rollout it has not seen). `age_rollouts` sets
  both. At most `memories.max_rollouts_per_startup` (default 2, counting stage-1 jobs already
  `running`) claims per start.
- Phase 2 runs after phase 1 (even with zero stage-1 rows). Its agent works in the memory
  root; a plain final message ends it, and Codex then validates the root: without a valid
  `memory_summary.md` (V2: `v1` + the four headings; V1: also `MEMORY.md`) the job ends
  `error` / `failed_invalid_artifacts`. `FakeResponses.phase2_files` makes the agent write
  files first (`exec` tool → `tools.apply_patch`), so a fresh root ends `done`.
Which DB/root: see `memory_version()` below and docs/codex-format.md "Memory versions".
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from .fake_responses import FakeResponses

# The Codex the oracle proves memdeck against: the pinned release, or another one named by
# MEMDECK_CODEX_VERSION (bench/codex_drift.py runs the oracle on `latest` that way).
PINNED_CODEX = "0.171.0"
CODEX_VERSION = os.environ.get("MEMDECK_CODEX_VERSION", "").strip() or PINNED_CODEX
INSTALL_HINT = (f"codex {CODEX_VERSION} not installed: run .ci/run, or "
                f"npm install --prefix ~/.cache/memdeck-codex @openai/codex@{CODEX_VERSION}, "
                "or set MEMDECK_CODEX_BIN")


def _cache_bin() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "memdeck-codex" / "node_modules" / ".bin" / "codex"


def codex_version(binary: str | Path | None = None) -> str | None:
    """"0.171.0" for `codex-cli 0.171.0`; None when it cannot be run."""
    b = binary or find_codex()
    if b is None:
        return None
    try:
        out = subprocess.run([str(b), "--version"], capture_output=True, text=True,
                             timeout=20, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    parts = out.strip().split()
    return parts[-1] if parts else None


def find_codex() -> Path | None:
    env = os.environ.get("MEMDECK_CODEX_BIN")
    if env:
        return Path(env) if Path(env).exists() else None
    # the test suite's autouse fixture moves XDG_CACHE_HOME into tmp: look at the real one too
    for p in (_cache_bin(), Path.home() / ".cache" / "memdeck-codex" / "node_modules" / ".bin"
              / "codex"):
        if p.exists():
            return p
    on_path = shutil.which("codex")
    if on_path and codex_version(on_path) == CODEX_VERSION:
        return Path(on_path)
    return None


_checked: dict[str, Path | None] = {}


def require_codex() -> Path:
    """The binary; else pytest.skip (one line) locally, pytest.fail in CI (CI set)."""
    if "bin" not in _checked:
        b = find_codex()
        _checked["bin"] = b if b is not None and codex_version(b) == CODEX_VERSION else None
    b = _checked["bin"]
    if b is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{INSTALL_HINT} (CI is set: the oracle tests must not skip)",
                        pytrace=False)
        pytest.skip(INSTALL_HINT)
    return b


@pytest.fixture
def codex_bin() -> Path:
    return require_codex()


# -- configuration ---------------------------------------------------------------------------

def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}={toml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML for {v!r}")


# Without these Codex 0.171 tries github.com at every start (curated plugin sync: three WARN
# lines "failed to sync curated plugins repo"); tests never contact the internet.
OFFLINE_CONFIG = ("features.plugins=false", "features.remote_plugin=false",
                  "features.apps=false", "analytics.enabled=false",
                  "check_for_update_on_startup=false")


def provider_flags(server: FakeResponses, *, model: str | None = None) -> list[str]:
    """`-c` flags that make Codex use the fake server as provider `fake` (env key FAKE_KEY)."""
    prov = {"name": "fake", "base_url": server.base_url, "wire_api": "responses",
            "env_key": "FAKE_KEY"}
    flags = ["-c", 'model_provider="fake"', "-c", f"model_providers.fake={toml_value(prov)}"]
    if model:
        flags += ["-c", f"model={toml_value(model)}"]
    return flags + config_flags(OFFLINE_CONFIG)


def config_flags(extra_config: Mapping[str, Any] | Iterable[str] = ()) -> list[str]:
    """`{"memories.version": "v2"}` or `["memories.version=\"v2\""]` → `-c` flags."""
    items = ([f"{k}={toml_value(v)}" for k, v in extra_config.items()]
             if isinstance(extra_config, Mapping) else list(extra_config))
    return [a for kv in items for a in ("-c", kv)]


def write_config(home: Path, *, memories: bool | None = True, version: str | None = None,
                 min_rollout_idle_hours: float | None = None, extra: str = "",
                 **memories_keys: Any) -> Path:
    """`<home>/config.toml` with `[features] memories` and `[memories]` keys (overwritten).

    `version` → `memories.version`; `min_rollout_idle_hours` and any `**memories_keys`
    (e.g. `generate_memories=True`, `use_memories=False`) go under `[memories]`; `extra` is
    appended verbatim.
    """
    home.mkdir(parents=True, exist_ok=True)
    lines = []
    if memories is not None:
        lines += ["[features]", f"memories = {toml_value(memories)}", ""]
    keys = dict(memories_keys)
    if version is not None:
        keys["version"] = version
    if min_rollout_idle_hours is not None:
        keys["min_rollout_idle_hours"] = min_rollout_idle_hours
    if keys:
        lines.append("[memories]")
        lines += [f"{k} = {toml_value(v)}" for k, v in keys.items()]
        lines.append("")
    p = home / "config.toml"
    p.write_text("\n".join(lines) + (extra if extra else ""), encoding="utf-8")
    return p


def memory_version(home: Path) -> str:
    """The version Codex 0.171 uses: `[memories] version` of `<home>/config.toml`, else v1
    iff `<home>/memories` exists (any kind of file), else v2. (`-c` overrides not seen.)"""
    try:
        cfg = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
        version = (cfg.get("memories") or {}).get("version")
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        version = None
    if version in ("v1", "v2"):
        return version
    return "v1" if os.path.lexists(home / "memories") else "v2"


def memories_db(home: Path, version: str | None = None) -> Path:
    v = version or memory_version(home)
    return home / ("memories_1.sqlite" if v == "v1" else "memories_v2_1.sqlite")


def age_rollouts(home: Path, hours: float) -> list[Path]:
    """Set every rollout's mtime (and thread rows' updated_at, if any) `hours` into the past."""
    t = time.time() - hours * 3600
    paths = sorted((home / "sessions").rglob("rollout-*.jsonl*")) \
        if (home / "sessions").exists() else []
    for p in paths:
        os.utime(p, (t, t))
    state = home / "state_5.sqlite"
    if state.exists():
        conn = sqlite3.connect(state, timeout=10)
        try:
            cols = {r[1] for r in conn.execute("PRAGMA table_info(threads)")}
            sets = ["updated_at = ?"]
            args: list[Any] = [int(t)]
            if "updated_at_ms" in cols:
                sets.append("updated_at_ms = ?")
                args.append(int(t * 1000))
            conn.execute(f"UPDATE threads SET {', '.join(sets)}", args)
            conn.commit()
        finally:
            conn.close()
    return paths


def jobs(home: Path, version: str | None = None) -> list[dict[str, Any]]:
    """The memories DB's `jobs` rows as dicts ([] when there is no DB yet)."""
    db = memories_db(home, version)
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM jobs ORDER BY kind, job_key")]
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def pipeline_finished(home: Path, version: str | None = None,
                      since: float | None = None) -> Callable[[], bool]:
    """A predicate: Codex's global phase-2 job has ended (`done`/`error`) since `since`
    (default: now) — for `run_exec(..., until=...)` / `FakeResponses.release_when`."""
    t0 = int(time.time() if since is None else since)

    def finished() -> bool:
        return any(j["kind"] == "memory_consolidate_global" and j["status"] in ("done", "error")
                   and (j["finished_at"] or 0) >= t0 for j in jobs(home, version))
    return finished


def wait_for_job(home: Path, kind: str, statuses: Sequence[str] = ("done",),
                 timeout: float = 20.0, version: str | None = None) -> dict[str, Any] | None:
    deadline = time.monotonic() + timeout
    while True:
        for j in jobs(home, version):
            if j["kind"] == kind and j["status"] in statuses:
                return j
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


# -- running ---------------------------------------------------------------------------------

# What Codex 0.171 logs (at WARN) when it cannot use a state or memories DB; its state runtime
# is then off. Not matched: `codex_rollout::list: state db discrepancy during
# find_thread_path_by_id_str_in_subdir: falling_back`, which Codex prints on every start with
# memories on, on homes it built itself too.
DB_FAILURE = re.compile(r"failed to (open|migrate|initialize) (state|memories)|state runtime|"
                        r"state db unavailable|previously applied|codex_state::", re.I)


def db_failures(stderr: str) -> list[str]:
    """The stderr lines saying Codex could not use one of the home's databases."""
    return [line for line in stderr.splitlines() if DB_FAILURE.search(line)]


class ExecResult(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def codex_env(home: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    user_home = home.parent / "codex-user-home"
    user_home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "CODEX_", "TMUX")) and k != "RUST_LOG"}
    # RUST_LOG=warn: Codex prints only ERROR by default; the state-DB / memories-DB failures
    # tests look for ("failed to open state db …") are WARN lines.
    env.update(CODEX_HOME=str(home), HOME=str(user_home), FAKE_KEY="fake-key",
               NO_COLOR="1", RUST_LOG="warn")
    env.update(extra_env or {})
    return env


def run_exec(home: Path, server: FakeResponses, prompt: str, *,
             extra_config: Mapping[str, Any] | Iterable[str] = (),
             extra_args: Sequence[str] = (), cwd: Path | None = None, timeout: float = 60.0,
             keep_open: float | None = None, until: Callable[[], bool] | None = None,
             model: str | None = None, env: Mapping[str, str] | None = None) -> ExecResult:
    """`codex exec --skip-git-repo-check <provider -c flags> <extra -c> <extra_args> prompt`.

    `keep_open` sets `server.first_turn_delay` (the default reply to the first turn waits that
    long, so Codex's phase 1/2 has time to run), or less: until `until()` is true (e.g.
    `pipeline_finished(home)`). `cwd` defaults to `<home>/../codex-work`.
    """
    binary = require_codex()
    home.mkdir(parents=True, exist_ok=True)
    work = cwd or home.parent / "codex-work"
    work.mkdir(parents=True, exist_ok=True)
    if keep_open is not None:
        server.first_turn_delay = keep_open
    if until is not None:
        server.release_when = until
    cmd = [str(binary), "exec", "--skip-git-repo-check", *provider_flags(server, model=model),
           *config_flags(extra_config), *extra_args, prompt]
    proc = subprocess.Popen(cmd, cwd=work, env=codex_env(home, env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        out, err = proc.communicate(timeout=10)
        raise AssertionError(f"codex exec did not finish in {timeout:g}s; stderr tail:\n"
                             f"{err[-2000:]}") from None
    finally:
        _kill_group(proc.pid)  # helpers it may have left in its group
    return ExecResult(proc.returncode, out, err)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def stop_app_server_daemon(home: Path, timeout: float = 20.0) -> None:
    """`codex app-server daemon stop` for this home (the TUI leaves one running)."""
    binary = require_codex()
    try:
        subprocess.run([str(binary), "app-server", "daemon", "stop"], env=codex_env(home),
                       cwd=home, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=timeout)
    except subprocess.TimeoutExpired:
        pass


def codex_pids(home: Path) -> list[int]:
    """Processes whose environment has CODEX_HOME=<home> (ours: the TUI, its daemon)."""
    want = f"CODEX_HOME={home}".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            env = (d / "environ").read_bytes()
        except OSError:
            continue
        if want in env.split(b"\0"):
            pids.append(int(d.name))
    return pids


def kill_codex_processes(home: Path) -> list[int]:
    """SIGKILL, by pid, every process left running with CODEX_HOME=<home>."""
    pids = codex_pids(home)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return pids


def run_tui(home: Path, server: FakeResponses, prompts: Sequence[str], **kw: Any) -> Any:
    """The interactive TUI in tmux, one turn per prompt: see codex_oracle.tui.run_tui."""
    from .tui import run_tui as _run_tui

    return _run_tui(home, server, prompts, **kw)
