"""Capture through the JIT on a GPU: every kernel Triton compiles and launches while a workload runs.

What is described is what the JIT compiled for this GPU, through `triton.knobs.runtime` hooks, with
the grids each kernel was launched with.
"""
from __future__ import annotations

import contextlib
import gc
from pathlib import Path
from typing import Any, Iterator

from ladder.runner.capture.labels import merge_and_label
from ladder.runner.capture.nvidia import nvidia_record
from ladder.runner.capture.picks import chosen_configs
from ladder.runner.capture.record import CapturedKernel, source_position
from ladder.runner.capture.tuning import AutotuneWatch
from ladder.runner.capture.workload import run_target
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class JitCapture:
    """Collects every kernel the JIT compiles and every launch while active (GPU).

    Use as `with JitCapture() as session: ...; session.kernels()`, or `capture()` for a workload.
    Uses `knobs.runtime.jit_post_compile_hook` (compiled kernel + its specialization) and
    `knobs.runtime.launch_enter_hook` (each launch). The launch hook sees no grid, so while active
    each captured JITFunction gets a `launch_metadata` that adds it (chained to the user's own).
    A kernel compiled before the capture began is found by its function handle when it launches.
    Triton's on-disk cache serves the compiles as it does outside the capture; a kernel it served
    from another copy of the same source is described by a fresh compile (`_described`).
    """

    def __init__(self) -> None:
        self.case: int | None = None
        self._compiled: list[tuple[Any, Any, dict]] = []   # (jit_fn, CompiledKernel, compile info)
        self._launches: list[tuple[int, int | None, list[int] | None]] = []  # (handle, case, grid)
        self._saved_metadata: dict[int, tuple[Any, Any]] = {}
        self._previous_hook = None
        self._autotune = AutotuneWatch()

    def __enter__(self) -> "JitCapture":
        from triton import knobs

        self._previous_hook = knobs.runtime.jit_post_compile_hook
        knobs.runtime.jit_post_compile_hook = self._on_compiled
        knobs.runtime.launch_enter_hook.add(self._on_launch)
        for jit_fn in _live_jit_functions():  # kernels the JIT already holds still report their grids
            self._report_grid(jit_fn)
        self._autotune.install()  # launches made while the autotuner times its configs are not the forward's
        return self

    def __exit__(self, *exc: Any) -> None:
        from triton import knobs

        knobs.runtime.jit_post_compile_hook = self._previous_hook
        knobs.runtime.launch_enter_hook.remove(self._on_launch)
        self._autotune.uninstall()
        for jit_fn, original in self._saved_metadata.values():
            jit_fn.launch_metadata = original
        self._saved_metadata.clear()

    def _on_compiled(self, *, key: Any, repr: str, fn: Any, compile: dict, is_manual_warmup: bool,
                     already_compiled: bool) -> None:
        jit_fn = fn.jit_function
        kernel = jit_fn.device_caches[compile["device"]][0][key]
        self._compiled.append((jit_fn, kernel, compile))
        self._report_grid(jit_fn)
        if self._previous_hook is not None:
            self._previous_hook(key=key, repr=repr, fn=fn, compile=compile, is_manual_warmup=is_manual_warmup,
                                already_compiled=already_compiled)

    def _report_grid(self, jit_fn: Any) -> None:
        if id(jit_fn) in self._saved_metadata:
            return
        original = jit_fn.launch_metadata

        def with_grid(grid: Any, metadata: Any, args: dict) -> dict:
            extra = dict(original(grid, metadata, args)) if original is not None else {}
            return {**extra, "ladder_grid": [int(size) for size in grid]}

        self._saved_metadata[id(jit_fn)] = (jit_fn, original)
        jit_fn.launch_metadata = with_grid

    def _on_launch(self, metadata: Any) -> None:
        if self._autotune.tuning():
            return
        data = metadata.get()
        grid = data.get("ladder_grid")
        self._launches.append((data["function"], self.case, list(grid) + [1] * (3 - len(grid)) if grid else None))

    def _find_precompiled(self, handle: int) -> None:
        """A launch of a kernel compiled before the capture: find it among live JITFunctions."""
        for jit_fn in _live_jit_functions():
            for caches in list(jit_fn.device_caches.values()):
                for kernel in caches[0].values():
                    if getattr(kernel, "function", None) == handle:
                        info = {"signature": kernel.src.signature, "constants": kernel.src.constants,
                                "configs": [kernel.src.attrs]}
                        self._compiled.append((jit_fn, kernel, info))
                        return

    def kernels(self) -> list[CapturedKernel]:
        """The captured kernels, one per distinct compiled kernel, with their launches."""
        by_handle: dict[int, CapturedKernel] = {}
        records = []
        known = {getattr(kernel, "function", None) for _, kernel, _ in self._compiled}
        for handle, _, _ in self._launches:
            if handle not in known:
                self._find_precompiled(handle)
                known.add(handle)
        for jit_fn, kernel, info in self._compiled:
            kernel = kernel.result() if hasattr(kernel, "result") else kernel  # async compile mode
            record = nvidia_record(_described(kernel, jit_fn), jit_fn, backend="cuda", signature=info["signature"],
                                   constexprs=info["constants"], attrs=info["configs"][0])
            records.append(record)
            if kernel.function is not None:
                by_handle[kernel.function] = record
        for handle, case, grid in self._launches:
            if handle in by_handle:
                by_handle[handle].launches.append({"case": case, "grid": grid})
        return merge_and_label(records)


