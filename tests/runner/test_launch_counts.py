"""Launches per forward are the steady state's: an autotuned kernel's first call launches once per
config while the autotuner times them, and those launches are not the forward's (CPU, interpreter)."""
from pathlib import Path

import pytest
import torch
from triton.runtime.autotuner import Autotuner

from ladder.runner.bench import bench_pair
from ladder.runner.evaluate import evaluate
from ladder.runner.guards import LaunchTracer
from ladder.runner.options import Options
from ladder.runner.problem import load_module

from .host_clock import HostClockBackend

AUTOTUNED = Path(__file__).parent / "fixtures" / "autotuned"
CONFIGS = 4  # the fixture's autotune configs


def run_each_config_once(kernel_call, quantiles=None, **kwargs):
    kernel_call()
    return [1.0] * len(quantiles) if quantiles else 1.0


@pytest.fixture
def autotuned_model(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(Autotuner, "do_bench", property(lambda self: run_each_config_once))
    return load_module(AUTOTUNED / "solution.py", "launch_counts_test").ModelNew()


def test_the_autotuners_benchmark_launches_are_marked_apart_from_the_forwards(autotuned_model):
    tracer = LaunchTracer(hook_fires=False)
    tracer.install()
    try:
        x = torch.randn(3000)
        with tracer.watch("solution") as first:
            out = autotuned_model(x)
        with tracer.watch("solution") as second:
            autotuned_model(x)
    finally:
        tracer.uninstall()
    assert torch.allclose(out, 3 * x)
    assert len(first.launches) == CONFIGS + 1  # the guards still see every launch
    assert len(first.forward_launches()) == 1 and first.tuning_launches() == CONFIGS
    assert len(second.forward_launches()) == 1 and second.tuning_launches() == 0


def test_uninstalling_the_tracer_gives_the_autotuner_its_own_benchmark_back():
    original = Autotuner._bench
    tracer = LaunchTracer(hook_fires=False)
    tracer.install()
    assert Autotuner._bench is not original
    tracer.uninstall()
    assert Autotuner._bench is original


def test_an_autotuned_forward_counts_one_launch_and_says_what_it_left_out():
    record = bench_pair(AUTOTUNED / "solution.py", AUTOTUNED / "problem.py", backend="interpret", seeds=1, seed=3)
    assert record["ok"], record
    for case in record["cases"]:
        assert case["launches"] == 1, case
        counts = case["launch_counts"]
        assert counts["first_call"] == 1 and counts["autotuning_excluded"] == CONFIGS
        assert counts["source"] == "checked calls" and counts["warmup_calls"] == 0


def test_timed_calls_give_the_steady_state_count_after_the_warm_up_calls(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = evaluate(str(AUTOTUNED / "problem.py"), {"solution": str(AUTOTUNED / "solution.py")},
                      HostClockBackend(), Options(seeds=2, seed=5, reps=6, cases=[1]))
    case = result["solutions"]["solution"]["cases"][0]
    assert case["correct"] and case["time_ms"]["reps"] == 6
    assert case["launches"] == 1
    counts = case["launch_counts"]
    assert counts["source"] == "timed calls" and counts["per_forward"] == 1
    assert counts["autotuning_excluded"] == CONFIGS  # all in the first checked call
    assert counts["warmup_calls"] == 2 + 3 + 1  # two checked calls, the timing warm-up, its estimate call
