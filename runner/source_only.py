"""Code beside a solution runs from its Python source, the text the static rules read, never from
bytecode or a compiled extension.

Python prefers a compiled extension (``helper.cpython-311-x86_64-linux-gnu.so``) to ``helper.py``,
runs a bare ``helper.pyc`` where no source is, and runs ``__pycache__/solution.cpython-311.pyc``
in place of ``solution.py`` when the cache's header names the source's size and modification
time, which a candidate folder can forge. Any of them let a folder pass the rules with honest
``.py`` text while other code ran. So the solution is compiled from its source, and a finder at the
front of ``sys.meta_path`` takes every module found in the solution's folder: source is compiled
from the file, with no cache read; anything else there is refused with an ``ImportError``.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from pathlib import Path

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class SourceLoader(importlib.machinery.SourceFileLoader):
    """A source file's loader that compiles the file every time: no bytecode cache is read."""

    def get_code(self, fullname: str):
        return self.source_to_code(self.get_data(self.path), self.path)


class SolutionFolderFinder(importlib.abc.MetaPathFinder):
    """Modules found in one folder (the solution's): from source, or refused."""

    def __init__(self, folder: Path):
        self.folder = folder

    def find_spec(self, name: str, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.origin is None or not Path(spec.origin).resolve().is_relative_to(self.folder):
            return None
        if type(spec.loader) is not importlib.machinery.SourceFileLoader:
            raise ImportError(f"{Path(spec.origin).name} beside the solution is not Python source (bytecode or a "
                              f"compiled extension): only .py files the checks can read are imported", name=name)
        spec.loader = SourceLoader(name, spec.origin)
        return spec


def install(folder: str | Path) -> None:
    """Put the finder for ``folder`` at the front of ``sys.meta_path`` (once per folder)."""
    folder = Path(folder).resolve()
    if not any(isinstance(finder, SolutionFolderFinder) and finder.folder == folder for finder in sys.meta_path):
        sys.meta_path.insert(0, SolutionFolderFinder(folder))
