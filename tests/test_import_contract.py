"""The import contract, checked from the source (every import statement, also the ones inside
functions and under `if TYPE_CHECKING:`):

1. The TUI's only door is the facade. A module under tui/ imports `memdeck.engine` itself and
   only names it exports (`memdeck.engine.__all__`); never `memdeck.engine.<module>`, never a
   name the facade does not export, and it does not reach through the facade into its
   internals (`engine.home`, `engine.store`, `engine.index`, `engine._private`).
2. The engine never imports the UI: no `memdeck.tui`, `textual` or `rich` anywhere in engine/.
3. The engine's packages are layered as the data flows, and a package imports only its own
   layer or lower ones:
       foundation < codex < index < phase1 < phase2 < memory_folder < read_path < backends
       < demo, watch and the facade
   (foundation: the shared top-level modules; the facade: engine/__init__.py and the modules
   that are part of it). Every engine module must belong to a layer.
4. No import cycle inside a package: among the modules of one folder (engine/, tui/ and each
   of their packages), no module imports one that imports it back, directly or round a
   circle. Imports inside functions count (they only postpone the circle to the first call,
   and hide it from a reader), and so do the ones under `if TYPE_CHECKING:`: a circle of
   types is still two modules that cannot be read, type-checked or moved apart, and the cure
   is the same (what both need goes into a module both import). Across packages the layers
   of rule 3 already forbid a circle.

Each rule is a function of (module name, path, source) returning one line per violation,
naming the file and line, so the tests at the end can feed them offending sources and see
them fail.
"""

from __future__ import annotations

import ast
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE, TUI = "memdeck.engine", "memdeck.tui"
UI_LIBRARIES = ("textual", "rich")

# the layers, lowest first; top-level modules of engine/ are placed by name below
LAYERS = ["foundation", "codex", "index", "phase1", "phase2", "memory_folder", "sync",
          "read_path", "backends", "top"]
PACKAGE_LAYER = {"codex": "codex", "index": "index", "phase1": "phase1", "phase2": "phase2",
                 "memory_folder": "memory_folder", "sync": "sync", "read_path": "read_path",
                 "backends": "backends", "demo": "top"}
FOUNDATION = {"errors", "clock", "formatting", "store", "redact", "workers", "call_log",
              "atomic", "personal_data", "crash_points", "line_diff", "content_gate",
              "secret_rules"}
# the watcher; the facade, its parts
TOP = {"__init__", "watch", "results", "settings_access", "exports", "facade_parts",
       "facade_changes", "facade_reads", "facade_sync", "facade_projects"}
FACADE_INTERNALS = {"home", "store", "index"}  # public attributes of Engine, not for the TUI


# -- reading a module's imports -----------------------------------------------------------


