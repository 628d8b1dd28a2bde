"""TMA tensor descriptors in the walk: a load or store moves one box, whose shape a host descriptor
gets from the autotuner's pre-hook per config and an in-kernel one from its block_shape."""
from __future__ import annotations

import torch
from triton.tools.tensor_descriptor import TensorDescriptor

from ladder.diagnoser.triage import build_context, load_source, run_triage
from ladder.diagnoser.triage.trace import LaunchRecord, _pre_hook, describe

from .triage_helpers import FIXTURES

TMA_GEMM = FIXTURES / "tma_gemm"   # 128x256 and 256x128 boxes set by a pre-hook, C through tl.make_tensor_descriptor


def analyses():
    path, text = load_source(TMA_GEMM / "solution.py")
    return build_context(path, text, TMA_GEMM / "problem.py", None, None, "sm90").analyses


def test_each_config_s_boxes_shape_its_dot():
    shapes = {a.launch.variant: (a.report.dots[0].a_shape, a.report.dots[0].b_shape) for a in analyses()}
    assert shapes == {0: ((128, 64), (64, 256)), 1: ((256, 64), (64, 128))}


def test_descriptor_loads_and_stores_are_whole_boxes():
    report = analyses()[0].report
    moves = [(a.op, a.shape, a.block_ptr, a.width.vector_bits) for a in report.accesses]
    assert moves == [("load", (128, 64), True, 128), ("load", (256, 64), True, 128),
                     ("store", (128, 256), True, 128)]
    assert [a.from_dot for a in report.accesses] == [False, False, True]


def test_the_gemm_of_a_tma_kernel_is_judged_like_any_other():
    """K = 1024: 16 K steps of 64 for either tile; nothing said about vector widths."""
    found = {f.pattern for f in run_triage(str(TMA_GEMM / "solution.py"), str(TMA_GEMM / "problem.py")).findings}
    assert "nv.short-k-loop" in found
    assert not found & {"nv.scalar-access", "nv.no-tensor-core", "nv.mma-v2-on-hopper"}


def test_a_pre_hook_that_fails_on_meta_tensors_leaves_the_arguments_as_they_are():
    class Config:
        @staticmethod
        def pre_hook(nargs):
            raise RuntimeError("cannot touch the data of a meta tensor")

    class NoHook:
        pre_hook = None

    nargs = {"x": 1}
    _pre_hook(Config(), nargs)
    _pre_hook(NoHook(), nargs)
    assert nargs == {"x": 1}


def test_a_launch_s_bytes_count_the_tensors_behind_its_descriptors():
    """A (8192x1024) and B (8192x1024) come in as descriptors, C (8192x8192) as a pointer, all fp16."""
    launch = analyses()[0].launch
    assert set(launch.tensors()) == {"c_ptr"}
    assert launch.operand_bytes() == 2 * (8192 * 1024 * 2 + 8192 * 8192)


def test_a_tensor_passed_as_a_descriptor_and_as_a_pointer_counts_once():
    a, c = torch.empty(64, 32, dtype=torch.float16), torch.empty(64, 64, dtype=torch.float16)
    args = {"a_desc": describe(TensorDescriptor.from_tensor(a, [16, 16])), "a_ptr": describe(a),
            "c_ptr": describe(c)}
    launch = LaunchRecord("k", 0, (1, 1, 1), args, {}, 4, 3, {})
    assert launch.operand_bytes() == (64 * 32 + 64 * 64) * 2
