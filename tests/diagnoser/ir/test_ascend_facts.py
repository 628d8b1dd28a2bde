"""Triton-Ascend kernels (ttir -> ttadapter, no NPU) and the facts its performance guide cares about.

Needs the Triton-Ascend environment (LADDER_ASCEND_PYTHON or .venv-ascend); skipped without it.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ladder.runner.ascend_ir import ascend_python

pytestmark = pytest.mark.skipif(ascend_python() is None, reason="needs the Triton-Ascend environment "
                                "(LADDER_ASCEND_PYTHON or .venv-ascend)")

SCRIPT = Path(__file__).with_name("ascend_kernels.py")


def line_of(marker: str) -> int:
    for number, text in enumerate(SCRIPT.read_text().splitlines(), start=1):
        if text.rstrip().endswith(f"# {marker}"):
            return number
    raise KeyError(marker)


@functools.lru_cache(maxsize=None)
def captured() -> tuple:
    from ladder.diagnoser.ir import extract_facts
    from ladder.runner.backends.aot import capture

    kernels = capture(SCRIPT, target="ascend")
    return tuple(kernels), tuple(extract_facts(kernels))


def facts(kernel: str, kind: str) -> list:
    return [fact for fact in captured()[1] if fact.kernel == kernel and fact.kind == kind]


def test_every_kernel_reaches_the_ttadapter_stage():
    kernels, _ = captured()
    assert len(kernels) == 6
    for kernel in kernels:
        assert kernel.error is None and {"ttir", "ttadapter"} <= set(kernel.stages)
        assert kernel.target == "npu:Ascend910B3" and kernel.file == str(SCRIPT)


def test_indirect_load_is_a_discrete_scalar_loop():
    (fact,) = facts("gather_kernel", "discrete_access")
    assert fact.line == line_of("@gather-load") and fact.value["op"] == "load" and fact.value["elements"] == 1024
    assert facts("masked_kernel", "discrete_access") == []


def test_masked_load_fills_its_buffer_with_other_before_copying():
    (fact,) = facts("masked_kernel", "masked_load_fill")
    assert fact.line == line_of("@masked-load") and float(fact.value["fill"]) == 1.0
    assert fact.value["shape"] == [1024] and fact.value["dtype"] == "f32"


def test_int32_vector_compare_and_int64_vector_add_run_as_scalar_code():
    (compare,) = facts("masked_kernel", "int_compare")
    assert compare.line == line_of("@int-compare") and compare.value["dtype"] == "i32"
    (add,) = facts("int64_add_kernel", "int64_arith")
    assert add.line == line_of("@int64-add") and add.value["op"] == "addi" and add.value["dtype"] == "i64"


def test_a_256_kb_block_does_not_fit_the_unified_buffer():
    (usage,) = facts("whole_row_kernel", "ub_usage")
    assert usage.value["bytes"] >= 256 * 1024 and usage.value["fits"] is False and usage.line == line_of("@big-load")
    (small,) = facts("masked_kernel", "ub_usage")
    assert small.value["fits"] is True


def test_dot_runs_in_mix_mode_and_elementwise_on_vector_cores():
    (mix,) = facts("dot_kernel", "core_mode")
    (vector,) = facts("masked_kernel", "core_mode")
    assert mix.value["mode"] == "mix" and mix.value["matmuls"] == 1 and vector.value["mode"] == "aiv"
    (launch,) = facts("dot_kernel", "launch")
    assert launch.value["sm_count"] == 20  # one program per AI core for cube kernels


def test_four_float_rows_get_padded_to_32_bytes():
    (tail,) = facts("narrow_rows_kernel", "unaligned_tail")
    assert tail.line == line_of("@narrow-load") and tail.value["tail_bytes"] == 16 and tail.value["padded_bytes"] == 32


def test_a_solution_that_imports_torch_npu_is_captured_without_it(tmp_path):
    from ladder.runner.backends.aot import capture

    (tmp_path / "problem.py").write_text(
        "import torch\nimport torch.nn as nn\n\n"
        "class Model(nn.Module):\n    def forward(self, x):\n        return x * 2\n\n"
        "n = 4096\n\ndef get_inputs():\n    return [torch.randn(n)]\n\n"
        "def get_init_inputs():\n    return []\n")
    (tmp_path / "solution.py").write_text(
        "import torch\nimport torch.nn as nn\nimport torch_npu\nimport triton\nimport triton.language as tl\n\n"
        "@triton.jit\ndef double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 2, mask=offsets < n)\n\n"
        "class ModelNew(nn.Module):\n    def forward(self, x):\n"
        "        y = torch.empty(x.shape, device='npu', dtype=x.dtype)\n"
        "        double_kernel[(triton.cdiv(x.numel(), 1024),)](x.npu(), y, x.numel(), BLOCK=1024)\n"
        "        return y\n")
    kernels = capture(tmp_path / "solution.py", tmp_path / "problem.py", target="ascend")
    assert [kernel.name for kernel in kernels] == ["double_kernel"]
    assert "ttadapter" in kernels[0].stages
