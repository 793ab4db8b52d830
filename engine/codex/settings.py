"""Settings: Codex's memory toggles in `config.toml` and memdeck's own in `memdeck/config.toml`.

Reading uses stdlib `tomllib` (fast, on the listing path). Writing uses `tomlkit` so every
comment, blank line and unrelated key of the user's file stays exactly as it was. Values are
checked against Codex's types and clamp ranges (docs/codex-format.md "Configuration") before
anything is written: Codex's `[memories]` table denies unknown fields, so memdeck never adds a
key Codex lacks.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import write_atomic
from ..errors import ConfigError

if TYPE_CHECKING:
    from tomlkit import TOMLDocument


@dataclass(frozen=True)
class KeySpec:
    name: str
    kind: str  # "bool" | "int" | "str" | "enum"
    default: Any  # None: no default (Codex uses the provider's)
    lo: int | None = None
    hi: int | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    help: str = ""

    def allowed(self) -> str:
        if self.kind == "bool":
            return "true or false"
        if self.kind == "int":
            return f"an integer from {self.lo} to {self.hi}"
        if self.kind == "enum":
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        return "a string"

    def int_range(self) -> tuple[int, int]:
        """(lo, hi) of an "int" key: every one has both."""
        if self.lo is None or self.hi is None:
            raise ValueError(f"{self.name} has no integer range")
        return self.lo, self.hi


# docs/codex-format.md "Configuration": the [memories] table, with Codex's defaults and clamps.
MEMORIES_KEYS: dict[str, KeySpec] = {
    s.name: s
    for s in (
        KeySpec("version", "enum", None, choices=("v1", "v2"),
                help="memory pipeline and root: memories/ (v1) or memories_v2/ (v2); unset: "
                     "v1 if memories/ exists, else v2"),
        KeySpec("dual_write", "bool", False, help="run both the v1 and v2 pipelines"),
        KeySpec("disable_on_external_context", "bool", False,
                aliases=("no_memories_if_mcp_or_web_search",),
                help="mark sessions that used web search or MCP as polluted"),
        KeySpec("generate_memories", "bool", True,
                help="new sessions may become memories"),
        KeySpec("use_memories", "bool", True,
                help="new sessions are shown the memory summary"),
        KeySpec("dedicated_tools", "bool", False, help="expose the memories.* tools"),
        KeySpec("max_raw_memories_for_consolidation", "int", 256, 1, 4096,
                help="raw memories fed to one consolidation"),
        KeySpec("max_unused_days", "int", 30, 0, 365,
                help="days a memory may go uncited before it is pruned"),
        KeySpec("max_rollout_age_days", "int", 10, 0, 90,
                help="sessions older than this are not extracted"),
        KeySpec("max_rollouts_per_startup", "int", 2, 1, 128,
                help="sessions extracted per Codex start-up (and the running-job cap)"),
        KeySpec("min_rollout_idle_hours", "int", 6, 1, 48,
                help="a session must be idle this long before it is extracted"),
        KeySpec("min_rate_limit_remaining_percent", "int", 25, 0, 100,
                help="skip the pipeline when less rate limit than this remains"),
        KeySpec("extract_model", "str", None,
                help="phase-1 model (unset: the provider default, gpt-6-luna in Codex 0.171)"),
        KeySpec("consolidation_model", "str", None,
                help="phase-2 model (unset: the provider default, gpt-6.1-terra in Codex 0.171)"),
    )
}

FEATURE_KEY = KeySpec("memories", "bool", False, aliases=("memory_tool",),
                      help="the [features] flag that turns Codex memories on")

# memdeck's own settings, `memdeck.<name>` on the command line.
MEMDECK_KEYS: dict[str, KeySpec] = {
    s.name: s
    for s in (
        KeySpec("backend", "enum", "auto", choices=("auto", "offline", "openai"),
                help="auto: openai when an endpoint or key is configured, else offline"),
        KeySpec("base_url", "str", None, help="OpenAI-compatible endpoint (else OPENAI_BASE_URL)"),
        KeySpec("api_key", "str", None,
                help="API key for memdeck.base_url (else api_key_env's variable)"),
        KeySpec("api_key_env", "str", None,
                help="environment variable holding memdeck.base_url's key"),
        KeySpec("extract_model", "str", None, help="phase-1 model when [memories] sets none"),
        KeySpec("input_budget", "int", None, 1_000, 2_000_000,
                help="tokens of a session sent to phase 1 (unset: what the server's context "
                     "holds, at most Codex's 150,000)"),
        KeySpec("output_budget", "int", None, 64, 1_000_000,
                help="tokens a model may write in one reply, sent as max_tokens (unset: the "
                     "server's own limit; a small local model may otherwise write for minutes)"),
        KeySpec("tools", "enum", "auto", choices=("auto", "on", "off"),
                help="phase 2's tool calling (auto: files in the prompt if the server has none)"),
        KeySpec("output_mode", "enum", "auto", choices=("auto", "json_schema", "json_object"),
                help="auto: a strict JSON schema, JSON mode if the endpoint refuses it"),
        KeySpec("consolidation_model", "str", None,
                help="phase-2 model when [memories] sets none"),
        KeySpec("auto_accept", "bool", False,
                help="apply consolidations without review (off: every change is reviewed)"),
        KeySpec("auto_extract", "bool", False,
                help="the watcher extracts sessions as they become idle"),
        KeySpec("request_timeout", "int", 120, 5, 3600, help="seconds per model request"),
        KeySpec("max_retries", "int", 3, 0, 10, help="retries per model request"),
    )
}


def parse_value(spec: KeySpec, text: str) -> Any:
    """Parse a command-line VALUE for `spec`, refusing what Codex would not accept."""
    t = text.strip()
    where = f"{spec.name} must be {spec.allowed()}"
    if spec.kind == "bool":
        low = t.lower()
        if low in ("true", "on", "yes", "1"):
            return True
        if low in ("false", "off", "no", "0"):
            return False
        raise ConfigError(f"{where}; got {text!r}")
    if spec.kind == "int":
        try:
            value = int(t, 10)
        except ValueError:
            raise ConfigError(f"{where}; got {text!r}") from None
        lo, hi = spec.int_range()
        if not (lo <= value <= hi):
            raise ConfigError(f"{where}; got {value}")
        return value
    if spec.kind == "enum":
        unq = t.strip('"')
        if unq not in spec.choices:
            raise ConfigError(f"{where}; got {text!r}")
        return unq
    if len(t) >= 2 and t[0] == t[-1] == '"':
        t = t[1:-1]
    if not t:
        raise ConfigError(f"{spec.name} must be a non-empty string")
    return t


def coerce_stored(spec: KeySpec, value: Any) -> Any:
    """What Codex makes of a stored value: integers clamped, a wrong type read as the default."""
    if value is None:
        return spec.default
    if spec.kind == "bool":
        return value if isinstance(value, bool) else spec.default
    if spec.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return spec.default
        lo, hi = spec.int_range()
        return max(lo, min(hi, value))
    if spec.kind == "enum":
        return value if value in spec.choices else spec.default
    return value if isinstance(value, str) and value else spec.default


def adjustment_note(spec: KeySpec, raw: Any, file_name: str, reader: str = "Codex") -> str:
    """Why the value Codex uses is not the one the file holds ('' when it is): an integer
    outside Codex's range is clamped, a value of the wrong type reads as the default."""
    if raw is None:
        return ""
    used = coerce_stored(spec, raw)
    if used == raw and type(used) is type(raw):
        return ""
    if spec.kind == "int" and isinstance(raw, int) and not isinstance(raw, bool):
        lo, hi = spec.int_range()
        return f"{file_name} says {raw}; {reader} clamps it to {used} ({lo} to {hi})"
    return (f"{file_name} says {toml_literal(raw)}, not {spec.allowed()}; "
            f"{reader} uses the default {toml_literal(used)}")


