"""Tracing a forward's launches: device queries answered for the target, forwards that need real
values traced on the CPU, and failures that say why instead of losing the case silently."""
from __future__ import annotations

import pytest
import torch

from ladder.diagnoser.triage import run_triage
from ladder.diagnoser.triage import trace as trace_module
from ladder.diagnoser.triage.trace import trace_cases
from ladder.runner.ascend_ir import ascend_python
from ladder.runner.capture import device_stand_in
from ladder.runner.hardware import for_target as hardware_table

from .triage_helpers import LABELED, fixture, write_pair

CORE_COUNT_SOLUTION = '''
import torch
import torch.nn as nn
import torch_npu
import triton
import triton.language as tl
from triton.runtime import driver


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, per_core, BLOCK: tl.constexpr):
    first = tl.program_id(0) * per_core
    for start in range(first, first + per_core, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        cores = driver.active.utils.get_device_properties(torch.npu.current_device())["num_vectorcore"]
        n = x.numel()
        add_kernel[(cores,)](x, y, out, n, triton.cdiv(n, cores), BLOCK=4096)
        return out
'''

SM_COUNT_SOLUTION = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.runtime import driver


@triton.jit
def scale_clamp_kernel(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, tl.minimum(tl.maximum(x * scale, -1.0), 1.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        y = torch.empty_like(x)
        sms = driver.active.utils.get_device_properties(torch.cuda.current_device())["multiprocessor_count"]
        assert torch.cuda.get_device_properties(0).multi_processor_count == sms
        scale_clamp_kernel[(2 * sms,)](x, y, x.numel(), self.scale, BLOCK=1024)
        return y
'''


def test_hardware_tables_are_read_for_their_targets():
    assert hardware_table("npu:Ascend910B3")["vectorcore_count"] == 40
    assert hardware_table("cuda:90")["sm_count"] == 132
    assert hardware_table("npu") == hardware_table("npu:Ascend910B3")
    assert hardware_table("cuda:75") == {}


def test_ascend_core_count_queries_are_answered_from_the_hardware_table(tmp_path):
    solution, problem = write_pair(tmp_path / "k", CORE_COUNT_SOLUTION, str(LABELED / "a01" / "problem.py"))
    traces = trace_cases(solution, problem, target="ascend")
    assert [t.error for t in traces] == [None] * len(traces)
    assert {t.launches[0].grid for t in traces} == {(40, 1, 1)}


def test_torch_npu_device_queries_are_answered_too(tmp_path):
    source = CORE_COUNT_SOLUTION.replace(
        'driver.active.utils.get_device_properties(torch.npu.current_device())["num_vectorcore"]',
        'torch_npu.npu.get_device_properties(torch_npu.npu.current_device()).vector_core_num')
    solution, problem = write_pair(tmp_path / "k", source, str(LABELED / "a01" / "problem.py"))
    assert {t.launches[0].grid for t in trace_cases(solution, problem, target="ascend")} == {(40, 1, 1)}


def test_nvidia_sm_count_queries_are_answered_for_an_h200(tmp_path):
    solution, problem = write_pair(tmp_path / "k", SM_COUNT_SOLUTION, fixture("elementwise")[1])
    traces = trace_cases(solution, problem, target="nvidia")
    assert [t.error for t in traces] == [None] * len(traces)
    assert {t.launches[0].grid for t in traces} == {(264, 1, 1)}


def test_device_stand_in_restores_what_it_replaced():
    from triton.runtime.driver import driver

    saved = dict(vars(driver))
    properties = torch.cuda.get_device_properties
    with device_stand_in("npu:Ascend910B3"):
        assert torch.npu.current_device() == 0
        assert driver.active.get_current_target().arch == "Ascend910B3"
    with device_stand_in("cuda:90"):
        assert torch.cuda.get_device_properties(0).multi_processor_count == 132
    assert not hasattr(torch, "npu") and torch.cuda.get_device_properties is properties
    assert vars(driver) == saved


def test_a_forward_with_an_op_lacking_a_meta_kernel_is_traced_on_the_cpu():
    result = run_triage(*fixture("routed_groups"))
    assert result.cases == 2
    assert all("traced on the CPU" in note and "bincount" in note for note in result.notes)
    assert "nv.launch-bound" in {f.pattern for f in result.findings}


def test_a_case_too_large_for_the_cpu_is_not_retried_and_says_so(monkeypatch):
    monkeypatch.setattr(trace_module, "CPU_TRACE_MAX_BYTES", 1 << 20)
    traces = trace_cases(*fixture("routed_groups"))
    assert all(t.error and "not retried on the CPU" in t.error for t in traces)


def test_storages_of_freed_temporaries_are_not_mistaken_for_later_tensors(tmp_path):
    # Each iteration frees a temporary; without holding them, the allocator hands the same
    # storage to the next one and distinct tensors would share an id.
    text = fixture("elementwise")[0]
    source = open(text).read().replace(
        "        y = torch.empty_like(x)\n",
        "        for _ in range(32):\n            torch.abs(x).sum()\n        y = torch.empty_like(x)\n")
    solution, problem = write_pair(tmp_path / "k", source, fixture("elementwise")[1])
    for trace in trace_cases(solution, problem):
        written = [storage for op in trace.torch_ops for storage in op.writes]
        assert len(written) == len(set(written)) == 64


@pytest.mark.slow
@pytest.mark.skipif(ascend_python() is None, reason="no Triton-Ascend environment")
def test_the_ascend_ir_capture_answers_core_count_queries(tmp_path):
    from ladder.runner import ascend_ir

    solution, problem = write_pair(tmp_path / "k", CORE_COUNT_SOLUTION, str(LABELED / "a01" / "problem.py"))
    kernels = ascend_ir.capture(solution, problem, case_index=1)
    assert [launch["grid"] for kernel in kernels for launch in kernel.launches] == [[40, 1, 1]]
    assert all("ttadapter" in kernel.stages for kernel in kernels)


def test_module_level_device_queries_are_answered_while_the_solution_loads(tmp_path):
    source = SM_COUNT_SOLUTION.replace(
        "from triton.runtime import driver\n",
        "from triton.runtime import driver\n\nDEVICE = driver.active.get_active_torch_device()\n").replace(
        "y = torch.empty_like(x)", "y = torch.empty(x.shape, device=DEVICE, dtype=x.dtype)")
    solution, problem = write_pair(tmp_path / "k", source, fixture("elementwise")[1])
    traces = trace_cases(solution, problem, target="nvidia")
    assert [t.error for t in traces] == [None] * len(traces) and all(t.launches for t in traces)


SCRIPT = '''
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


x = torch.randn(3000, device="cuda")
out = torch.empty_like(x)
print("launching")
copy_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
print(out.sum().item())
'''


def test_a_script_is_traced_with_its_real_arguments_and_its_prints_kept_out(tmp_path, capfd):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    [trace] = trace_module.trace_script(str(script))
    [launch] = trace.launches
    assert launch.grid == (3, 1, 1) and launch.args["x_ptr"].shape == (3000,) and launch.line == 16
    assert trace.error is None and "after 1 launch(es)" in trace.note  # .item() on a meta tensor stops it
    assert capfd.readouterr().out == ""


def test_a_script_that_fails_before_launching_says_why(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.replace("x = torch.randn", "raise SystemExit(3)\nx = torch.randn"))
    result = run_triage(str(script), script=True)
    assert result.cases == 0 and any("exited with status 3" in note for note in result.notes)
