"""The AxisInfo mirror gives the vector widths Triton 3.6 gives (checked against sm_90 PTX)."""
from __future__ import annotations

from ladder.diagnoser.triage import axisinfo as ax
from ladder.diagnoser.triage.axisinfo import AxisInfo


def offsets(block: int, base_div: int) -> AxisInfo:
    """pid * BLOCK + tl.arange(0, BLOCK) with pid * BLOCK of divisibility `base_div`."""
    base = ax.splat(AxisInfo.scalar(base_div), (block,))
    return ax.binary("add", base, AxisInfo.make_range(0, block), (block,))


def pointer(offs: AxisInfo, block: int, elem_bytes: int = 4, aligned: bool = True) -> AxisInfo:
    return ax.binary("addptr", ax.splat(AxisInfo.scalar(16 if aligned else elem_bytes), (block,)), offs,
                     (block,), elem_bytes)


def test_aligned_block_loads_are_128_bit():
    ptr = pointer(offsets(1024, 1024), 1024)
    assert ax.access_width(ptr, (1024,), 32, 4).vector_bits == 128


def test_mask_against_a_size_not_divisible_by_16_makes_loads_scalar():
    offs = offsets(1024, 1024)
    mask = ax.binary("cmp", offs, ax.splat(AxisInfo.scalar(1), (1024,)), (1024,))
    width = ax.access_width(pointer(offs, 1024), (1024,), 32, 4, mask)
    assert width.vector_bits == 32


def test_mask_against_a_size_divisible_by_16_keeps_vectors():
    offs = offsets(1024, 1024)
    mask = ax.binary("cmp", offs, ax.splat(AxisInfo.scalar(16), (1024,)), (1024,))
    assert ax.access_width(pointer(offs, 1024), (1024,), 32, 4, mask).vector_bits == 128


def test_row_stride_not_divisible_by_16_makes_row_loads_scalar():
    row_start = ax.binary("mul", AxisInfo.scalar(1), AxisInfo.scalar(1), ())  # row * stride, stride % 16 != 0
    offs = ax.binary("add", ax.splat(row_start, (1024,)), AxisInfo.make_range(0, 1024), (1024,))
    assert ax.access_width(pointer(offs, 1024), (1024,), 32, 4).vector_bits == 32


def test_hints_restore_the_vector():
    offs = ax.binary("add", ax.splat(AxisInfo.scalar(1), (1024,)), AxisInfo.make_range(0, 1024), (1024,))
    hinted = ax.with_hint(ax.with_hint(pointer(offs, 1024), divisibility=16), contiguity=4)
    assert ax.access_width(hinted, (1024,), 32, 4).vector_bits == 128


def test_select_on_offsets_cuts_contiguity_to_the_condition_constancy():
    offs = offsets(2048, 2048)
    cond = ax.binary("cmp", offs, ax.splat(AxisInfo.scalar(16), (2048,)), (2048,))
    safe = ax.select(cond, offs, AxisInfo.of_constant(0, (2048,)), 1)
    assert safe.contiguity == (1,)


def test_remainder_by_runtime_size_keeps_contiguity_of_its_divisibility():
    offs = offsets(1024, 1024)
    assert ax.binary("rem", offs, ax.splat(AxisInfo.scalar(16), (1024,)), (1024,)).contiguity == (16,)
    assert ax.binary("rem", offs, ax.splat(AxisInfo.scalar(1), (1024,)), (1024,)).contiguity == (1,)


def test_small_blocks_get_one_element_per_thread():
    ptr = pointer(offsets(128, 128), 128)
    assert ax.access_width(ptr, (128,), 32, 4).per_thread == 1


def test_2d_tile_orders_by_contiguity():
    rows = ax.expand_dims(AxisInfo.make_range(0, 64), 1)
    cols = ax.expand_dims(AxisInfo.make_range(0, 64), 0)
    strided = ax.binary("mul", ax.broadcast(rows, (64, 1), (64, 64)), ax.splat(AxisInfo.scalar(16), (64, 64)), (64, 64))
    offs = ax.binary("add", strided, ax.broadcast(cols, (1, 64), (64, 64)), (64, 64))
    assert ax.order_from_contiguity(offs.contiguity) == [1, 0]


def test_blocked_layout_puts_warps_on_the_slow_axis_once_a_warp_covers_a_row():
    assert ax.blocked_layout((32, 128), [1, 4], [1, 0], 4)[1] == [4, 1]
    assert ax.blocked_layout((32, 256), [1, 4], [1, 0], 4)[1] == [2, 2]
