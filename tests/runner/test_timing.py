"""The interleaved timing loop, on the CPU with a host-clock stand-in for device events."""
import time
from pathlib import Path

import pytest
import torch

from runner.compare import compare
from runner.guards import LaunchTracer
from runner.problem import load_module
from runner.timing import Contestant, Settings, measure, summarize
from .host_clock import HostClockBackend

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def add_module():
    """The add fixture's kernel under Triton's interpreter (read at decoration and at launch)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRITON_INTERPRET", "1")
        yield load_module(FIXTURES / "add" / "solution.py", "timing_test")


@pytest.fixture
def tracer():
    tracer = LaunchTracer(hook_fires=False)
    tracer.install()
    yield tracer
    tracer.uninstall()


def make_inputs(seed):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(512, generator=generator), torch.randn(512, generator=generator)]


def verify(inputs, output):
    x, y = inputs
    expected = x.double() + 0.5 * y.double()
    return compare(output, expected, x + 0.5 * y, allow_tf32=False, expected_is_float64=True)


def run(contestants, tracer, reps=6):
    return measure(contestants, make_inputs, HostClockBackend(), tracer, verify,
                   Settings(reps=reps, warmup_calls=1, verify_fraction=1.0), seed=1)


def test_summary_reports_median_and_spread():
    summary = summarize([float(v) for v in range(1, 101)])
    assert summary["median"] == pytest.approx(50.5)
    assert summary["p10"] == pytest.approx(10.9) and summary["p90"] == pytest.approx(90.1)
    assert summary["iqr"] == pytest.approx(49.5) and summary["reps"] == 100


def test_contestants_share_fresh_inputs_each_repetition_in_shuffled_order(tracer, add_module):
    model = add_module.ModelNew(0.5)
    seen = {"a": [], "b": []}
    order = []

    def contestant(name):
        def call(inputs):
            seen[name].append(inputs[0][0].item())
            order.append(name)
            return model(*inputs)
        return Contestant(name, call, guarded=True, verify=True)

    results = run([contestant("a"), contestant("b")], tracer, reps=8)
    timed_a, timed_b = seen["a"][-8:], seen["b"][-8:]
    assert timed_a == timed_b  # same inputs for both in every repetition
    assert len(set(timed_a)) == 8  # never the same inputs twice
    pairs = {tuple(order[i:i + 2]) for i in range(len(order) - 16, len(order), 2)}
    assert pairs == {("a", "b"), ("b", "a")}  # the order is shuffled
    assert all(result.violation is None and len(result.times_ms) == 8 for result in results.values())


def test_timed_call_returning_a_stale_result_is_caught(tracer, add_module):
    model = add_module.ModelNew(0.5)
    first = []

    def replays_first_inputs(inputs):
        first.append(inputs) if not first else None
        return model(*first[0])  # a kernel runs, on inputs it has seen before

    results = run([Contestant("stale", replays_first_inputs, guarded=True, verify=True)], tracer)
    assert "returned a wrong result" in results["stale"].violation
    assert results["stale"].summary() is None


def test_timed_call_that_launches_nothing_is_a_violation(tracer, add_module):
    model = add_module.ModelNew(0.5)
    calls = []

    def lazy(inputs):
        calls.append(1)
        return model(*inputs) if len(calls) <= 2 else inputs[0] + 0.5 * inputs[1]

    results = run([Contestant("lazy", lazy, guarded=True, verify=True)], tracer)
    assert results["lazy"].violation == "timed call 1: launched no Triton kernel"


def test_reference_contestant_is_timed_without_guards(tracer):
    results = run([Contestant("reference", lambda inputs: inputs[0] + 0.5 * inputs[1],
                              guarded=False, verify=False)], tracer, reps=5)
    assert results["reference"].violation is None and results["reference"].summary()["reps"] == 5


def test_repetitions_follow_the_budget_within_bounds(tracer):
    slow = Contestant("slow", lambda inputs: time.sleep(0.01), guarded=False, verify=False)
    results = measure([slow], make_inputs, HostClockBackend(), tracer, verify,
                      Settings(min_reps=3, max_reps=50, budget_s=0.05, warmup_calls=1), seed=0)
    assert 3 <= len(results["slow"].times_ms) <= 6


def test_timed_call_returning_a_buffer_no_kernel_received_is_a_violation(tracer, add_module):
    model = add_module.ModelNew(0.5)
    kept = []

    def keeps_first_output(inputs):
        output = model(*inputs)  # real work, into a fresh buffer
        kept.append(output) if not kept else None
        return kept[0]

    results = run([Contestant("keeper", keeps_first_output, guarded=True, verify=True)], tracer)
    assert "which no Triton kernel wrote in that call" in results["keeper"].violation
