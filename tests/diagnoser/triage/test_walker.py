"""The kernel walk: what it records about accesses, dots, reductions, loops and index math."""
from __future__ import annotations

import textwrap

from ladder.diagnoser.triage.interp import Binding, walk_kernel
from ladder.diagnoser.triage.source import parse_module

HEADER = "import triton\nimport triton.language as tl\n\n"


def walk(body: str, bindings: dict, num_warps: int = 4, grid=(64, 1, 1), kernel: str = "k"):
    module = parse_module(HEADER + textwrap.dedent(body))
    return walk_kernel(module, module.kernels[kernel], bindings, num_warps, grid)


def ptr(dtype="fp32", aligned=True):
    return Binding("ptr", dtype=dtype, aligned=aligned)


ELEMENTWISE = """
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)
"""


def test_aligned_elementwise_access_is_128_bit():
    report = walk(ELEMENTWISE, {"x_ptr": ptr(), "y_ptr": ptr(), "n": Binding("int", 1 << 20),
                                "BLOCK": Binding("constexpr", 1024)})
    assert [a.width.vector_bits for a in report.accesses] == [128, 128]
    assert all(a.true_vec == 4 and a.true_strides == (1,) for a in report.accesses)


def test_size_with_only_8_divisibility_is_scalar_for_the_compiler_but_not_in_truth():
    report = walk(ELEMENTWISE, {"x_ptr": ptr(), "y_ptr": ptr(), "n": Binding("int", 1000),
                                "BLOCK": Binding("constexpr", 1024)})
    load = next(a for a in report.accesses if a.op == "load")
    assert load.width.vector_bits == 32 and load.true_vec == 4


def test_unaligned_base_pointer_allows_no_vector_in_truth():
    report = walk(ELEMENTWISE, {"x_ptr": ptr(aligned=False), "y_ptr": ptr(), "n": Binding("int", 1 << 20),
                                "BLOCK": Binding("constexpr", 1024)})
    load = next(a for a in report.accesses if a.op == "load")
    assert load.true_vec == 1


def test_strided_column_access_has_a_non_unit_true_stride():
    report = walk("""
@triton.jit
def k(x_ptr, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    rows = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows * n_cols + col)
""", {"x_ptr": ptr(), "n_cols": Binding("int", 4096), "BLOCK": Binding("constexpr", 256)})
    assert report.accesses[0].true_strides == (4096,)


GEMM = """
@triton.jit
def k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    npn = tl.cdiv(N, BN)
    rm = (pid // npn) * BM + tl.arange(0, BM)
    rn = (pid % npn) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
"""


def gemm_bindings(**constexprs):
    values = {"BM": 128, "BN": 128, "BK": 32, **constexprs}
    return {"a_ptr": ptr("fp16"), "b_ptr": ptr("fp16"), "c_ptr": ptr("fp16"), "M": Binding("int", 4096),
            "N": Binding("int", 4096), "K": Binding("int", 4096),
            **{k: Binding("constexpr", v) for k, v in values.items()}}


def test_dot_records_shapes_roles_and_loop():
    report = walk(GEMM, gemm_bindings())
    dot = report.dots[0]
    assert dot.a_shape == (128, 32) and dot.b_shape == (32, 128) and dot.loops
    assert (dot.m_params, dot.n_params, dot.k_params) == ({"BM"}, {"BN"}, {"BK"})
    loop = next(iter(report.loops.values()))
    assert loop.has_dot and loop.loads == 2 and loop.trip_count == 128


def test_an_accumulator_stored_in_two_halves_is_still_the_dots_store():
    store = "    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))\n"
    halves = ("    acc0, acc1 = tl.split(tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1)))\n"
              "    half = (pid % npn) * BN + tl.arange(0, BN // 2)\n"
              "    tl.store(c_ptr + rm[:, None] * N + half[None, :], acc0)\n"
              "    tl.store(c_ptr + rm[:, None] * N + (half + BN // 2)[None, :], acc1.to(tl.float16))\n")
    method = halves.replace("tl.split(tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1)))",
                            "acc.reshape(BM, 2, BN // 2).permute(0, 2, 1).split()")
    for epilogue in (halves, method):
        report = walk(GEMM.replace(store, epilogue), gemm_bindings())
        stores = [a for a in report.accesses if a.op == "store"]
        assert len(stores) == 2 and all(a.from_dot and a.shape == (128, 64) for a in stores)
    rejoined = ("    acc0, acc1 = tl.split(tl.reshape(acc, (BM, BN // 2, 2)))\n"
                "    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.reshape(tl.join(acc0, acc1), (BM, BN)))\n")
    store_of = next(a for a in walk(GEMM.replace(store, rejoined), gemm_bindings()).accesses if a.op == "store")
    assert store_of.from_dot and store_of.shape == (128, 128)


