"""Interleaved device timing of several contestants, each in its own process, on the same fresh inputs.

The judge (``ladder.runner.evaluate``) drives it; every contestant is a process that runs one solution
(or the reference) and answers requests (``ladder.runner.contestant``). One repetition, for each
contestant in a shuffled order:

1. ``arm``: the contestant makes the repetition's inputs from a seed the judge just derived
   (the same for every contestant in this repetition, never seen before by any of them, so nothing
   keyed on pointers or values can be reused), synchronizes and sets the call up;
2. the judge writes a buffer larger than L2 (256 MB) from its own process, so no one starts warm;
3. ``go``: the contestant queues idle device work long enough to cover
   the host time of enqueueing its call (measured during warm-up), so the timed call does not
   absorb host-side launch overhead, records a start event, calls the forward, makes the current
   stream wait for every stream Triton launched on, records the end event and synchronizes. The
   judge's own host clock runs from sending ``go`` to its answer;
4. what the launch guards saw (a kernel ran, on the current stream, from this thread, received
   every output and left none of it unwritten; how many launches the call made) and the
   torch-call recorders comes back with the next request; on a random subset of repetitions the judge has the outputs written (``keep``)
   and compares them with the float64 reference of that repetition's inputs. Outputs are then
   poisoned, so memory the allocator hands back next time holds no correct answer.

The repetitions count comes from a warm-up estimate (enough repetitions for about ``budget_s`` of
the slowest contestant, clamped to [min_reps, max_reps]). The summary reports the median and the
spread (p10-p90, IQR) of the per-call times in milliseconds.

**The host-side bound.** Event times come from the contestant's process, where candidate code runs.
The judge's clock around ``go`` cannot be touched from there: it is the call plus a constant cost
(queued idle work, the round trip, the synchronize), the same for every contestant of a case. The
reference's process runs no candidate code, so its clock minus its events measures that constant;
a candidate whose own clock (its lower quartile: a busy host only ever delays an answer), less the
constant, exceeds ``HOST_FACTOR`` times its claimed event time plus ``HOST_SLACK_MS`` reported times
its calls did not take, and is rejected with both numbers.
"""
from __future__ import annotations

import contextlib
import gc
import math
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

from ladder.runner.channel import ContestantLost
from ladder.runner.compare import Verdict, flatten_outputs
from ladder.runner.guards import INPUT_ALIAS, Window, shares_memory, unwritten_count
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

HOST_FACTOR = 2.0
HOST_SLACK_MS = 0.5
MAX_VERIFIED = 4  # outputs of timed calls compared with the reference, at random (and the last)
# A timed call faster than this share of the contestant's warm-up estimate is verified too (up to
# MAX_VERIFIED of them): a forward that skips its work in some calls is fast in exactly those.
FAST_SHARE = 0.5
_perf_counter = time.perf_counter


@dataclass
class Timed:
    """One contestant as the timing loop drives it."""

    name: str
    channel: Any  # runner.channel.PipeChannel or LocalChannel
    which: str = "model"  # the contestant's callable: "model", or "torch.compile" in the reference's
    guarded: bool = True  # a candidate: guards apply, outputs are verified, the host bound is checked
    trusted: bool = False  # runs no candidate code: its clock calibrates the host bound


class ContestantError(Exception):
    """A contestant failed while being timed (``name`` says which; ``device_usable`` whether the
    device survived it)."""

    def __init__(self, name: str, message: str, device_usable: bool = True):
        super().__init__(f"{name}: {message}")
        self.name, self.message, self.device_usable = name, message, device_usable


@dataclass
class Measurement:
    times_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)
    verified: int = 0
    violation: str | None = None
    launches: list[int] = field(default_factory=list)  # the forward's own launches in each timed call
    tuning_launches: int = 0  # launches an autotuner made while timed calls ran (0 once warmed up)
    warmup_calls: int = 0  # the untimed calls made before the first timed one

    def steady_launches(self) -> int | None:
        """Launches per forward in the warmed-up, timed calls (their most common count)."""
        return statistics.mode(self.launches) if self.launches else None

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
    timeout_s: float = 300.0  # the longest one request to a contestant may take


