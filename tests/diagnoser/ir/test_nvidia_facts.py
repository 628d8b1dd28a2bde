"""Each small kernel in ir_kernels.py has one IR property; its fact must land on the marked line."""
from __future__ import annotations

from .ir_kernels import SOURCE, line_of


def at(facts: list, marker: str, **value) -> list:
    """The facts on the marker's line (in ir_kernels.py) whose value has these items."""
    line = line_of(marker)
    return [fact for fact in facts if fact.file == str(SOURCE) and fact.line == line
            and all(fact.value.get(key) == expected for key, expected in value.items())]


def test_aligned_fp32_load_and_store_are_128_bit(facts):
    found = facts("copy_aligned", "global_access")
    assert at(found, "@copy-load", op="load", vector_bits=128, elements=4, dtype="f32", masked=True)
    assert at(found, "@copy-store", op="store", vector_bits=128)


def test_misaligned_pointer_gives_scalar_loads(facts):
    found = facts("copy_misaligned", "global_access")
    assert at(found, "@copy-load", op="load", vector_bits=32, elements=1)
    assert at(found, "@copy-store", op="store", vector_bits=128)


def test_size_not_divisible_by_16_gives_scalar_masked_accesses(facts):
    found = facts("copy_odd_size", "global_access")
    assert at(found, "@copy-load", vector_bits=32) and at(found, "@copy-store", vector_bits=32)


def test_fp16_vector_holds_eight_elements(facts):
    assert at(facts("copy_fp16", "global_access"), "@copy-load", vector_bits=128, elements=8, dtype="f16")


def test_strided_load_is_scalar(facts):
    assert at(facts("strided", "global_access"), "@strided-load", vector_bits=32, elements=1)


def test_scalar_pointer_load_moves_one_element(facts):
    assert at(facts("narrow_row_stride", "global_access"), "@scalar-load", vector_bits=32, elements=1, tensor_shape=[])


def test_tensor_descriptor_copies_go_through_tma(facts):
    found = facts("tma_copy", "global_access")
    (load,) = at(found, "@tma-load", op="load", via="tma", dtype="f32", tensor_shape=[64, 64])
    assert load.value["instructions"] >= 1 and load.value["vector_bits"] is None
    assert at(found, "@tma-store", op="store", via="tma")


def test_register_cap_spills_on_the_heavy_line(facts):
    (spill,) = facts("pressure", "spill")
    assert spill.value["spill_stores_bytes"] > 0 and spill.value["stl"] > 0 and spill.value["ldl"] > 0
    assert spill.line == line_of("@pressure-math")


def test_no_spill_fact_without_spills(facts):
    assert facts("copy_aligned", "spill") == []


def test_transpose_in_loop_converts_layout_through_shared_memory(facts):
    assert at(facts("transpose_loop", "convert_layout"), "@transpose-store", in_loop=True, through_shared=True)


def test_small_block_m_lowers_dot_to_mma_sync_hmma(facts):
    (dot,) = at(facts("matmul_hmma", "dot_lowering"), "@matmul-dot", kind="mma_sync", mma_version=2)
    assert dot.value["sass"].get("HMMA", 0) > 0 and "HGMMA" not in dot.value["sass"]


def test_block_m_128_with_8_warps_lowers_dot_to_wgmma_hgmma(facts):
    (dot,) = at(facts("matmul_hgmma", "dot_lowering"), "@matmul-dot", kind="wgmma", mma_version=3)
    assert dot.value["sass"].get("HGMMA", 0) > 0 and dot.value["operand_dtype"] == "f16"


def test_mma_layout_is_reported_on_the_dot(facts):
    assert at(facts("matmul_hgmma", "layout"), "@matmul-dot", encoding="mma", mma_version=3)
    assert [fact for fact in facts("copy_aligned", "layout") if fact.value["encoding"] == "blocked"]


