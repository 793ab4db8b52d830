"""The facade's per-project memory (issue 26, item 3; engine/codex/project_memory.py): memory
on or off for one project, as Codex reads it, and the sessions taught there. Methods of
`Engine` (engine/__init__.py)."""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from .facade_parts import FacadeParts

if TYPE_CHECKING:
    from .codex.project_memory import ProjectMemory
    from .index.sessions import Session
    from .phase2.proposals import Proposal


class ProjectMethods(FacadeParts):
    def project_memory(self, path: str | Path) -> ProjectMemory:
        """Memory on or off for the project holding `path`: what its `.codex/config.toml`
        sets, whether Codex reads that file, and what Codex uses there."""
        from .codex.project_memory import read_project

        return read_project(self.home.config_path, Path(path))

    def set_project_memory(self, path: str | Path, values: dict[str, bool]) -> ProjectMemory:
        """`values` ({"use_memories": False, ...}) into the project's `.codex/config.toml`."""
        from .codex.project_memory import set_project

        return set_project(self.home.config_path, Path(path), values)

    def project_sessions(self, path: str | Path) -> list[Session]:
        """The sessions whose working folder is the project holding `path` or inside it."""
        from .codex.project_memory import project_folder

        folder = project_folder(Path(path))
        return [s for s in self.sessions() if s.cwd and _inside(s.cwd, folder)]


    def rescope(self, line: int, way: str) -> Proposal:
        """A proposal narrowing the MEMORY.md task group at `line` to the projects it was
        taught in (`way` = "narrow") or widening it to every project ("widen"), reviewed
        and accepted like any change (read_path/rescope.py)."""
        from .phase2.file_proposal import propose_files
        from .read_path.rescope import RescopeError, rescoped

        block = next((b for b in self.scope_map()
                      if b.path == "MEMORY.md" and b.line == line), None)
        if block is None:
            raise RescopeError(f"MEMORY.md has no task group at line {line} (memdeck scope "
                               "lists them)")
        path = self.home.memory_root / "MEMORY.md"
        try:
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise RescopeError(f"{path} is not UTF-8 (byte {e.start}); fix it before "
                               "re-scoping: nothing was proposed") from None
        text = rescoped(raw, block, way)
        return propose_files(self.home, self.store, self.clock.now(), f"rescope:{way}",
                             "memdeck", {"MEMORY.md": text.encode("utf-8")})


def _inside(cwd: str, folder: Path) -> bool:
    p = PurePath(cwd)
    return p == folder or folder in p.parents