def toml_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return ""
    import json

    return json.dumps(str(value), ensure_ascii=False)


@dataclass(frozen=True)
class MemoriesConfig:
    """The effective `[memories]` values (clamped as Codex clamps them) and the feature flag."""

    feature_enabled: bool
    version: str | None  # as configured; None when unset (CodexHome.memory_version resolves it)
    dual_write: bool
    disable_on_external_context: bool
    generate_memories: bool
    use_memories: bool
    dedicated_tools: bool
    max_raw_memories_for_consolidation: int
    max_unused_days: int
    max_rollout_age_days: int
    max_rollouts_per_startup: int
    min_rollout_idle_hours: int
    min_rate_limit_remaining_percent: int
    extract_model: str | None
    consolidation_model: str | None
    sqlite_home: str | None = None
    version_raw: str | None = None  # the stored text, also when it is no version memdeck knows

    @classmethod
    def defaults(cls) -> MemoriesConfig:
        return cls.from_document({})

    @classmethod
    def from_document(cls, doc: dict[str, Any]) -> MemoriesConfig:
        mem = doc.get("memories")
        mem = mem if isinstance(mem, dict) else {}
        feats = doc.get("features")
        feats = feats if isinstance(feats, dict) else {}
        values: dict[str, Any] = {}
        for name, spec in MEMORIES_KEYS.items():
            raw = _lookup(mem, spec)
            values[name] = coerce_stored(spec, raw)
        raw_version = _lookup(mem, MEMORIES_KEYS["version"])
        values["version_raw"] = raw_version if isinstance(raw_version, str) else None
        values["feature_enabled"] = coerce_stored(FEATURE_KEY, _lookup(feats, FEATURE_KEY))
        sqlite_home = doc.get("sqlite_home")
        values["sqlite_home"] = sqlite_home if isinstance(sqlite_home, str) else None
        return cls(**values)