def _described(kernel: Any, jit_fn: Any) -> Any:
    """The kernel whose stages describe `jit_fn`'s own file.

    Compiling every kernel afresh during a capture would cost rung 3 a second compile of everything
    the script's earlier runs already put in the cache (tens of seconds for an autotuned script), to
    guard against a rare hit: the same source compiled from another copy. Only such a kernel is
    compiled again, with the options it was compiled with; the driver's numbers stay the loaded one's.
    """
    if located_in(kernel, jit_fn):
        return kernel
    import triton

    options = {name: _tupled(value) for name, value in kernel.metadata._asdict().items()}
    with fresh_compiles():
        fresh = triton.compile(kernel.src, target=kernel.metadata.target, options=options)
    return _OwnStages(kernel, fresh.asm)


def _tupled(value: Any) -> Any:
    """A metadata value as the compile options hold it: the cache's JSON turned their tuples to lists."""
    return tuple(_tupled(item) for item in value) if isinstance(value, list) else value


class _OwnStages:
    """A loaded kernel seen through a fresh compile's stages (the same code, this file's locations)."""

    def __init__(self, loaded: Any, asm: dict) -> None:
        self._loaded, self.asm = loaded, asm

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loaded, name)


def located_in(kernel: Any, jit_fn: Any) -> bool:
    """Whether a (possibly cached) kernel's IR points at this function's file.

    Triton's disk cache keys on the source text, not the file: an identical kernel compiled from
    another copy (a temp dir, another checkout) comes back with that copy's locations.
    """
    file, _ = source_position(jit_fn)
    return file is None or f'"{file}":' in kernel.asm.get("ttir", "")


def _live_jit_functions() -> list[Any]:
    from triton.runtime.jit import JITFunction

    # type(), not isinstance(): isinstance would consult lazy proxies' __class__ (and their warnings).
    return [obj for obj in gc.get_objects() if issubclass(type(obj), JITFunction)]


@contextlib.contextmanager
def fresh_compiles() -> Iterator[None]:
    """Compile instead of reusing Triton's on-disk cache while capturing.

    The cache key hashes a kernel's source, not its file: a cached kernel's IR may carry the
    locations of another copy of the same source (a deleted temp dir, another checkout), and a
    cache hit skips the compile stages. A capture must describe this file.
    """
    from triton import knobs

    saved = knobs.compilation.always_compile
    knobs.compilation.always_compile = True
    try:
        yield
    finally:
        knobs.compilation.always_compile = saved


def capture(solution_path: str | Path, problem_path: str | Path | None = None, case_index: int | None = None,
            argv: list[str] | None = None) -> list[CapturedKernel]:
    """Every kernel the solution's forward (or the script) compiles and launches, on this GPU; an
    autotuned kernel in the configs its timed runs chose, where they recorded their choice."""
    with chosen_configs(solution_path), JitCapture() as session:
        run_target(solution_path, problem_path, case_index, device="cuda",
                   on_case=lambda case: setattr(session, "case", case), argv=argv)
    return session.kernels()
