"""Interleaved device timing of several contestants on the same fresh inputs.

One repetition:

1. fresh inputs from a new seed (the same for every contestant in this repetition, never seen
   before by any of them, so nothing keyed on pointers or values can be reused);
2. queue idle device work long enough to cover the host time of enqueueing the whole repetition
   (measured during warm-up), so no timed call starts on an idle device and absorbs host-side
   launch overhead; then, for each contestant, in a shuffled order: write a buffer larger than L2 (256 MB) so no one
   starts warm, record a start event, call the forward, make the current stream wait for every
   stream Triton launched on, record the end event;
3. synchronize, read the event times, check the launch guards of each timed call (a kernel ran, on
   the current stream, from this thread, received every output and left none of it unwritten),
   verify the outputs of a random subset of repetitions against the float64 reference of that
   repetition's inputs, then fill every output with the poison pattern (so memory the allocator
   hands back next time holds no correct answer).

The repetitions count comes from a warm-up estimate (enough repetitions for about ``budget_s`` of
the slowest contestant, clamped to [min_reps, max_reps]). The summary reports the median and the
spread (p10-p90, IQR) of the per-call times in milliseconds.

Timing primitives are bound when this module is imported, before any candidate code runs, so a
candidate that patches ``torch.cuda.Event`` afterwards does not change what the runner measures.
"""
from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from runner.compare import Verdict, flatten_outputs
from runner.guards import LaunchTracer, Window, poison, spans_overlap, storage_span, unwritten_count
from runner.inputs import clone

_perf_counter = time.perf_counter


@dataclass
class Contestant:
    """One thing to time: a name, a forward on a list of inputs, and how to watch it."""

    name: str
    call: Callable[[list], Any]
    guarded: bool  # Triton launch guards apply (candidate solutions; not the eager reference)
    verify: bool  # outputs of timed calls are checked against the reference


class ContestantError(Exception):
    """A contestant raised while being timed (``name`` says which; ``error`` is the original)."""

    def __init__(self, name: str, error: BaseException):
        super().__init__(f"{name}: {error}")
        self.name, self.error = name, error


@dataclass
class Measurement:
    times_ms: list[float] = field(default_factory=list)
    verified: int = 0
    violation: str | None = None

    def summary(self) -> dict[str, float] | None:
        return summarize(self.times_ms) if self.times_ms and self.violation is None else None


@dataclass
class Settings:
    reps: int | None = None
    min_reps: int = 30
    max_reps: int = 300
    budget_s: float = 1.0
    warmup_calls: int = 3
    verify_fraction: float = 0.1


def summarize(times_ms: list[float]) -> dict[str, float]:
    ordered = sorted(times_ms)

    def quantile(q: float) -> float:
        position = q * (len(ordered) - 1)
        low, high = math.floor(position), math.ceil(position)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return {
        "median": quantile(0.5),
        "p10": quantile(0.1),
        "p25": quantile(0.25),
        "p75": quantile(0.75),
        "p90": quantile(0.9),
        "iqr": quantile(0.75) - quantile(0.25),
        "mean": statistics.fmean(ordered),
        "min": ordered[0],
        "reps": len(ordered),
    }


def guard_violation(window: Window, current_stream: int | None) -> str | None:
    """Why a guarded call's launches cannot be trusted, or None."""
    if not window.launches:
        return "launched no Triton kernel"
    foreign = window.streams() - {current_stream}
    if current_stream is not None and foreign:
        return f"launched Triton kernels on {len(foreign)} side stream(s)"
    if window.foreign_threads():
        return f"launched {window.foreign_threads()} Triton kernel(s) from another thread"
    return None


def output_violation(window: Window, output: Any) -> str | None:
    """Checked on every timed call, not just the verified ones: each output must have been passed to
    a kernel in this very call, and no element may still hold the poison of the previous call."""
    for position, tensor in enumerate(flatten_outputs(output)):
        if not isinstance(tensor, torch.Tensor) or not tensor.numel():
            continue
        if not window.wrote(tensor):
            return f"returned output {position}, which no Triton kernel wrote in that call"
        if tensor.is_floating_point() and unwritten_count(tensor):
            return f"left {unwritten_count(tensor)} elements of output {position} unwritten"
    return None


def _poison_outputs(output: Any, keep: list[tuple[int, int]]) -> None:
    """Poison every output tensor except those sharing memory with ``keep`` (the inputs)."""
    for tensor in flatten_outputs(output):
        if isinstance(tensor, torch.Tensor) and not any(
                spans_overlap(storage_span(tensor), span) for span in keep):
            poison(tensor)


