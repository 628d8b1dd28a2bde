"""Runtime guards in-process: the torch-call recorder, poisoned allocations, the launch tracer."""
from pathlib import Path

import numpy as np
import pytest
import torch

from ladder.runner.guards import LaunchTracer, TorchOpRecorder, poison, unwritten_count
from ladder.runner.plain import plain_outputs
from ladder.runner.problem import load_module

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def interpreted_add():
    """The add fixture's ModelNew under Triton's interpreter (read at decoration and at launch)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRITON_INTERPRET", "1")
        yield load_module(FIXTURES / "add" / "solution.py", "guards_test").ModelNew(0.5)


@pytest.fixture
def tracer():
    tracer = LaunchTracer(hook_fires=False)
    tracer.install()
    yield tracer
    tracer.uninstall()


def test_allocation_views_and_queries_are_not_compute(tracer):
    x = torch.randn(4, 6)
    with TorchOpRecorder(tracer) as recorder:
        out = torch.empty_like(x)
        x.contiguous().view(-1)
        x.reshape(24)[3:]
        x.flatten(), x.ravel(), x.t().reshape(6, 4).t()
        x.shape, x.stride(), x.numel(), x.dtype, x.data_ptr()
        torch.zeros(3)
        x.to(torch.float32)
    assert recorder.compute_calls == {}
    assert out.shape == x.shape


def test_a_view_that_had_to_copy_is_compute(tracer):
    """``contiguous``, ``reshape``, ``flatten`` and ``ravel`` of a transposed tensor copy it: a whole
    transpose done by torch."""
    x = torch.randn(4, 6)
    with TorchOpRecorder(tracer) as recorder:
        x.t().contiguous()
        x.t().reshape(24)
        torch.flatten(x.t())
        x.t().ravel()
    assert set(recorder.compute_calls) == {"Tensor.contiguous", "Tensor.reshape", "torch.flatten", "Tensor.ravel"}


def test_compute_calls_are_recorded_by_readable_name(tracer):
    x = torch.randn(4, 4)
    with TorchOpRecorder(tracer) as recorder:
        torch.matmul(x, x)
        x @ x
        torch.nn.functional.relu(x)
        x + 1
        x[torch.tensor([0, 2])]
        x.to(torch.float16)
    assert set(recorder.compute_calls) == {"torch.matmul", "Tensor.matmul", "torch.nn.functional.relu",
                                           "Tensor.add", "Tensor.__getitem__", "Tensor.to"}


def test_fresh_allocations_hold_the_poison_pattern(tracer):
    with TorchOpRecorder(tracer):
        fresh = torch.empty(10)
        ints = torch.empty(5, dtype=torch.int32)
    assert unwritten_count(fresh) == 10 and torch.isnan(fresh).all()
    assert unwritten_count(ints) == 5


def test_unwritten_count_counts_only_poisoned_elements():
    x = torch.empty(8, dtype=torch.float16)
    poison(x)
    x[:3] = 1.0
    assert unwritten_count(x) == 5


def test_interpreted_launch_is_counted_with_its_argument_memory(tracer, interpreted_add):
    x, y = torch.randn(300), torch.randn(300)
    with tracer.watch("candidate") as window, TorchOpRecorder(tracer) as recorder:
        out = interpreted_add(x, y)
    assert [launch.kernel for launch in window.launches] == ["add_kernel"]
    assert window.wrote(out) and not window.wrote(torch.empty(3))
    assert recorder.compute_calls == {}  # the interpreter's own host copies are not the candidate's
    torch.testing.assert_close(out, x + 0.5 * y)


def test_launch_outside_any_window_is_stray(tracer, interpreted_add):
    interpreted_add(torch.randn(10), torch.randn(10))
    assert tracer.strays_since(0) == 1


def test_uninstall_restores_triton(tracer):
    from triton.runtime.jit import JITFunction

    wrapped = JITFunction.run
    tracer.uninstall()
    assert JITFunction.run is wrapped.__wrapped__


class Metadata:
    """What Triton's launcher hands the launch hook (a LazyDict with the kernel name and stream)."""

    def __init__(self, name, stream):
        self.data = {"name": name, "stream": stream}

    def get(self):
        return self.data


class FakeJITKernel:
    """A stand-in for a compiled-path kernel: its run() ends in the launcher, which fires the hook."""

    def __init__(self, tracer, launch_stream):
        self.tracer, self.launch_stream = tracer, launch_stream

    def run(self, *args, grid, warmup, **kwargs):
        self.tracer._on_launch_hook(Metadata("fake_kernel", self.launch_stream))


def device_tracer(current):
    tracer = LaunchTracer(hook_fires=True, current_stream=lambda: current["stream"])
    tracer._wrap(FakeJITKernel, "run", record_arguments=True, count=False)
    return tracer