def test_ieee_fp32_dot_lowers_to_fma(facts):
    (dot,) = at(facts("fp32_dot", "dot_lowering"), "@ieee-dot", kind="fma")
    assert dot.value["sass"].get("FFMA", 0) > 0


def test_k_loop_with_stages_is_pipelined_with_async_copies(facts):
    (loop,) = at(facts("matmul_hgmma", "pipelining"), "@matmul-loop", pipelined=True, feeds_dot=True)
    assert loop.value["async_copies"] > 0 and loop.value["buffers"] == 3
    assert at(facts("matmul_hgmma", "global_access"), "@matmul-load-a", via="cp.async", vector_bits=128)


def test_k_loop_with_one_stage_is_not_pipelined(facts):
    (loop,) = at(facts("matmul_unpipelined", "pipelining"), "@matmul-loop", pipelined=False, requested_stages=1)
    assert loop.value["sync_loads"] == 2 and loop.value["async_copies"] == 0


def test_int64_program_offsets_are_per_element_64_bit_math(facts):
    (fact,) = at(facts("int64_offsets", "int64_index"), "@int64-offsets", per_element=True)
    assert "arith.addi" in fact.value["ops"]
    assert facts("copy_aligned", "int64_index") == []


def test_row_stride_beyond_int32_makes_per_element_offsets_64_bit(facts):
    assert at(facts("wide_row_stride", "int64_index"), "@row-offset", per_element=True)
    assert facts("narrow_row_stride", "int64_index") == []


def test_division_and_remainder_in_loop_by_runtime_width(facts):
    found = facts("divrem_loop", "divrem_in_loop")
    assert at(found, "@divrem-div", op="divsi", in_loop=True, constant_divisor=False)
    assert at(found, "@divrem-rem", op="remsi", in_loop=True)
    assert at(found, "@divrem-constant", constant_divisor=True, power_of_two=True)


def test_atomics_report_operation_semantics_and_scope(facts):
    found = facts("atomics", "atomic")
    assert at(found, "@atomic-add", op="fadd", sem="acq_rel", scope="gpu", in_loop=False)
    assert at(found, "@atomic-max", op="max", sem="relaxed", scope="cta", in_loop=True, per_element=True)


def test_reduction_in_loop_across_four_warps(facts):
    assert at(facts("reduce_loop", "reduction_in_loop"), "@reduce-max", op="maxnumf", cross_warp=True)


def test_reduction_in_loop_within_one_warp_is_not_cross_warp(facts):
    assert at(facts("reduce_loop_one_warp", "reduction_in_loop"), "@reduce-max", cross_warp=False)


def test_debug_barrier_in_loop_is_a_barrier_in_loop(facts):
    (barrier,) = at(facts("barrier_loop", "barrier_in_loop"), "@barrier")
    assert barrier.value["count"] >= 1 and barrier.value["loop_line"] == line_of("@barrier") - 2


def test_big_tiles_with_four_stages_are_limited_by_shared_memory(facts):
    (occupancy,) = facts("matmul_big_tiles", "occupancy")
    assert occupancy.value["limiter"] == "shared_memory" and occupancy.value["programs_per_sm"] == 1
    (resources,) = facts("matmul_big_tiles", "resources")
    assert resources.value["shared_bytes"] > 114 * 1024


def test_many_registers_with_eight_warps_limit_occupancy_by_registers(facts):
    (occupancy,) = facts("matmul_unpipelined", "occupancy")
    (resources,) = facts("matmul_unpipelined", "resources")
    assert occupancy.value["limiter"] == "registers" and resources.value["registers"] > 64
    assert occupancy.value["programs_per_sm"] * 8 * resources.value["registers"] * 32 <= 65536


def test_launch_reports_grid_programs_and_waves_against_132_sms(facts):
    (launch,) = facts("matmul_hmma", "launch")
    assert launch.value["grid"] == [32, 8, 1] and launch.value["programs"] == 256
    assert launch.value["sm_count"] == 132 and launch.value["count"] == 1
    assert 0 < launch.value["waves"] < 1
