"""`LaunchInterceptor`: the base of the compile-only captures, which compile launches instead of running them.

`ladder.runner.backends.aot` (NVIDIA targets) and `ladder.runner.ascend_ir` (Triton-Ascend) subclass it to
compile each launch for a target this machine may not have.
"""
from __future__ import annotations

from typing import Any

from ladder.runner.capture.labels import merge_and_label
from ladder.runner.capture.record import CapturedKernel
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class LaunchInterceptor:
    """While active, Triton launches are handed to `compile_launch` (and autotuned ones to
    `compile_configs`) instead of running: the base of the compile-only captures, which compile
    for a target this machine may not have and record a `CapturedKernel` per compilation."""

    def __init__(self) -> None:
        self.case: int | None = None
        self._records: list[CapturedKernel] = []
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> "LaunchInterceptor":
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction

        session = self
        self._saved = {"jit": JITFunction.run, "autotune": Autotuner.run}

        def jit_run(jit_fn: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            return session.compile_launch(jit_fn, args, kwargs, grid=grid, warmup=warmup)

        def autotune_run(autotuner: Any, *args: Any, **kwargs: Any) -> Any:
            return session.compile_configs(autotuner, args, kwargs)

        JITFunction.run = jit_run
        Autotuner.run = autotune_run
        return self

    def __exit__(self, *exc: Any) -> None:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction

        JITFunction.run = self._saved["jit"]
        Autotuner.run = self._saved["autotune"]

    def set_case(self, case: int | None) -> None:
        self.case = case

    def kernels(self) -> list[CapturedKernel]:
        return merge_and_label(self._records)

    def compile_launch(self, jit_fn: Any, args: tuple, kwargs: dict, *, grid: Any, warmup: bool) -> Any:
        raise NotImplementedError

    def compile_configs(self, autotuner: Any, args: tuple, kwargs: dict) -> Any:
        raise NotImplementedError