def test_hook_counts_launches_with_the_stream_current_at_the_call():
    from ladder.runner.timing import guard_violation

    current = {"stream": 0}
    tracer = device_tracer(current)
    x = torch.empty(16)
    try:
        with tracer.watch("candidate") as window:
            FakeJITKernel(tracer, launch_stream=0).run(x, grid=(1,), warmup=False)
        assert [(launch.kernel, launch.stream) for launch in window.launches] == [("fake_kernel", 0)]
        assert window.wrote(x) and guard_violation(window, 0) is None
        with tracer.watch("candidate") as window:
            current["stream"] = 9  # the candidate switched to a side stream before launching
            FakeJITKernel(tracer, launch_stream=9).run(x, grid=(1,), warmup=False)
        assert guard_violation(window, 0) == "launched Triton kernels on 1 side stream(s)"
    finally:
        tracer.uninstall()


def test_benchmark_launches_on_a_capture_stream_inside_triton_are_not_side_streams():
    from ladder.runner.timing import guard_violation

    tracer = device_tracer({"stream": 0})
    try:
        with tracer.watch("candidate") as window:
            FakeJITKernel(tracer, launch_stream=77).run(torch.empty(4), grid=(1,), warmup=False)
        assert guard_violation(window, 0) is None
    finally:
        tracer.uninstall()


def test_direct_launch_outside_the_wrappers_reports_its_own_stream():
    tracer = LaunchTracer(hook_fires=True, current_stream=lambda: 0)
    with tracer.watch("candidate") as window:
        tracer._on_launch_hook(Metadata("compiled_kernel", 5))
    assert window.streams() == {5}


def test_outputs_must_be_dense_tensors_in_plain_containers():
    import collections

    pair = collections.namedtuple("Pair", "values count")

    class Deferred(list):
        def __iter__(self):
            return super().__iter__()

    tensor = torch.ones(3)
    assert plain_outputs((tensor, [tensor, 2], pair(tensor, 1))) == ([tensor, tensor, 2, tensor, 1], None)
    assert plain_outputs(torch.max(torch.ones(2, 3), dim=1))[1] is None  # torch's return types
    assert "returns a Deferred" in plain_outputs(Deferred([tensor]))[1]
    assert "(a torch.Tensor subclass)" in plain_outputs(torch.Tensor._make_subclass(type("Lazy", (torch.Tensor,), {}),
                                                                                  tensor))[1]
    assert "sparse_coo tensor" in plain_outputs(tensor.to_sparse())[1]


def test_flattening_outputs_leaves_them_in_no_reference_cycle():
    """The contestant times with collection off: outputs caught in a cycle stayed on the device
    until a full collection (on the H200, tens of GiB across one large case's timed calls)."""
    import gc
    import weakref

    tensor = torch.ones(3)
    gone = weakref.ref(tensor)
    gc.collect()
    gc.disable()
    try:
        flat, problem = plain_outputs((tensor, [tensor, (tensor, 1)]))
        assert problem is None and len(flat) == 4
        del flat, tensor
        assert gone() is None, "the outputs outlived the last reference to them"
    finally:
        gc.enable()


def test_torch_tensor_is_a_constant_only_for_a_few_plain_numbers(tracer):
    with TorchOpRecorder(tracer) as recorder:
        torch.tensor([0.5, 2.0])
    assert recorder.compute_calls == {}
    with TorchOpRecorder(tracer) as recorder:
        torch.tensor([float(i) for i in range(1000)])
        torch.as_tensor(np.ones(4))
    assert set(recorder.compute_calls) == {"torch.tensor", "torch.as_tensor"}


def test_a_compute_call_that_fails_is_still_recorded(tracer):
    with TorchOpRecorder(tracer) as recorder, pytest.raises(RuntimeError):
        torch.matmul(torch.ones(2, 3), torch.ones(2, 3))
    assert recorder.compute_calls == {"torch.matmul": 1}


def test_the_recorders_name_sets_cannot_be_changed_in_place(tracer):
    """A module's snapshot compares its globals by identity: a name added to ``QUERIES`` in place (the
    same object) would make ``torch.add`` a free query, and no snapshot would see it."""
    from ladder.runner import guards

    with pytest.raises(AttributeError):
        guards.QUERIES.update({"add", "__add__"})
    with TorchOpRecorder(tracer) as recorder:
        torch.add(torch.ones(2), torch.ones(2))
    assert recorder.compute_calls == {"torch.add": 1}


def test_no_runner_module_keeps_a_mutable_set_of_names():
    """Every allow or deny list the runner decides by is a frozenset, so no in-place change reaches it."""
    import importlib
    import pkgutil

    import ladder.runner

    mutable = [f"{info.name}.{name}" for info in pkgutil.walk_packages(ladder.runner.__path__, "ladder.runner.")
               for name, value in vars(importlib.import_module(info.name)).items() if isinstance(value, set)]
    assert mutable == []
