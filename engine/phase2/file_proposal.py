"""A proposal made of files memdeck computed itself rather than a model's consolidation: a
pull's merge (sync/push_pull.py) or a re-scope of a block (read_path/rescope.py). The live
root is copied into the proposal's workspace, the given files written over it (and `removed`
taken out), and the proposal recorded pending with its diff, secrets and problems, to be
reviewed in Review and accepted through the same journaled switch as any change."""

from __future__ import annotations

import secrets as _random
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..codex.home import CodexHome
from ..errors import MemdeckError
from ..store import Store
from .proposals import Proposal, changed_files, record, root_state, write_diff
from .workspace import copy_root, validate_artifacts


def propose_files(home: CodexHome, store: Store, now: float, backend: str, model: str,
                  files: Mapping[str, bytes], removed: Iterable[str] = (),
                  problems: Iterable[str] = (),
                  before_record: Callable[[str], None] | None = None) -> Proposal:
    """Record a pending proposal whose workspace is the live root with `files` (root-relative
    path → bytes) written and `removed` deleted; `before_record(pid)` runs once the folder is
    made (a pull saves its conflicts there). Nothing is left behind when it fails."""
    root = home.memory_root
    pid = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now)) + "-" + _random.token_hex(2)
    pdir = home.proposals_dir / pid
    pdir.mkdir(parents=True)
    try:
        ws = pdir / "workspace"
        if root.is_dir():
            copy_root(root, ws)
        else:
            ws.mkdir()
        for rel in removed:
            (ws / rel).unlink(missing_ok=True)
        for rel, data in files.items():
            _inside(ws, rel).parent.mkdir(parents=True, exist_ok=True)
            _inside(ws, rel).write_bytes(data)
        if before_record is not None:
            before_record(pid)
        changed = changed_files(root, ws)
        secrets = write_diff(root, ws, changed, pdir / "proposal.diff")
        found = [*validate_artifacts(ws, home.memory_version, live=root), *problems]
        p = Proposal(pid, now, "pending", backend, model, [], changed, root_state(root),
                     secrets, found, version=home.memory_version)
        return record(store, p)
    except BaseException:
        shutil.rmtree(pdir, ignore_errors=True)
        raise


def _inside(ws: Path, rel: str) -> Path:
    """`ws / rel`, refused in one line when `rel` would leave the workspace (a hostile
    remote's tree can name `../x`)."""
    if ".." in Path(rel).parts or Path(rel).is_absolute():
        raise MemdeckError(f"{rel!r} is not a path inside the memory folder; nothing was "
                           "proposed")
    return ws / rel
