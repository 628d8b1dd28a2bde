"""`AutotuneWatch`: whether the launch being made now is an autotuner timing one of its configs.

Triton's autotuner times every config of a kernel the first time it meets a new key: each config
is launched many times inside `Autotuner._bench` (on a GPU, `do_bench` runs it for about 100 ms),
then the chosen config is launched once, which is the call's own launch. Anything that counts or
records launches of a forward or a script (the runner's launch guards, the JIT capture, the
profiling driver, the launch-site recorder) must tell the two apart, or an autotuned GEMM reads as
a forward of a thousand launches. While the watch is active, `Autotuner._bench` is wrapped so that
`tuning()` is true on the thread that runs it; the depth is per thread, so a launch another thread
makes meanwhile is not taken for tuning.
"""
from __future__ import annotations

import threading
from typing import Any

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class AutotuneWatch:
    """Use as `with AutotuneWatch() as watch: ... watch.tuning() ...`, or `install()`/`uninstall()`."""

    def __init__(self) -> None:
        self._depth = threading.local()
        self._original: Any = None

    def tuning(self) -> bool:
        """Whether an autotuner on this thread is benchmarking one of its configs right now."""
        return getattr(self._depth, "value", 0) > 0

    def install(self) -> None:
        from triton.runtime.autotuner import Autotuner

        original, depth = Autotuner._bench, self._depth

        def bench(autotuner: Any, *args: Any, **kwargs: Any) -> Any:
            depth.value = getattr(depth, "value", 0) + 1
            try:
                return original(autotuner, *args, **kwargs)
            finally:
                depth.value -= 1

        bench.__wrapped__ = original
        self._original, Autotuner._bench = original, bench

    def uninstall(self) -> None:
        from triton.runtime.autotuner import Autotuner

        if self._original is not None:
            Autotuner._bench, self._original = self._original, None

    def __enter__(self) -> AutotuneWatch:
        self.install()
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()
