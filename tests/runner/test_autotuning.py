"""Autotuners in a contestant time configs with host time kept out of the events (runner.autotuning).

The device is simulated: one queue of work that starts no earlier than the host enqueues it, and a
host clock that each call's host side advances. Triton's own `do_bench` is the same loop without
the stall, so `unstalled` below is what an autotuner measured before.
"""
from __future__ import annotations

import pytest
import triton.testing

from ladder.runner import autotuning
from ladder.runner.backends.base import Backend
from ladder.runner.contestant import Contestant

FLUSH_MS = 0.06  # a 256 MB write at ~4 TB/s


class Event:
    at = 0.0


class SimulatedDevice(Backend):
    """Host and device clocks in ms; the device runs queued work in order, never before it is queued."""

    name = "simulated"

    def __init__(self, stalls: bool = True):
        self.host = 0.0
        self.free_at = 0.0
        self.stalls = stalls

    def enqueue(self, device_ms: float) -> None:
        self.free_at = max(self.free_at, self.host) + device_ms

    def event(self) -> Event:
        return Event()

    def record(self, event: Event) -> None:
        self.enqueue(0.0)
        event.at = self.free_at

    def elapsed_ms(self, start: Event, end: Event) -> float:
        return end.at - start.at

    def synchronize(self) -> None:
        self.host = max(self.host, self.free_at)

    def stall(self, milliseconds: float) -> None:
        if self.stalls:
            self.enqueue(milliseconds)

    # the L2 flush, as Triton's driver offers it
    def get_empty_cache_for_benchmark(self) -> object:
        return object()

    def clear_cache(self, cache: object) -> None:
        self.enqueue(FLUSH_MS)

    def call(self, host_ms: float, kernel_ms: float):
        def fn() -> None:
            self.host += host_ms
            self.enqueue(kernel_ms)
        return fn


@pytest.fixture
def device(monkeypatch) -> SimulatedDevice:
    simulated = SimulatedDevice()
    monkeypatch.setattr(autotuning, "_perf_counter", lambda: simulated.host / 1e3)
    return simulated


def unstalled(device: SimulatedDevice, fn, quantiles=(0.5, 0.2, 0.8)):
    device.stalls = False
    try:
        return autotuning.benchmarker(device, driver=device)(fn, quantiles=quantiles)
    finally:
        device.stalls = True


def test_a_call_whose_host_side_outlasts_the_flush_is_timed_by_its_device_work_alone(device):
    median, low, high = autotuning.benchmarker(device, driver=device)(device.call(host_ms=0.3, kernel_ms=0.1),
                                                                      quantiles=(0.5, 0.2, 0.8))
    assert median == low == high == pytest.approx(0.1)


def test_without_the_stall_the_same_call_reads_as_its_host_time(device):
    median, _, _ = unstalled(device, device.call(host_ms=0.3, kernel_ms=0.1))
    assert median == pytest.approx(0.3 - FLUSH_MS)


def test_the_autotuners_choice_follows_device_time_not_host_time(device):
    """The config with the faster kernel but the slower host side (say, more arguments for the
    guards to record) wins once host time is out of the events; without the stall it lost."""
    configs = {"big tiles": device.call(host_ms=0.40, kernel_ms=0.10),
               "small tiles": device.call(host_ms=0.15, kernel_ms=0.12)}
    bench = autotuning.benchmarker(device, driver=device)
    stalled = {name: bench(fn, quantiles=(0.5, 0.2, 0.8)) for name, fn in configs.items()}
    before = {name: unstalled(device, fn) for name, fn in configs.items()}
    assert min(stalled, key=stalled.get) == "big tiles"
    assert min(before, key=before.get) == "small tiles"


def test_the_repetitions_fill_tritons_time_budget_stall_included(device):
    calls = []

    def fn() -> None:
        calls.append(device.host)
        device.call(host_ms=0.2, kernel_ms=0.5)()

    autotuning.benchmarker(device, driver=device)(fn, warmup=5.2, rep=30.5)
    stall_ms = autotuning.stall_covering(0.2)
    warmups, repetitions = int(5.2 / 0.5), int(30.5 / (0.5 + stall_ms))
    assert len(calls) == 1 + autotuning.ESTIMATE_CALLS * 2 + warmups + repetitions


def test_gradients_named_are_cleared_before_each_repetition(device):
    class Parameter:
        grad = "stale"

    seen = []
    parameter = Parameter()

    def fn() -> None:
        seen.append(parameter.grad)
        parameter.grad = "accumulated"
        device.call(host_ms=0.01, kernel_ms=0.5)()

    autotuning.benchmarker(device, driver=device)(fn, warmup=1, rep=5, grad_to_none=[parameter])
    assert seen[-1] is None


@pytest.mark.parametrize("quantiles, mode", [((0.5, 0.2, 0.8), "mean"), ((0.5,), "mean"), (None, "mean"),
                                             (None, "median"), (None, "min"), (None, "max"), (None, "all")])
def test_the_result_has_the_form_tritons_do_bench_gives(quantiles, mode):
    times = [0.31, 0.12, 0.5, 0.12, 0.27, 0.9, 0.33]
    expected = triton.testing._summarize_statistics(times, list(quantiles) if quantiles else None, mode)
    assert autotuning.summarized(times, quantiles, mode) == pytest.approx(expected)


def test_a_contestant_has_its_backend_time_autotuners_when_it_installs_the_guards(tmp_path):
    class Recording(Backend):
        name = "recording"
        timed = 0

        def time_autotuners(self) -> None:
            self.timed += 1

    backend = Recording()
    contestant = Contestant("candidate", sandboxed=False, backend=backend, tracer=object())
    contestant._install_guards({})
    assert backend.timed == 1


def test_backends_that_cannot_stall_leave_tritons_benchmarker_alone():
    Backend().time_autotuners()  # no driver is touched: a CPU machine has none


@pytest.mark.gpu
def test_on_the_gpu_a_slow_host_side_stays_out_of_the_times():
    """2 ms of host time before a ~50 us kernel: Triton's do_bench reads the host time, ours the kernel."""
    import time

    import torch

    from ladder.runner.backends import select_backend

    data = torch.zeros(1 << 24, device="cuda")

    def fn() -> None:
        time.sleep(0.002)
        data.add_(1.0)

    stalled = autotuning.benchmarker(select_backend("cuda"))(fn, warmup=5, rep=40, quantiles=(0.5,))
    plain = triton.testing.do_bench(fn, warmup=5, rep=40, quantiles=(0.5,))
    assert stalled < 0.5 < 1.5 < plain
