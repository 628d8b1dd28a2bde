"""The interleaved timing loop, on the CPU with a host-clock stand-in for device events.

Contestants answer in process here (``LocalChannel``); the loop is the one the judge drives
across processes.
"""
import random
import time
from pathlib import Path

import pytest
import torch

from ladder.runner.channel import LocalChannel
from ladder.runner.compare import compare
from ladder.runner.contestant import Contestant
from ladder.runner.exchange import load_outputs
from ladder.runner.guards import LaunchTracer
from ladder.runner.inputs import make_inputs
from ladder.runner.problem import load_module, load_problem
from ladder.runner.timing import Measurement, Settings, Timed, host_bound, measure, summarize
from .host_clock import HostClockBackend

FIXTURES = Path(__file__).parent / "fixtures"
PROBLEM = FIXTURES / "add" / "problem.py"


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


@pytest.fixture(scope="module")
def problem():
    return load_problem(PROBLEM)


def local(name, call, tracer, problem, guarded=True):
    contestant = Contestant(name, sandboxed=False, backend=HostClockBackend(), tracer=tracer)
    contestant.kind = "solution" if guarded else "reference"
    contestant.problem, contestant.case = problem, problem.cases[0]
    contestant.callables = {"model": call}
    return Timed(name, LocalChannel(contestant.handle), guarded=guarded, trusted=not guarded)


def verify(problem):
    def check(name, seed, path):
        x, y = make_inputs(problem, problem.cases[0], seed, torch.device("cpu"))
        return compare(load_outputs(path, "cpu"), x.double() + 0.5 * y.double(), x + 0.5 * y,
                       allow_tf32=False, expected_is_float64=True)
    return check


def run(timed, problem, tmp_path, reps=6, settings=None):
    return measure(timed, seed_of=lambda rep: 1000 + rep, rng=random.Random(1), flush=lambda: None,
                   settings=settings or Settings(reps=reps, warmup_calls=1, verify_fraction=1.0),
                   verify=verify(problem), exchange=tmp_path)


def test_summary_reports_median_and_spread():
    summary = summarize([float(v) for v in range(1, 101)])
    assert summary["median"] == pytest.approx(50.5)
    assert summary["p10"] == pytest.approx(10.9) and summary["p90"] == pytest.approx(90.1)
    assert summary["iqr"] == pytest.approx(49.5) and summary["reps"] == 100


def test_contestants_share_fresh_inputs_each_repetition_in_shuffled_order(tracer, add_module, problem, tmp_path):
    model = add_module.ModelNew(0.5)
    seen = {"a": [], "b": []}
    order = []

    def contestant(name):
        def call(inputs):
            seen[name].append(inputs[0])
            order.append(name)
            return model(*inputs)
        return local(name, call, tracer, problem)

    results = run([contestant("a"), contestant("b")], problem, tmp_path, reps=8)
    timed_a, timed_b = [x[0].item() for x in seen["a"][-8:]], [x[0].item() for x in seen["b"][-8:]]
    assert timed_a == timed_b  # same inputs for both in every repetition
    assert len(set(timed_a)) == 8  # never the same inputs twice
    pairs = {tuple(order[i:i + 2]) for i in range(len(order) - 16, len(order), 2)}
    assert pairs == {("a", "b"), ("b", "a")}  # the order is shuffled
    assert all(result.violation is None and len(result.times_ms) == 8 for result in results.values())


def test_timed_call_returning_a_stale_result_is_caught(tracer, add_module, problem, tmp_path):
    model = add_module.ModelNew(0.5)
    first = []

    def replays_first_inputs(inputs):
        first.append([x.clone() for x in inputs]) if not first else None
        return model(*first[0])  # a kernel runs, on inputs it has seen before

    results = run([local("stale", replays_first_inputs, tracer, problem)], problem, tmp_path)
    assert "returned a wrong result" in results["stale"].violation
    assert results["stale"].summary() is None


def test_timed_call_that_launches_nothing_is_a_violation(tracer, add_module, problem, tmp_path):
    model = add_module.ModelNew(0.5)
    calls = []

    def lazy(inputs):
        calls.append(1)
        return model(*inputs) if len(calls) <= 2 else torch.empty_like(inputs[0])

    results = run([local("lazy", lazy, tracer, problem)], problem, tmp_path)
    assert results["lazy"].violation == "timed call 1: launched no Triton kernel"


def test_timed_call_computing_with_torch_is_a_violation(tracer, add_module, problem, tmp_path):
    model = add_module.ModelNew(0.5)
    calls = []

    def switches_to_torch(inputs):
        calls.append(1)
        return model(*inputs) if len(calls) <= 2 else inputs[0] + 0.5 * inputs[1]

    results = run([local("switch", switches_to_torch, tracer, problem)], problem, tmp_path)
    assert "forward calls torch compute ops" in results["switch"].violation


def test_reference_contestant_is_timed_without_guards(tracer, problem, tmp_path):
    results = run([local("reference", lambda inputs: inputs[0] + 0.5 * inputs[1], tracer, problem, guarded=False)],
                  problem, tmp_path, reps=5)
    assert results["reference"].violation is None and results["reference"].summary()["reps"] == 5


