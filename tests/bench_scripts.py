"""Load a script of bench/ (not a package) as a module, so its functions can be tested in process."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_bench_script(relative: str) -> ModuleType:
    """bench/RELATIVE as a module, registered under its name (dataclasses look their module up by it)."""
    path = ROOT / "bench" / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