def module_name(path: Path) -> str:
    """`tui/panes/memory.py` -> `memdeck.tui.panes.memory` (the name it installs as)."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return "memdeck." + ".".join(parts)


def _package(module: str, path: str) -> str:
    return module if path.endswith("__init__.py") else module.rpartition(".")[0]


def imports(module: str, path: str, source: str) -> list[tuple[int, str, str | None]]:
    """(line, absolute module imported, name imported from it or None) for every import,
    relative ones resolved against `module`."""
    out: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(module, path).split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out += [(node.lineno, target, a.name) for a in node.names]
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and ast.unparse(node.func) in ("importlib.import_module", "import_module",
                                             "__import__")
              and not node.args[0].value.startswith(".")):
            out.append((node.lineno, node.args[0].value, None))
    return out


# -- rule 1: the TUI imports the facade only ----------------------------------------------


def _is_engine(node: ast.expr) -> bool:
    """`engine`, `self.engine`, `self.app.engine`: an expression naming the facade."""
    return (isinstance(node, ast.Name) and node.id == "engine") or (
        isinstance(node, ast.Attribute) and node.attr == "engine")


def tui_violations(module: str, path: str, source: str, exported: set[str]) -> list[str]:
    bad: list[str] = []
    for line, target, name in imports(module, path, source):
        where = f"{path}:{line}"
        if target.startswith(ENGINE + "."):
            bad.append(f"{where} imports {target} (an engine internal; import it from "
                       f"{ENGINE}, re-exported there)")
        elif target == ENGINE and name is not None and name not in exported:
            bad.append(f"{where} imports {name} from {ENGINE}, which does not export it "
                       "(add it to LAZY in engine/exports.py)")
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Attribute) and _is_engine(node.value) and (
                node.attr in FACADE_INTERNALS or node.attr.startswith("_")):
            bad.append(f"{path}:{node.lineno} reaches into the facade: "
                       f"{ast.unparse(node)} (ask the facade for what it shows instead)")
    return bad


# -- rule 2: the engine imports no UI -----------------------------------------------------


def engine_ui_violations(module: str, path: str, source: str) -> list[str]:
    bad = []
    for line, target, _name in imports(module, path, source):
        top = target.split(".")[0]
        if target == TUI or target.startswith(TUI + ".") or top in UI_LIBRARIES:
            bad.append(f"{path}:{line} imports {target}: the engine never imports the UI")
    return bad


# -- rule 3: the engine's layers ----------------------------------------------------------


def layer_of(module: str) -> str | None:
    """The layer of a module of memdeck.engine (None: not in any layer)."""
    parts = module.split(".")
    if parts[:2] != ["memdeck", "engine"]:
        return None
    if len(parts) == 2:
        return "top"  # the facade
    first = parts[2]
    if first in PACKAGE_LAYER:
        return PACKAGE_LAYER[first]
    if first in FOUNDATION:
        return "foundation"
    if first in TOP:
        return "top"
    return None


def _imported_module(target: str, name: str | None) -> str:
    """`from memdeck.engine import formatting` imports the module memdeck.engine.formatting;
    `from memdeck.engine import Engine` imports the facade."""
    if name and target == ENGINE and ((ROOT / "engine" / f"{name}.py").exists()
                                      or (ROOT / "engine" / name).is_dir()):
        return f"{target}.{name}"
    return target


def layer_violations(module: str, path: str, source: str) -> list[str]:
    own = layer_of(module)
    if own is None:
        return [f"{path}:1 {module} is in no layer: place it (test_import_contract.py)"]
    bad = []
    for line, target, name in imports(module, path, source):
        if target != ENGINE and not target.startswith(ENGINE + "."):
            continue
        imported = _imported_module(target, name)
        theirs = layer_of(imported)
        if theirs is None:
            continue  # reported as that module's own violation
        if LAYERS.index(theirs) > LAYERS.index(own):
            bad.append(f"{path}:{line} {own} imports {theirs} ({imported}): a lower layer "
                       "never imports a higher one")
    return bad


# -- rule 4: no import cycle inside a package ---------------------------------------------


def _within(module: str, target: str, name: str | None, siblings: set[str]) -> str | None:
    """The module of the same package an import names (`from . import x`, `from .x import
    y`, `import memdeck.engine.x`), or None when it names none."""
    if name is not None and f"{target}.{name}" in siblings:
        return f"{target}.{name}"
    return target if target in siblings and target != module else None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _circle(graph: dict[str, set[str]], part: list[str]) -> list[str]:
    """One circle through the first module of `part` (a shortest one), ending where it
    started."""
    start, inside = part[0], set(part)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & inside):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return part + [start]  # pragma: no cover - a component always has a circle


def cycle_violations(sources: list[tuple[str, str, str]]) -> list[str]:
    """One line per import circle among the modules of one package, naming each step's file
    and line: `a.py:3 -> b.py:7 -> a.py`."""
    by_package: dict[str, dict[str, tuple[str, str]]] = {}
    for module, path, source in sources:
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        by_package.setdefault(package, {})[module] = (path, source)
    bad = []
    for package, modules in sorted(by_package.items()):
        siblings = set(modules)
        graph: dict[str, set[str]] = {m: set() for m in modules}
        where: dict[tuple[str, str], int] = {}
        for module, (path, source) in modules.items():
            for line, target, name in imports(module, path, source):
                other = _within(module, target, name, siblings)
                if other is not None and other != module:
                    graph[module].add(other)
                    where.setdefault((module, other), line)
        for part in _cycles(graph):
            circle = _circle(graph, part)
            steps = [f"{modules[a][0]}:{where[(a, b)]}" for a, b in pairwise(circle)]
            rest = sorted(modules[m][0] for m in set(part) - set(circle))
            bad.append(" -> ".join(steps + [modules[circle[0]][0]])
                       + f": an import circle inside {package}"
                       + (f" (in the same knot: {', '.join(rest)})" if rest else "")
                       + "; move what they share into a module both import")
    return bad


# -- the checks over the repository -------------------------------------------------------


def _sources(folder: str) -> list[tuple[str, str, str]]:
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files, folder
    return [(module_name(f), str(f.relative_to(ROOT)), f.read_text()) for f in files]


def _exported() -> set[str]:
    import memdeck.engine

    return set(memdeck.engine.__all__)


def test_the_tui_imports_only_the_facade() -> None:
    exported = _exported()
    bad = [v for m, p, s in _sources("tui") for v in tui_violations(m, p, s, exported)]
    assert not bad, "\n".join(bad)


def test_every_name_the_facade_exports_is_there() -> None:
    """`__all__` (the `LAZY` table of exports.py included) names only what `memdeck.engine`
    really has, so passing rule 1 means the import works."""
    import memdeck.engine

    missing = [n for n in memdeck.engine.__all__ if not hasattr(memdeck.engine, n)]
    assert not missing, missing


def test_the_engine_imports_no_ui() -> None:
    bad = [v for m, p, s in _sources("engine") for v in engine_ui_violations(m, p, s)]
    assert not bad, "\n".join(bad)


def test_the_engine_packages_are_layered() -> None:
    bad = [v for m, p, s in _sources("engine") for v in layer_violations(m, p, s)]
    assert not bad, "\n".join(bad)


def test_no_package_has_an_import_circle() -> None:
    bad = cycle_violations(_sources("engine") + _sources("tui"))
    assert not bad, "\n".join(bad)


# -- the contract can fail ----------------------------------------------------------------

OFFENDING_TUI = [
    ("from memdeck.engine.errors import MemdeckError\n", 1, "memdeck.engine.errors"),
    ("import memdeck.engine.codex.home\n", 1, "memdeck.engine.codex.home"),
    ("def f():\n    from memdeck.engine.phase2.proposals import root_state\n", 2,
     "memdeck.engine.phase2.proposals"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
     "    from memdeck.engine.watch import Watcher\n", 3, "memdeck.engine.watch"),
    ("from ...engine.clock import iso_utc\n", 1, "memdeck.engine.clock"),  # relative
    ("from memdeck.engine import root_state\n", 1, "does not export it"),
    ("import importlib\nimportlib.import_module('memdeck.engine.redact')\n", 2,
     "memdeck.engine.redact"),
    ("def f(engine):\n    return engine.home.proposals_dir\n", 2, "engine.home"),
    ("class P:\n    def f(self):\n        return self.engine.store\n", 3, "self.engine.store"),
    ("def f(app):\n    app.engine._recover()\n", 2, "app.engine._recover"),
]


@pytest.mark.parametrize(("source", "line", "says"), OFFENDING_TUI)
def test_a_tui_module_reaching_past_the_facade_fails(source: str, line: int,
                                                      says: str) -> None:
    path = "tui/panes/fake.py"
    bad = tui_violations("memdeck.tui.panes.fake", path, source, _exported())
    assert len(bad) == 1 and bad[0].startswith(f"{path}:{line} ") and says in bad[0], bad


def test_a_tui_module_using_the_facade_passes() -> None:
    source = ("from memdeck.engine import Engine, MemdeckError, local_time\n"
              "import memdeck.engine\nfrom memdeck import engine as facade\n"
              "def f(engine):\n    return engine.root, engine.home_info(), args.home\n")
    assert tui_violations("memdeck.tui.fake", "tui/fake.py", source, _exported()) == []


@pytest.mark.parametrize(("source", "line"), [
    ("import textual\n", 1),
    ("from rich.text import Text\n", 1),
    ("def f():\n    from memdeck.tui.app import MemdeckApp\n", 2),
    ("from ...tui import render\n", 1),  # relative, from memdeck.engine.codex.fake
])
def test_an_engine_module_importing_the_ui_fails(source: str, line: int) -> None:
    path = "engine/codex/fake.py"
    bad = engine_ui_violations("memdeck.engine.codex.fake", path, source)
    assert len(bad) == 1 and bad[0].startswith(f"{path}:{line} "), bad


@pytest.mark.parametrize(("module", "source", "says"), [
    ("memdeck.engine.phase2.fake", "from ..backends.offline_phase2 import OfflinePhase2\n",
     "phase2 imports backends"),
    ("memdeck.engine.phase2.fake", "def f():\n    from ..memory_folder import history\n",
     "phase2 imports memory_folder"),
    ("memdeck.engine.codex.fake", "from memdeck.engine.index.sessions import Session\n",
     "codex imports index"),
    ("memdeck.engine.clock", "from . import watch\n", "foundation imports top"),
    ("memdeck.engine.index.fake", "from .. import Engine\n", "index imports top"),
    ("memdeck.engine.read_path.fake", "from memdeck.engine import demo_home\n",
     "read_path imports top"),
])
def test_a_lower_layer_importing_a_higher_one_fails(module: str, source: str,
                                                    says: str) -> None:
    path = "engine/" + "/".join(module.split(".")[2:]) + ".py"
    bad = layer_violations(module, path, source)
    assert len(bad) == 1 and says in bad[0] and bad[0].startswith(f"{path}:"), bad


def test_imports_downwards_and_sideways_pass() -> None:
    source = ("from ..codex.home import CodexHome\nfrom ..errors import NotFound\n"
              "from .. import formatting\nfrom .hunks import proposal_hunks\n"
              "from ..index.sessions import Session\n")
    assert layer_violations("memdeck.engine.phase2.fake", "engine/phase2/fake.py",
                            source) == []


def test_a_module_in_no_layer_fails() -> None:
    bad = layer_violations("memdeck.engine.helpers", "engine/helpers.py", "import os\n")
    assert bad == ["engine/helpers.py:1 memdeck.engine.helpers is in no layer: place it "
                   "(test_import_contract.py)"]


# a fake package, its modules as (module, path, source)
def _fake(**modules: str) -> list[tuple[str, str, str]]:
    return [(f"memdeck.engine.fake.{m}" if m != "__init__" else "memdeck.engine.fake",
             f"engine/fake/{m}.py", src) for m, src in modules.items()]


def test_two_modules_importing_each_other_fail() -> None:
    bad = cycle_violations(_fake(a="import os\nfrom .b import B\nA = 1\n",
                                 b="from .a import A\nB = 2\n"))
    assert bad == ["engine/fake/a.py:2 -> engine/fake/b.py:1 -> engine/fake/a.py: an import "
                   "circle inside memdeck.engine.fake; move what they share into a module "
                   "both import"], bad


def test_a_circle_of_three_through_a_function_and_type_checking_fails() -> None:
    """The import that closes the circle hides in a function, another under TYPE_CHECKING:
    both count."""
    bad = cycle_violations(_fake(
        a="from . import b\n",
        b="def f():\n    from .c import C\n    return C\n",
        c="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
          "    from memdeck.engine.fake.a import A\nC = 3\n",
        d="from .a import A\n"))  # outside the circle, importing into it
    assert len(bad) == 1, bad
    assert bad[0].startswith("engine/fake/a.py:1 -> engine/fake/b.py:2 -> "
                             "engine/fake/c.py:3 -> engine/fake/a.py: "), bad


def test_a_module_importing_its_package_that_imports_it_fails() -> None:
    bad = cycle_violations(_fake(__init__="from .a import A\n",
                                 a="from . import helper\nA = 1\n", helper="H = 1\n")
                           + _fake(b="from memdeck.engine import fake\n"))
    assert bad == [], bad  # `from . import helper` names the module helper, not the package
    bad = cycle_violations(_fake(__init__="from .a import A\nNAME = 1\n",
                                 a="from . import NAME\nA = 1\n"))
    assert len(bad) == 1 and "engine/fake/__init__.py:1 -> engine/fake/a.py:1" in bad[0], bad


def test_every_circle_of_a_knot_is_one_line_naming_the_rest() -> None:
    bad = cycle_violations(_fake(a="from . import b, c\n", b="from . import a\n",
                                 c="from . import a\n"))
    assert len(bad) == 1 and "(in the same knot: engine/fake/c.py)" in bad[0], bad


def test_imports_one_way_and_across_packages_pass() -> None:
    sources = _fake(a="from . import b\nfrom ..codex import home\n",
                    b="from .c import C\nimport memdeck.engine.fake.c\n", c="C = 1\n")
    sources.append(("memdeck.engine.codex.home", "engine/codex/home.py",
                    "from ..fake import a\n"))  # a circle across packages: rule 3's
    assert cycle_violations(sources) == []
