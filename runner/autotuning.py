"""Autotuners in a contestant time their configurations the way the judge times the forward.

Triton's autotuner picks a config by timing each with `do_bench`: per repetition an L2 flush, a
start event, the call, an end event. The events bracket device work only while the device is
still busy with the flush when the call is enqueued. In a contestant the call's host side is slow
(the launch guards wrap every launch, the recorders and the sentinel look at every torch call);
once it outlasts the flush, the device waits between the start event and the kernel, each
config's time carries the wait, and among kernels of a few tenths of a millisecond the wait can
outweigh the differences between configs. The judge then times the config the autotuner kept.

Seen on the H200 (``bench/results/autotune-choice-h200.txt``, ``suite-rules/README.md``): inside the
judge's sandboxed contestant, the autotuned candidate of level2/09 ran one case at 0.208 ms, the
cost of the slowest config of its space, where the fastest config costs 0.101 ms and the launch's
own config (first in the space) 0.171 ms, so the gate refused it; with this benchmarker the same
candidate ran that case at 0.100 ms. Outside the sandbox, with the launch guards and recorders on,
Triton's own benchmarker kept the fastest config. Inside a real sandboxed contestant
(``bench/results/autotune-choice-sandboxed-h200.txt``) a checked call's host side took 15.8 ms:
under Triton's benchmarker every config read 0.27-0.30 ms and the slowest was kept; under this one
the fastest.

`do_bench` here is Triton's with the judge's remedy (``ladder.runner.timing``): before each
repetition's start event, idle device work (``backend.stall``) long enough to cover the call's
host time, measured on the host clock first. The repetitions fill the same time budget as
Triton's, stall included, so tuning takes no longer. `install` makes it the benchmarker of every
autotuner built with Triton's default (`driver.active.get_benchmarker`); an autotuner given its own
``do_bench`` keeps it (that is candidate code, run as such).
"""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Sequence

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.timing import quantile, stall_covering

ESTIMATE_CALLS = 5
_perf_counter = time.perf_counter


def benchmarker(backend: Any, driver: Any = None) -> Callable[..., Any]:
    """A drop-in `triton.testing.do_bench` that keeps host time out of the events (module
    docstring). ``driver`` flushes L2 (Triton's active driver unless given)."""
    from triton import runtime

    def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Any = None,
                 quantiles: Sequence[float] | None = None, return_mode: str = "mean") -> Any:
        flusher = driver or runtime.driver.active
        fn()
        backend.synchronize()
        cache = flusher.get_empty_cache_for_benchmark()
        host_ms = 0.0
        for _ in range(ESTIMATE_CALLS):
            flusher.clear_cache(cache)
            began = _perf_counter()
            fn()
            host_ms = max(host_ms, (_perf_counter() - began) * 1e3)
        stall_ms = stall_covering(host_ms)

        def timed(calls: int) -> list[float]:
            starts, ends = [backend.event() for _ in range(calls)], [backend.event() for _ in range(calls)]
            for start, end in zip(starts, ends):
                for tensor in grad_to_none or ():
                    tensor.grad = None
                flusher.clear_cache(cache)
                backend.stall(stall_ms)
                backend.record(start)
                fn()
                backend.record(end)
            backend.synchronize()
            return [backend.elapsed_ms(start, end) for start, end in zip(starts, ends)]

        estimate_ms = max(statistics.median(timed(ESTIMATE_CALLS)), 1e-6)
        for _ in range(max(1, int(warmup / estimate_ms))):
            fn()
        return summarized(timed(max(1, int(rep / (estimate_ms + stall_ms)))), quantiles, return_mode)

    return do_bench


def summarized(times: list[float], quantiles: Sequence[float] | None, return_mode: str) -> Any:
    """What `triton.testing.do_bench` returns for these times: the quantiles asked for (one value
    when one is asked), else the statistic ``return_mode`` names (or every time, for "all")."""
    if quantiles is not None:
        values = [quantile(sorted(times), q) for q in quantiles]
        return values[0] if len(values) == 1 else values
    statistic = {"all": list, "min": min, "max": max, "mean": statistics.mean, "median": statistics.median}
    return statistic[return_mode](times)


def install(backend: Any) -> None:
    """Every autotuner of this process that uses Triton's default benchmarker times with
    ``benchmarker(backend)`` from now on (those already built keep what they resolved)."""
    from triton import runtime

    bench = benchmarker(backend)
    runtime.driver.active.get_benchmarker = lambda: bench
