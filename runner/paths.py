"""Where this copy of ladder imports from, for the child processes it starts (workers, contestants,
the Ascend capture, Nsight Compute's target), and where a solution's contestants keep their kernels
(read by the captures and the profiling driver too, so it imports nothing of the runner)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

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


# How contestants' autotuners time their configs (``ladder.runner.autotuning``); a contestant's cache
# keeps the choices they made, so a change of method names the caches anew and no choice made the
# old way is read back (2: host time kept out of the events).
TUNING_METHOD = b"2"


def kernel_cache(solution: Path) -> Path:
    """The kernel cache of ``solution``'s contestants on this machine, named by its source's hash and
    by how their autotuners choose (``TUNING_METHOD``)."""
    from triton import knobs

    digest = hashlib.sha256(TUNING_METHOD + b"\0" + Path(solution).read_bytes()).hexdigest()[:24]
    shared = Path(knobs.cache.dir)  # Triton's own reading of TRITON_CACHE_DIR and its default
    return shared.parent / f"{shared.name}-contestants" / digest