def test_dot_operands_are_marked_and_masks_give_bounds():
    report = walk(GEMM, gemm_bindings())
    assert sum(a.dot_operand for a in report.accesses) == 2
    assert {("BM", "M"), ("BN", "N")} <= report.bounds


def test_per_element_and_per_program_divisions_are_told_apart():
    report = walk(GEMM, gemm_bindings())
    assert {d.op for d in report.divmods} == {"//", "%"}
    assert not any(d.per_element for d in report.divmods)


def test_reduction_of_a_1d_chunk_in_a_loop_crosses_warps():
    report = walk("""
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    total = 0.0
    offs = tl.arange(0, BLOCK)
    for start in range(0, n, BLOCK):
        total += tl.sum(tl.load(x_ptr + start + offs), axis=0)
""", {"x_ptr": ptr(), "n": Binding("int", 1 << 16), "BLOCK": Binding("constexpr", 1024)})
    reduction = report.reductions[0]
    assert reduction.loops and reduction.cross_warp


def test_last_axis_reduction_of_a_narrow_2d_tile_stays_in_the_warp():
    report = walk("""
@triton.jit
def k(x_ptr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.arange(0, BLOCK_R)
    c = tl.arange(0, BLOCK_C)
    s = tl.sum(tl.load(x_ptr + r[:, None] * BLOCK_C + c[None, :]), axis=1)
""", {"x_ptr": ptr(), "BLOCK_R": Binding("constexpr", 64), "BLOCK_C": Binding("constexpr", 64)})
    assert not report.reductions[0].cross_warp


def test_explicit_int64_offsets_are_per_element():
    report = walk("""
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
""", {"x_ptr": ptr(), "BLOCK": Binding("constexpr", 1024)})
    assert any(op.per_element for op in report.int64_ops)


def test_int64_scalar_base_with_int32_offsets_is_not_per_element():
    report = walk("""
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    base = x_ptr + tl.program_id(0).to(tl.int64) * BLOCK
    x = tl.load(base + tl.arange(0, BLOCK))
""", {"x_ptr": ptr(), "BLOCK": Binding("constexpr", 1024)})
    assert report.int64_ops and not any(op.per_element for op in report.int64_ops)


def test_broadcast_sum_in_the_form_combine_rewrites_becomes_a_dot():
    report = walk("""
@triton.jit
def k(a_ptr, b_ptr, M: tl.constexpr):
    i = tl.arange(0, M)
    a = tl.load(a_ptr + i[:, None] * M + i[None, :])
    b = tl.load(b_ptr + i[:, None] * M + i[None, :])
    c = tl.sum(a[:, :, None] * b[None, :, :], axis=1)
""", {"a_ptr": ptr(), "b_ptr": ptr(), "M": Binding("constexpr", 32)})
    assert [d.a_shape for d in report.dots] == [(32, 32)] and report.dots[0].input_precision == "tf32"
    assert report.reductions == []


def test_broadcast_sum_in_other_forms_stays_on_cuda_cores():
    report = walk("""
@triton.jit
def k(a_ptr, b_ptr, M: tl.constexpr):
    i = tl.arange(0, M)
    a = tl.load(a_ptr + i[:, None] * M + i[None, :])
    bt = tl.load(b_ptr + i[:, None] * M + i[None, :])
    c = tl.sum(a[:, None, :] * bt[None, :, :], axis=2)
""", {"a_ptr": ptr(), "b_ptr": ptr(), "M": Binding("constexpr", 32)})
    assert report.dots == [] and report.reductions[0].outer_product


def test_helper_jit_functions_are_inlined():
    report = walk("""
@triton.jit
def twice(p, offs):
    return tl.load(p + offs) * 2

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    y = twice(x_ptr, tl.arange(0, BLOCK))
""", {"x_ptr": ptr(), "BLOCK": Binding("constexpr", 512)})
    assert len(report.accesses) == 1 and report.accesses[0].shape == (512,)


def test_unmodelled_constructs_stay_pessimistic_instead_of_failing():
    report = walk("""
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    weird = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [offs], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(x_ptr + weird, offs)
""", {"x_ptr": ptr(), "BLOCK": Binding("constexpr", 256)})
    assert report.accesses[0].width.per_thread == 1