def quantile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolated linearly (as numpy's and Triton's default)."""
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def stall_covering(host_ms: float) -> float:
    """Milliseconds of idle device work that cover a call whose host side takes ``host_ms``: twice
    that and a margin, capped so that a pathologically slow host side costs seconds, not minutes
    (its calls then include host time)."""
    return min(2.0 * host_ms + 0.1, 50.0)


def summarize(times_ms: list[float]) -> dict[str, float]:
    ordered = sorted(times_ms)
    p10, p25, median, p75, p90 = (quantile(ordered, q) for q in (0.1, 0.25, 0.5, 0.75, 0.9))
    return {
        "median": median,
        "p10": p10,
        "p25": p25,
        "p75": p75,
        "p90": p90,
        "iqr": p75 - p25,
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


def output_violation(window: Window, output: Any, input_spans: list[tuple[int, int]]) -> str | None:
    """Checked on every timed call, not just the verified ones: no output may be an input's memory,
    each must have been passed to a kernel in this very call, and no element may still hold the
    poison of the previous call."""
    for position, tensor in enumerate(flatten_outputs(output)):
        if not isinstance(tensor, torch.Tensor) or not tensor.numel():
            continue
        if shares_memory(tensor, input_spans):
            return f"returned output {position}, {INPUT_ALIAS}"
        if not window.wrote(tensor):
            return f"returned output {position}, which no Triton kernel wrote in that call"
        if tensor.is_floating_point() and unwritten_count(tensor):
            return f"left {unwritten_count(tensor)} elements of output {position} unwritten"
    return None


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No garbage-collection pause in this process while its clock runs around the calls."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def measure(timed: list[Timed], *, seed_of: Callable[[int], int], settings: Settings, rng: Any,
            flush: Callable[[], None], verify: Callable[[str, int, str], Verdict], exchange: Path,
            private_inputs: bool = False, progress: Callable[[str], None] = lambda message: None,
            account: Callable[[str, float], None] = lambda part, seconds: None) -> dict[str, Measurement]:
    """Time the contestants, interleaved, and return one ``Measurement`` per name.

    ``seed_of(rep)`` is the inputs' seed of a repetition (``rep`` -1 is the warm-up);
    ``verify(name, seed, path)`` compares the outputs a contestant wrote to ``path`` with the
    reference on that seed's inputs. ``private_inputs`` gives each call its own copy of the inputs
    (for problems whose reference writes to its inputs). Raises ``ContestantError`` naming the
    contestant when one fails. ``account(part, seconds)`` gets, at the end, the wall seconds of each
    part of the loop (warm-up, arm, flush, go, verify): where a judge run's timing time goes.
    """
    results = {t.name: Measurement() for t in timed}
    spent = dict.fromkeys(("warmup", "arm", "flush", "go", "verify"), 0.0)

    @contextlib.contextmanager
    def part(name: str) -> Iterator[None]:
        began = _perf_counter()
        try:
            yield
        finally:
            spent[name] += _perf_counter() - began

    def ask(contestant: Timed, command: dict[str, Any]) -> dict[str, Any]:
        try:
            reply = contestant.channel.request(command, settings.timeout_s)
        except ContestantLost as lost:
            raise ContestantError(contestant.name, str(lost), device_usable=True) from None
        if "error" in reply:
            raise ContestantError(contestant.name, reply["error"], reply.get("device_usable", True))
        return reply

    # Warm-up (compilation, autotuning, caches) and per-call estimates for the repetition count.
    estimate_ms, host_ms, estimates = 0.0, 0.0, {}
    for contestant in timed:
        with part("warmup"):
            reply = ask(contestant, {"op": "warmup", "which": contestant.which, "seed": seed_of(-1),
                                     "calls": settings.warmup_calls, "private": private_inputs})
        estimate_ms, host_ms = max(estimate_ms, reply["estimate_ms"]), max(host_ms, reply["host_ms"])
        estimates[contestant.name] = float(reply["estimate_ms"])
        results[contestant.name].warmup_calls = settings.warmup_calls + 1  # the calls, then the estimate
    reps = settings.reps or int(min(settings.max_reps, max(settings.min_reps,
                                                           settings.budget_s * 1e3 / max(estimate_ms, 1e-3))))
    count = max(1, min(reps, MAX_VERIFIED, math.ceil(reps * settings.verify_fraction)))
    verified_reps = set(rng.sample(range(reps), count)) | {reps - 1}
    stall_ms = stall_covering(host_ms)  # idle device work covering one call's host time
    progress(f"timing {len(timed)} contestants x {reps} repetitions")
    started = _perf_counter()
    unreported: dict[str, int] = {}  # contestant -> the repetition whose report is still to come
    fast_verified = dict.fromkeys(estimates, 0)  # contestant -> its calls verified for being fast

    def verified(contestant: Timed, rep: int, time_ms: float) -> bool:
        """Whether this call's outputs are compared with the reference: one of the reps drawn at
        random, or one suspiciously faster than the contestant's warm-up."""
        if rep in verified_reps:
            return True
        if time_ms < FAST_SHARE * estimates[contestant.name] and fast_verified[contestant.name] < MAX_VERIFIED:
            fast_verified[contestant.name] += 1
            return True
        return False

    def take(contestant: Timed, report: dict[str, Any] | None) -> None:
        rep = unreported.pop(contestant.name, None)
        result = results[contestant.name]
        if report and isinstance(report.get("launches"), int) and not isinstance(report["launches"], bool):
            result.launches.append(report["launches"])
            result.tuning_launches += int(report.get("tuning_launches") or 0)
        if contestant.guarded and report and report.get("violation") and result.violation is None:
            result.violation = f"timed call {rep + 1}: {report['violation']}"

    def keep_and_verify(contestant: Timed, seed: int) -> Verdict | None:
        """The timed call's outputs written and compared with the reference (None: its report,
        which came with them, already rejected it)."""
        result = results[contestant.name]
        path = str(exchange / f"{contestant.name}-timed-{rng.getrandbits(64):016x}.pt")
        take(contestant, ask(contestant, {"op": "keep", "output": path})["report"])
        if result.violation is not None:
            return None
        verdict = verify(contestant.name, seed, path)
        result.verified += 1
        return verdict

    # The first flush allocates its buffer: here, before any contestant is armed. In the judge's own
    # process (trusted code) a solution's recorders are on from ``arm`` to ``go``, and would count
    # the judge's allocation as the solution's torch compute.
    flush()
    try:
        for rep in range(reps):
            seed = seed_of(rep)
            order = [t for t in timed if results[t.name].violation is None]
            rng.shuffle(order)
            for contestant in order:
                result = results[contestant.name]
                with part("arm"):
                    armed = ask(contestant, {"op": "arm", "seed": seed, "which": contestant.which,
                                             "stall_ms": stall_ms, "private": private_inputs})
                take(contestant, armed.get("previous"))
                if result.violation is not None:
                    continue
                with part("flush"):
                    flush()
                sent = _perf_counter()
                done = ask(contestant, {"op": "go"})
                result.wall_ms.append((_perf_counter() - sent) * 1e3)
                spent["go"] += result.wall_ms[-1] / 1e3
                result.times_ms.append(float(done["time_ms"]))
                unreported[contestant.name] = rep
                if contestant.guarded and verified(contestant, rep, result.times_ms[-1]):
                    with part("verify"):
                        verdict = keep_and_verify(contestant, seed)
                    if verdict is not None and not verdict.ok:
                        result.violation = (f"timed call {rep + 1} returned a wrong result ({verdict.reason}): "
                                            "outputs cached or work skipped between calls")
            if rep % 20 == 19 and _perf_counter() - started > 1.0:
                progress(f"timing repetition {rep + 1}/{reps}")
        for contestant in timed:
            if contestant.name in unreported:
                take(contestant, ask(contestant, {"op": "report"})["report"])
    finally:
        for name, seconds in spent.items():
            account(name, seconds)
    return results