def test_timed_calls_leave_no_earlier_output_alive(tracer, problem, tmp_path):
    """Only the last call's outputs may outlive the loop, with no collection at all: the contestant
    times with collection off, and outputs caught in reference cycles once held every call's outputs
    on the device until the process ran out of memory (a large case on the H200)."""
    import gc
    import weakref

    outputs = []

    def call(inputs):
        out = inputs[0] + 0.5 * inputs[1]
        outputs.append(weakref.ref(out))
        return (out,)

    thresholds = gc.get_threshold()
    gc.set_threshold(0)  # no automatic collection, even where the contestant turns it back on
    try:
        run([local("reference", call, tracer, problem, guarded=False)], problem, tmp_path, reps=6)
        alive = [ref for ref in outputs if ref() is not None]
    finally:
        gc.set_threshold(*thresholds)
    assert len(outputs) > 6 and len(alive) <= 1


def test_repetitions_follow_the_budget_within_bounds(tracer, problem, tmp_path):
    slow = local("slow", lambda inputs: time.sleep(0.01), tracer, problem, guarded=False)
    results = run([slow], problem, tmp_path, settings=Settings(min_reps=3, max_reps=50, budget_s=0.05, warmup_calls=1))
    assert 3 <= len(results["slow"].times_ms) <= 6


def test_timed_call_returning_a_buffer_no_kernel_received_is_a_violation(tracer, add_module, problem, tmp_path):
    model = add_module.ModelNew(0.5)
    kept = []

    def keeps_first_output(inputs):
        output = model(*inputs)  # real work, into a fresh buffer
        kept.append(output) if not kept else None
        return kept[0]

    results = run([local("keeper", keeps_first_output, tracer, problem)], problem, tmp_path)
    assert "which no Triton kernel wrote in that call" in results["keeper"].violation


def test_the_host_clock_bounds_what_a_contestants_events_may_claim():
    reference = Timed("reference", None, guarded=False, trusted=True)
    honest, liar = Timed("honest", None), Timed("liar", None)
    measurements = {
        "reference": Measurement(times_ms=[1.0] * 9, wall_ms=[1.3] * 9),
        "honest": Measurement(times_ms=[2.0] * 9, wall_ms=[2.31] * 9),
        "liar": Measurement(times_ms=[0.1] * 9, wall_ms=[2.3] * 9),  # events read a twentieth of the call
    }
    bounds = host_bound(measurements, [reference, honest, liar])
    assert measurements["honest"].violation is None
    assert bounds["honest"]["implied_ms"] == pytest.approx(2.01)
    assert "disagree with the judge's host clock" in measurements["liar"].violation
    assert bounds["liar"]["overhead_ms"] == pytest.approx(0.3)


def test_a_finisher_riding_on_what_forward_returned_works_inside_the_timed_call(tracer, add_module, problem, tmp_path):
    """The outputs are taken out of what forward returned, and that object let go, before the end
    event: a generator's ``finally`` riding on it launches the real kernel inside the timed call,
    not when the runner would have let go of it (after the clock, before the outputs were saved)."""
    import triton

    class Outputs(list):
        pass

    def finisher(x, y, out):
        try:
            yield
        finally:
            add_module.add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, 0.5, x.numel(), BLOCK=1024)

    def deferred(inputs):
        x, y = inputs
        out = torch.zeros_like(x)
        add_module.add_kernel[(1,)](x, y, out, 0.5, 0, BLOCK=16)  # a launch that receives the output
        result = Outputs([out])
        result.finisher = finisher(x, y, out)
        next(result.finisher)
        return result

    results = run([local("deferred", deferred, tracer, problem)], problem, tmp_path)
    assert results["deferred"].violation is None
    assert set(results["deferred"].launches) == {2}  # the finisher's launch is the timed call's own


def test_a_timed_call_much_faster_than_the_warm_up_is_verified(tracer, add_module, problem, tmp_path):
    """A forward that skips its work in one timed call (not one drawn for verification) is fast in
    exactly that call, and that is reason enough to verify it."""
    model = add_module.ModelNew(0.5)
    reps, warmup_calls = 6, 1
    drawn = set(random.Random(1).sample(range(reps), 1)) | {reps - 1}  # what ``run``'s rng verifies
    skipped = min(set(range(reps)) - drawn)
    calls = []

    def skips_once(inputs):
        calls.append(1)
        if len(calls) == warmup_calls + 1 + skipped + 1:  # the warm-up calls, the estimate, then the reps
            out = torch.zeros_like(inputs[0])
            add_module.add_kernel[(1,)](inputs[0], inputs[1], out, 0.5, 0, BLOCK=16)
            return out
        time.sleep(0.01)  # the work, as the clock sees it
        return model(*inputs)

    results = run([local("skipper", skips_once, tracer, problem)], problem, tmp_path,
                  settings=Settings(reps=reps, warmup_calls=warmup_calls, verify_fraction=0.01))
    assert f"timed call {skipped + 1} returned a wrong result" in results["skipper"].violation