def measure(contestants: list[Contestant], make_inputs: Callable[[int], list], backend: Any,
            tracer: LaunchTracer, verify: Callable[[list, Any], Verdict], settings: Settings,
            seed: int, private_inputs: bool = False,
            progress: Callable[[str], None] = lambda message: None) -> dict[str, Measurement]:
    """Time the contestants, interleaved, and return one ``Measurement`` per name.

    ``private_inputs`` gives each contestant its own copy of the repetition's inputs (made before
    its timed region), for problems whose reference writes to its inputs.
    Raises ``ContestantError`` naming the contestant when one raises.
    """
    rng = random.Random(seed)
    results = {contestant.name: Measurement() for contestant in contestants}
    flush = torch.empty(backend.l2_flush_bytes // 4, dtype=torch.int32, device=backend.device())

    host_ms: dict[str, float] = {}

    def timed(contestant: Contestant, inputs: list) -> tuple[Any, Window, Any, Any]:
        start, end = backend.event(), backend.event()
        if private_inputs:
            inputs = clone(inputs)
        enqueue_started = _perf_counter()
        with tracer.watch(contestant.name) as window:
            start.record()
            try:
                output = contestant.call(inputs)
            except Exception as error:
                raise ContestantError(contestant.name, error) from error
            backend.join_streams(window.streams())
            end.record()
        host_ms[contestant.name] = (_perf_counter() - enqueue_started) * 1e3
        return output, window, start, end

    # Warm-up (compilation, autotuning, caches) and a per-call estimate for the repetition count.
    inputs = make_inputs(rng.randrange(2**31))
    estimate_ms = 0.0
    for contestant in contestants:
        for _ in range(settings.warmup_calls):
            _poison_outputs(timed(contestant, inputs)[0], [])
        try:
            backend.synchronize()
            _, _, start, end = timed(contestant, inputs)
            backend.synchronize()
        except ContestantError:
            raise
        except Exception as error:  # asynchronous device errors surface at the synchronize
            raise ContestantError(contestant.name, error) from error
        estimate_ms = max(estimate_ms, start.elapsed_time(end))
    reps = settings.reps or int(min(settings.max_reps, max(settings.min_reps,
                                                           settings.budget_s * 1e3 / max(estimate_ms, 1e-3))))
    verified_reps = set(rng.sample(range(reps), max(1, min(reps, math.ceil(reps * settings.verify_fraction)))))
    verified_reps.add(reps - 1)
    # Host time to enqueue one repetition, with a margin for flushes and bookkeeping; capped so a
    # pathologically slow host side costs seconds, not minutes (its calls then include host time).
    stall_ms = min(2.0 * sum(host_ms.values()) + 0.1, 50.0)
    progress(f"timing {len(contestants)} contestants x {reps} repetitions")
    tracer.stray.clear()
    started = _perf_counter()

    for rep in range(reps):
        inputs = make_inputs(rng.randrange(2**31))
        input_spans = [storage_span(x) for x in inputs if isinstance(x, torch.Tensor)]
        order = [c for c in contestants if results[c.name].violation is None]
        rng.shuffle(order)
        calls = []
        backend.stall(stall_ms)
        for contestant in order:
            flush.zero_()
            calls.append((contestant, *timed(contestant, inputs)))
        try:
            backend.synchronize()
        except Exception as error:
            raise ContestantError(calls[-1][0].name if len(calls) == 1 else "several contestants", error) from error
        for contestant, output, window, start, end in calls:
            result = results[contestant.name]
            result.times_ms.append(start.elapsed_time(end))
            if contestant.guarded:
                problem = guard_violation(window, backend.current_stream()) or output_violation(window, output)
                if problem is None and tracer.stray:
                    problem = f"{len(tracer.stray)} Triton launch(es) happened outside any forward"
                if problem is not None:
                    result.violation = f"timed call {rep + 1}: {problem}"
                elif contestant.verify and rep in verified_reps:
                    verdict = verify(inputs, output)
                    result.verified += 1
                    if not verdict.ok:
                        result.violation = (f"timed call {rep + 1} returned a wrong result ({verdict.reason}): "
                                            "outputs cached or work skipped between calls")
            _poison_outputs(output, input_spans)
        del calls
        if rep % 20 == 19 and _perf_counter() - started > 1.0:
            progress(f"timing repetition {rep + 1}/{reps}")
    return results