def host_bound(measurements: dict[str, Measurement], timed: list[Timed]) -> dict[str, dict[str, float]]:
    """Per contestant: the judge's clock (the lower quartile of its calls) and the events (their
    median), in ms, and what the clock implies the call took once the constant cost the trusted
    contestant shows is taken off (``implied_ms``).

    The clock's lower quartile, not its median: other work on the judge's machine delays some calls'
    answers (a busy host preempts the contestant after its call), never hastens one, and a
    contestant whose events lie about most calls shows it in its fastest ones as well. A guarded
    contestant whose implied time exceeds what its events claim by more than the bound allows gets
    its ``violation`` set here.
    """
    trusted = next((t.name for t in timed if t.trusted and measurements[t.name].wall_ms), None)
    if trusted is None:
        return {}
    calibration = measurements[trusted]
    overhead = statistics.median(w - e for w, e in zip(calibration.wall_ms, calibration.times_ms))
    bounds = {}
    for contestant in timed:
        measured = measurements[contestant.name]
        if not measured.wall_ms:
            continue
        wall, events = summarize(measured.wall_ms)["p25"], statistics.median(measured.times_ms)
        implied = wall - overhead
        bounds[contestant.name] = {"wall_ms": wall, "events_ms": events, "overhead_ms": overhead,
                                   "implied_ms": implied}
        if contestant.guarded and measured.violation is None and implied > HOST_FACTOR * events + HOST_SLACK_MS:
            measured.violation = (f"its event times disagree with the judge's host clock: the events claim "
                                  f"{events:.4g} ms per call, the clock measured {wall:.4g} ms of which "
                                  f"{overhead:.4g} ms is the harness's own cost, so at least {implied:.4g} ms")
    return bounds
