"""Where this copy of ladder imports from, for the child processes it starts (workers, contestants,
the Ascend capture, Nsight Compute's target)."""
from __future__ import annotations

import os
from pathlib import Path

HOLDER = Path(__file__).resolve().parent.parent  # the folder holding runner/: a checkout, or site-packages/ladder


def import_root() -> Path:
    """The folder whose presence on PYTHONPATH makes a child's `import ladder` find this copy: the
    checkout (its ladder.py stands for the package) or, installed, site-packages, which holds ladder/.
    Never the package's own folder: from there its runner/ and kernels/ would import by their bare
    names and shadow packages of those names in the child."""
    return HOLDER if (HOLDER / "ladder.py").is_file() else HOLDER.parent


def child_pythonpath(existing: str | None = None) -> str:
    """PYTHONPATH for a child process: the import root first, then what the parent had."""
    return os.pathsep.join(filter(None, [str(import_root()), existing]))
