"""Time one captured launch by replaying it, the way the runner times a forward.

A launch site's variant (`ladder.runner.capture.sites`) holds its first launch's own arguments; replaying it
after the script ended launches the same compiled kernel on the same tensors, grid and options. On a
device each repetition is timed as the judge times a call (`ladder.runner.timing`): the L2 is flushed (a
buffer larger than it is written), idle device work long enough to cover the replay's host-side
cost is queued ahead, device events bracket the launch alone, and the summary is the median with
its spread over the repetitions. Warm-up replays come first (the kernel is compiled and autotuned
already: the script ran it).

A backend without device events (Triton's interpreter on the CPU) is timed on the host clock, with
no flush: the numbers then say how long the interpreter took, never what a device would, and the
result says so (`clock: host`).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.timing import summarize

WARMUP_REPLAYS = 2
_perf_counter = time.perf_counter


def time_replay(replay: Callable[[], Any], backend: Any, *, budget_s: float = 0.1, min_reps: int = 10,
                max_reps: int = 100) -> dict[str, Any]:
    """The replay's time per launch in ms (`timing.summarize`'s fields) and how it was measured."""
    if not backend.can_time:
        return _host_timed(replay, budget_s, min_reps, max_reps)
    flush = _flush_buffer(backend)
    for _ in range(WARMUP_REPLAYS):
        replay()
    backend.synchronize()
    start, end = backend.event(), backend.event()
    begun = _perf_counter()
    backend.record(start)
    replay()
    backend.record(end)
    host_ms = (_perf_counter() - begun) * 1e3
    backend.synchronize()
    estimate_ms = max(backend.elapsed_ms(start, end), 1e-3)
    reps = int(min(max_reps, max(min_reps, budget_s * 1e3 / estimate_ms)))
    stall_ms = min(2.0 * host_ms + 0.1, 50.0)  # as the judge covers a call's host time (runner.timing)
    times = []
    for _ in range(reps):
        if flush is not None:
            flush.zero_()
        start, end = backend.event(), backend.event()
        backend.stall(stall_ms)
        backend.record(start)
        replay()
        backend.record(end)
        backend.synchronize()
        times.append(float(backend.elapsed_ms(start, end)))
    return {**summarize(times), "clock": "events", "l2_flushed": flush is not None}


def _host_timed(replay: Callable[[], Any], budget_s: float, min_reps: int, max_reps: int) -> dict[str, Any]:
    replay()
    begun = _perf_counter()
    replay()
    estimate_s = max(_perf_counter() - begun, 1e-6)
    reps = int(min(max_reps, max(min_reps, budget_s / estimate_s)))
    times = []
    for _ in range(reps):
        begun = _perf_counter()
        replay()
        times.append((_perf_counter() - begun) * 1e3)
    return {**summarize(times), "clock": "host", "l2_flushed": False}


def _flush_buffer(backend: Any) -> Any:
    """A buffer larger than the device's L2, written before each repetition (None: no L2 to flush)."""
    if not backend.l2_flush_bytes:
        return None
    import torch

    return torch.empty(backend.l2_flush_bytes // 4, dtype=torch.int32, device=backend.device())