def _lookup(table: dict[str, Any], spec: KeySpec) -> Any:
    if spec.name in table:
        return table[spec.name]
    for alias in spec.aliases:
        if alias in table:
            return table[alias]
    return None


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes, None when it is missing; never opens a FIFO or device in its place."""
    from .linestream import NotRegularFile, read_regular_bytes

    try:
        return read_regular_bytes(path)
    except FileNotFoundError:
        return None
    except NotRegularFile as e:
        raise ConfigError(f"{path} is {e.kind}, not a regular file: replace it with a plain "
                          "TOML file (or remove it), then run the command again") from None
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from None


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(
            f"{path} is not valid UTF-8 (line {line}, byte {e.start + 1}): Codex reads only "
            "UTF-8; save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`), then run the command "
            "again") from None


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    except RecursionError:  # thousands of nested arrays or inline tables
        raise ConfigError(f"{path} is not valid TOML: nested too deeply") from None


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; a missing file is an empty document; a broken one is one clear line."""
    data = _read_bytes(path)
    return {} if data is None else _parse(path, _decode(path, data))


def load_for_edit(path: Path) -> TOMLDocument:
    """`path` as a tomlkit document to change and write back with every comment and blank line
    kept; empty when the file is missing. A file `read_toml` refuses is refused here with the
    same error: memdeck never rewrites a file it cannot parse."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    data = _read_bytes(path)
    text = "" if data is None else _decode(path, data)
    _parse(path, text)
    try:
        return tomlkit.parse(text)
    except (TOMLKitError, RecursionError) as e:  # valid TOML tomlkit cannot keep as written
        raise ConfigError(f"{path}: memdeck cannot edit this file without changing it ({e}); "
                          "change the setting by hand") from None


class SettingsFile:
    """Get and set keys in one TOML file, keeping everything else in it byte for byte."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, Any]:
        return read_toml(self.path)

    def set(self, table: str | None, spec: KeySpec, value: Any) -> None:
        import tomlkit

        doc = load_for_edit(self.path)
        container = self._table(doc, table)
        if container is None:
            assert table is not None
            container = tomlkit.table()
            doc[table] = container
        existing = next((k for k in (spec.name, *spec.aliases) if k in container), spec.name)
        container[existing] = value
        write_atomic(self.path, tomlkit.dumps(doc))

    def unset(self, table: str | None, spec: KeySpec) -> bool:
        import tomlkit

        doc = load_for_edit(self.path)
        try:
            container = self._table(doc, table)
        except ConfigError:  # `memories = true`: no key of the table can be in it
            return False
        if container is None:
            return False
        removed = False
        for k in (spec.name, *spec.aliases):
            if k in container:
                del container[k]
                removed = True
        if removed:
            write_atomic(self.path, tomlkit.dumps(doc))
        return removed

    def _table(self, doc: TOMLDocument, table: str | None) -> Any:
        """The table a key lives in (the document itself for None), None when it is missing;
        a `table` that is a value or an array of tables is refused, never overwritten."""
        if table is None:
            return doc
        container = doc.get(table)
        if container is not None and not (hasattr(container, "__setitem__")
                                          and hasattr(container, "keys")):
            raise ConfigError(f"{self.path}: `{table}` is not a table; fix it by hand first")
        return container


@dataclass(frozen=True)
class SettingValue:
    key: str
    value: Any
    is_set: bool
    default: Any
    allowed: str
    help: str
    note: str = ""  # why the value is what it is, when memdeck derives it (the version)
    adjusted: str = ""  # why Codex uses another value than the file holds (`adjustment_note`)


def resolve_key(key: str) -> tuple[str, str | None, KeySpec]:
    """Map a CLI key to (file, table, spec): file is "codex" or "memdeck"."""
    if key.startswith("memdeck."):
        name = key.split(".", 1)[1]
        spec = MEMDECK_KEYS.get(name)
        if spec is None:
            raise ConfigError(
                f"unknown memdeck setting {name!r}; known: " + ", ".join(sorted(MEMDECK_KEYS))
            )
        return "memdeck", None, spec
    if key in ("memories", "features.memories", *FEATURE_KEY.aliases):
        return "codex", "features", FEATURE_KEY
    name = key.split(".", 1)[1] if key.startswith("memories.") else key
    for spec in MEMORIES_KEYS.values():
        if name == spec.name or name in spec.aliases:
            return "codex", "memories", spec
    raise ConfigError(
        f"unknown key {key!r}; use `memories`, a [memories] key ("
        + ", ".join(MEMORIES_KEYS)
        + ") or memdeck.<name>"
    )


def all_keys() -> list[str]:
    return ["memories", *MEMORIES_KEYS, *(f"memdeck.{k}" for k in MEMDECK_KEYS)]
