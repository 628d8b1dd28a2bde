"""Rung 3 on a GPU when the device will not load a kernel that compiled: the IR comes from a
compile-only capture and the refusal is kept as evidence, not a failed rung."""
from pathlib import Path

import pytest

from ladder.diagnoser import ir as ir_package
from ladder.diagnoser import rungs
from ladder.diagnoser.subject import Subject

ADD = Path(__file__).resolve().parents[1] / "runner" / "fixtures" / "add"


def on_a_device_that_fails(monkeypatch, error):
    real, asked = ir_package.capture, []

    def capture(solution, problem, *, target, backend, **kwargs):
        asked.append(backend)
        if backend == "cuda":
            raise error
        return real(solution, problem, target=target, backend=backend, **kwargs)

    monkeypatch.setattr(ir_package, "capture", capture)
    return asked


def test_a_kernel_the_device_refuses_to_load_gets_its_ir_ahead_of_time(monkeypatch):
    from triton.runtime.errors import OutOfResources

    asked = on_a_device_that_fails(monkeypatch, OutOfResources(262144, 232448, "shared memory"))
    subject = Subject(str(ADD / "solution.py"), str(ADD / "problem.py"), backend="cuda", device="NVIDIA H200")
    output = rungs.ir(subject, {})
    assert asked == ["cuda", "aot"] and output["facts"]
    assert output["launch_refused"].startswith(
        "the device refused to launch it: OutOfResources: out of resource: shared memory, Required: 262144")
    assert "(aot capture); the device refused" in output["summary"]


def test_any_other_capture_error_still_fails_the_rung(monkeypatch):
    asked = on_a_device_that_fails(monkeypatch, RuntimeError("illegal memory access"))
    subject = Subject(str(ADD / "solution.py"), str(ADD / "problem.py"), backend="cuda", device="NVIDIA H200")
    with pytest.raises(RuntimeError, match="illegal memory access"):
        rungs.ir(subject, {})
    assert asked == ["cuda"]
