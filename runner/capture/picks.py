"""The autotuner's choices, recorded by the runs that time a solution and reused by its capture.

`choices_recorded` (the writers' side), `chosen_configs` (the capture's side) and `as_timed` (the
profiling driver's side).

An autotuned kernel met in a JIT capture used to be autotuned again: every config compiled (the
capture bypasses the disk cache) and benchmarked, 25-50 s for a GEMM with nine configs, and the IR
of every config it tried was described beside the one it kept. Runs that time a solution (rung 2,
the optimization loop's gate) leave the autotuner's choice on disk (Triton's `*.autotune.json`, with
`TRITON_CACHE_AUTOTUNING` set): in the solution's own kernel cache when its contestant was
sandboxed, in the shared cache when it ran in-process. Inside `chosen_configs` the autotuner reads
those choices, so the capture compiles and describes only the configs the timed run used. Where no
choice was recorded the autotuner benchmarks as before.

The choices are copied into a fresh, private cache for the capture: the capture's compiles never
land in a cache another run keeps. Kernels are read from ladder's own shared cache as well
(`shared_kernels_read`), where the earlier rungs' runs of a script compiled them: a capture that
compiled everything again spent tens of seconds of rung 3 on it. A contestant's cache, which a
candidate's code writes, is never read.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Iterator

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.paths import kernel_cache

PICKS = "*/*.autotune.json"
# Triton's own switch for `cache_results` on every autotuner (triton.knobs.autotuning.cache).
AUTOTUNE_CACHE_ENV = "TRITON_CACHE_AUTOTUNING"
_recording = threading.Lock()
_blocks = [0]  # blocks open now in this process, so that the last to end removes the setting


@contextlib.contextmanager
def choices_recorded() -> Iterator[None]:
    """While the block runs, the processes it starts (the judge's contestants, a timing driver, an
    Nsight Compute pass) record each autotuner's choice on disk and take it from there once it is
    recorded: a later run of the same kernel skips the benchmarking and runs the configuration the
    earlier run timed, rather than one chosen again on other noise. A setting of the user's is left
    alone; blocks may overlap (threads), and the last one to end restores the environment."""
    with _recording:
        if _blocks[0] == 0 and AUTOTUNE_CACHE_ENV in os.environ:
            owned = False
        else:
            owned = True
            _blocks[0] += 1
            os.environ[AUTOTUNE_CACHE_ENV] = "1"
    try:
        yield
    finally:
        if owned:
            with _recording:
                _blocks[0] -= 1
                if _blocks[0] == 0:
                    os.environ.pop(AUTOTUNE_CACHE_ENV, None)


def recorded_choices(solution: str | Path) -> list[Path]:
    """The autotuner choice files where runs of ``solution`` leave them (its contestants' own cache
    and the shared one)."""
    from triton import knobs

    places = [Path(knobs.cache.dir)]
    if Path(solution).is_file():
        places.insert(0, kernel_cache(Path(solution)))
    return [path for place in places if place.is_dir() for path in sorted(place.glob(PICKS))]


@contextlib.contextmanager
def chosen_configs(solution: str | Path) -> Iterator[Path]:
    """A private Triton cache holding the solution's recorded autotuner choices, with the autotuner's
    disk cache on for autotuners created inside the block (the solution is imported inside it)."""
    from triton import knobs

    choices = recorded_choices(solution)
    with tempfile.TemporaryDirectory(prefix="ladder-capture-cache-") as folder, \
            knobs.cache.scope(), knobs.autotuning.scope():
        cache = Path(folder)
        for choice in choices:
            (cache / choice.parent.name).mkdir(exist_ok=True)
            shutil.copyfile(choice, cache / choice.parent.name / choice.name)
        if knobs.cache.manager_class is None:  # a cache manager of the user's is left alone
            knobs.cache.manager_class = shared_kernels_read(knobs.cache.dir)
        knobs.cache.dir = str(cache)
        knobs.autotuning.cache = True
        yield cache


def shared_kernels_read(shared: str) -> type:
    """Triton's file cache, with compiled kernels it does not hold read from the `shared` cache.

    Only kernel groups are read through (autotuner choices come from the private copies); a kernel
    found there may carry another copy's source locations, which the capture checks
    (`ladder.runner.capture.jit.located_in`)."""
    from triton.runtime.cache import FileCacheManager

    class SharedKernelsRead(FileCacheManager):
        def get_group(self, filename: str) -> dict[str, str] | None:
            own = super().get_group(filename)
            if own is not None or not os.path.isdir(os.path.join(shared, self.key)):
                return own
            private, self.cache_dir = self.cache_dir, os.path.join(shared, self.key)
            try:
                return super().get_group(filename)
            finally:
                self.cache_dir = private

    return SharedKernelsRead


@contextlib.contextmanager
def as_timed(solution: str | Path) -> Iterator[None]:
    """Run the solution on the kernels and autotuner choices its sandboxed timing left in its own
    kernel cache (`ladder.runner.paths.kernel_cache`), where there is one: the Nsight Compute
    pass of rung 2 then profiles the configuration the judge timed, without compiling every config
    again and benchmarking them under the profiler. The cache holds what this same source compiles
    to, so what the pass adds to it is what the judge would compile."""
    from triton import knobs

    own = kernel_cache(Path(solution)) if Path(solution).is_file() else None
    with knobs.cache.scope(), knobs.autotuning.scope():
        if own is not None and own.is_dir():
            knobs.cache.dir = str(own)
        knobs.autotuning.cache = True
        yield
