"""Rules that keep triage precise: for each, the kernel shape that must fire and the close variant
that must not (the variants are edits of kernels from the labeled and blind sets)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.evidence import Fact
from ladder.diagnoser.triage import run_triage

from .triage_helpers import SETS, write_pair

BLIND2 = SETS / "blind2"


def found(tmp_path: Path, base: str, *edits: tuple[str, str], cases: str | None = None) -> dict[str, list]:
    """Findings by pattern for `base` (a folder under bench/sets/triage) after text edits of its
    solution and, given `cases`, another get_cases()."""
    folder = SETS / base
    text = (folder / "solution.py").read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    solution, problem = write_pair(tmp_path / folder.name, text, str(folder / "problem.py"))
    if cases is not None:
        source = Path(problem).read_text()
        start = source.index("def get_cases")
        end = source.find("\n\n\n", start)
        Path(problem).write_text(source[:start] + f"def get_cases():\n    return {cases}" + source[end:])
    result: dict[str, list] = {}
    for finding in run_triage(solution, problem).findings:
        result.setdefault(finding.pattern, []).append(finding)
    return result


# ------------------------------------------------------------------- nv.loop-carried-reduction

def test_a_sum_accumulated_for_after_the_loop_is_a_loop_carried_reduction(tmp_path):
    assert "nv.loop-carried-reduction" in found(tmp_path, "blind2/grad_global_norm")


def test_a_scan_carry_consumed_by_the_next_iterations_store_is_not(tmp_path):
    assert "nv.loop-carried-reduction" not in found(tmp_path, "blind2/cumsum_time")


def test_an_online_softmax_max_feeding_the_dot_is_not(tmp_path):
    assert "nv.loop-carried-reduction" not in found(tmp_path, "blind2/encoder_attention")


def test_an_online_max_and_sum_kept_only_as_loop_state_is(tmp_path):
    assert "nv.loop-carried-reduction" in found(tmp_path, "blind2/xent_gpt2_vocab")


# --------------------------------------------------------------------------- nv.int64-index

def test_int64_offsets_are_index_math(tmp_path):
    assert "nv.int64-index" in found(tmp_path, "blind2/kv_cache_write")


def test_an_int64_value_stored_as_data_is_not_index_math(tmp_path):
    patterns = found(tmp_path, "blind2/kmeans_assign")
    assert "nv.int64-index" not in patterns


# ------------------------------------------------------------------------- nv.no-tensor-core

def test_a_pairwise_distance_by_broadcast_differences_is_a_matmul_on_cuda_cores(tmp_path):
    findings = found(tmp_path, "blind2/kmeans_assign")["nv.no-tensor-core"]
    assert "pairwise distance" in findings[0].evidence[0]["detail"]


def test_a_max_over_broadcast_differences_is_no_matmul(tmp_path):
    patterns = found(tmp_path, "blind2/kmeans_assign", ("dist += tl.sum(diff * diff, axis=2)",
                                                         "dist += tl.max(diff * diff, axis=2)"))
    assert "nv.no-tensor-core" not in patterns


# ----------------------------------------------------------------------- nv.mma-v2-on-hopper

def test_mma_sync_is_right_when_every_launch_has_fewer_than_64_rows(tmp_path):
    patterns = found(tmp_path, "blind2/moe_decode_experts")
    assert "nv.mma-v2-on-hopper" not in patterns and "nv.hardcoded-config" not in patterns


def test_a_16_row_tile_for_thousands_of_rows_is_mma_v2(tmp_path):
    assert "nv.mma-v2-on-hopper" in found(tmp_path, "blind2/moe_gemm_sorted")


# ---------------------------------------------------------------------------- nv.tiny-block

def test_one_element_per_thread_with_little_in_flight_is_a_tiny_block(tmp_path):
    assert "nv.tiny-block" in found(tmp_path, "blind2/gelu_and_mul")


def test_small_programs_that_together_keep_enough_bytes_in_flight_are_not(tmp_path):
    assert "nv.tiny-block" not in found(tmp_path, "blind2/kv_cache_write")


def test_a_strided_block_is_strided_not_tiny(tmp_path):
    patterns = found(tmp_path, "blind2/channel_layernorm_nchw")
    assert "nv.strided-inner-axis" in patterns and "nv.tiny-block" not in patterns


def test_a_small_dot_tile_inside_a_long_loop_is_not_tiny(tmp_path):
    assert "nv.tiny-block" not in found(tmp_path, "blind2/encoder_attention")


def test_a_small_dot_tile_done_once_per_program_is_tiny(tmp_path):
    assert "nv.tiny-block" in found(tmp_path, "labeled/k26")


# ----------------------------------------------------------------------- nv.atomic-contention

def test_one_atomic_per_program_on_a_shared_address_after_a_long_stream_is_not_contended(tmp_path):
    assert "nv.atomic-contention" not in found(tmp_path, "blind2/grad_global_norm")


def test_one_atomic_per_small_program_on_a_shared_address_is_contended(tmp_path):
    assert "nv.atomic-contention" in found(tmp_path, "labeled/k12")


# --------------------------------------------------------------------------- nv.launch-bound

def test_routing_torch_ops_before_a_long_gemm_are_not_launch_bound(tmp_path):
    assert "nv.launch-bound" not in found(tmp_path, "blind2/moe_gemm_sorted")


def test_many_torch_ops_around_a_small_kernel_are_launch_bound(tmp_path):
    patterns = found(tmp_path, "blind2/moe_gemm_sorted",
                     cases='[{"tokens": 16, "num_experts": 8, "top_k": 2, "in_features": 256, "out_features": 256}]')
    assert "nv.launch-bound" in patterns


# ----------------------------------------------------------------------- nv.unfused-epilogue

def test_an_in_place_epilogue_kernel_on_a_returned_gemm_output_is_unfused(tmp_path):
    assert "nv.unfused-epilogue" in found(tmp_path, "blind2/linear_silu")


def test_a_kernel_re_reading_a_returned_intermediate_is_unfused(tmp_path):
    assert "nv.unfused-epilogue" in found(tmp_path, "blind2/prenorm_residual")


def test_a_torch_op_on_a_scalar_result_is_not_an_unfused_epilogue(tmp_path):
    assert "nv.unfused-epilogue" not in found(tmp_path, "blind2/grad_global_norm")
    assert "nv.unfused-epilogue" not in found(tmp_path, "blind2/xent_gpt2_vocab")


def test_routing_tables_prepared_by_torch_are_not_an_unfused_epilogue(tmp_path):
    assert "nv.unfused-epilogue" not in found(tmp_path, "blind2/moe_gemm_sorted")


def test_a_torch_op_over_a_large_kernel_output_is_unfused(tmp_path):
    patterns = found(tmp_path, "blind2/linear_silu",
                     ("        _bias_silu_kernel[(M, triton.cdiv(N, 2048))](y, b, N, y.stride(0), BLOCK=2048, num_warps=8)\n"
                      "        return y", "        return torch.nn.functional.silu(y + b)"))
    assert "nv.unfused-epilogue" in patterns


# ---------------------------------------------------------------------------------- Ascend

def test_a_grid_far_past_the_cores_with_an_inner_column_loop_still_exceeds_them(tmp_path):
    assert "npu.grid-exceeds-cores" in found(tmp_path, "blind2/npu_embedding")


def test_a_grid_stride_loop_over_the_cores_does_not_exceed_them(tmp_path):
    assert "npu.grid-exceeds-cores" not in found(tmp_path, "blind2/npu_silu_mul")


def test_int64_offsets_affine_in_the_program_id_are_not_a_scalar_fallback(tmp_path):
    assert "npu.int64-scalar-fallback" not in found(tmp_path, "blind2/npu_gelu_tanh")


def test_an_int64_compare_of_loaded_labels_is_a_scalar_fallback(tmp_path):
    assert "npu.int64-scalar-fallback" in found(tmp_path, "blind2/npu_label_mask_nll")


def test_a_positive_strided_store_is_not_a_discrete_access(tmp_path):
    assert "npu.discrete-access" not in found(tmp_path, "blind2/npu_moe_gating")


def test_a_reversed_index_is_a_discrete_access(tmp_path):
    assert "npu.discrete-access" in found(tmp_path, "blind2/npu_seq_flip")


def test_rows_an_unaligned_distance_apart_are_an_unaligned_tail(tmp_path):
    assert "npu.unaligned-tail-axis" in found(tmp_path, "blind2/npu_moe_gating")


def test_rows_an_aligned_distance_apart_are_not(tmp_path):
    patterns = found(tmp_path, "blind2/npu_moe_gating", cases='[{"tokens": 65536}]',
                     *(("logits_ptr + offs_t[:, None] * n_experts", "logits_ptr + offs_t[:, None] * BLOCK_E"),))
    assert "npu.unaligned-tail-axis" not in patterns


def test_a_masked_load_of_a_few_ids_next_to_big_rows_needs_no_fill_finding(tmp_path):
    findings = found(tmp_path, "blind2/npu_embedding").get("npu.masked-load-fill", [])
    assert all(f.line != 12 for f in findings)  # line 12: the [BLOCK_T] ids load


# ----------------------------------------------------------------- IR facts read with the source

def fact(fact_kind: str, line: int, kernel: str, **value) -> dict:
    return {"kernel": kernel, "kind": fact_kind, "value": value, "file": "solution.py", "line": line,
            "stage": "ttgir", "excerpt": "..."}


def with_facts(base: str, *facts: dict) -> dict[str, list]:
    folder = SETS / base
    result: dict[str, list] = {}
    for finding in run_triage(str(folder / "solution.py"), str(folder / "problem.py"), facts=list(facts)).findings:
        result.setdefault(finding.pattern, []).append(finding)
    return result


ACC_TO_BLOCKED = dict(src="mma", dst="blocked", in_loop=True, through_shared=True, shape=[128, 128])


def test_the_accumulator_conversion_for_a_persistent_gemms_store_is_an_epilogue(tmp_path):
    findings = with_facts("blind2/persistent_gemm_fp16", fact("convert_layout", 57, "_matmul_persistent", **ACC_TO_BLOCKED))
    assert "nv.hot-layout-conversion" not in findings


def test_a_conversion_through_shared_memory_elsewhere_in_the_loop_is_hot(tmp_path):
    findings = with_facts("blind2/persistent_gemm_fp16", fact("convert_layout", 51, "_matmul_persistent",
                                                             **{**ACC_TO_BLOCKED, "src": "blocked", "dst": "dot_op"}))
    assert "nv.hot-layout-conversion" in findings


PARTLY_PIPELINED = dict(requested_stages=3, async_copies=1, sync_loads=2, pipelined=True, feeds_dot=True)
SYNC_LOAD = dict(op="load", vector_bits=128, elements=8, via="ld.global", in_loop=True, tensor_shape=[64, 128])


def test_a_dot_operand_left_synchronous_in_a_pipelined_loop_is_unpipelined(tmp_path):
    kernel = "_linear_silu_persistent"
    findings = with_facts("blind2/persistent_linear_silu", fact("pipelining", 27, kernel, **PARTLY_PIPELINED),
                          fact("global_access", 42, kernel, **SYNC_LOAD))
    assert "nv.unpipelined-loop" in findings


def test_a_synchronous_bias_load_in_a_pipelined_loop_is_not(tmp_path):
    kernel = "_linear_silu_persistent"
    findings = with_facts("blind2/persistent_linear_silu", fact("pipelining", 27, kernel, **PARTLY_PIPELINED),
                          fact("global_access", 45, kernel, **{**SYNC_LOAD, "tensor_shape": [128]}))
    assert "nv.unpipelined-loop" not in findings


def test_compiled_mma_sync_on_fewer_than_64_rows_is_not_reported(tmp_path):
    findings = with_facts("blind2/moe_decode_experts",
                          fact("dot_lowering", 22, "_expert_matmul_kernel", kind="mma_sync", mma_version=2))
    assert "nv.mma-v2-on-hopper" not in findings and "nv.hardcoded-config" not in findings


def test_compiled_mma_sync_on_thousands_of_rows_is(tmp_path):
    findings = with_facts("blind2/moe_gemm_sorted", fact("dot_lowering", 27, "_fused_moe_kernel", kind="mma_sync", mma_version=2))
    assert "nv.mma-v2-on-hopper" in findings


def test_a_compiled_cross_warp_reduction_feeding_a_scan_carry_is_not_loop_carried(tmp_path):
    findings = with_facts("blind2/cumsum_time", fact("reduction_in_loop", 21, "_cumsum_kernel", op="add", cross_warp=True,
                                                     warps_along_axis=4))
    assert "nv.loop-carried-reduction" not in findings


def test_a_compiled_cross_warp_reduction_accumulated_for_after_the_loop_is(tmp_path):
    findings = with_facts("blind2/grad_global_norm", fact("reduction_in_loop", 15, "_sq_norm_kernel", op="add",
                                                          cross_warp=True, warps_along_axis=8))
    assert "nv.loop-carried-reduction" in findings


# --------------------------------------------------------------------------- nv.scalar-access

RELU = "../../../kernels/level1/19_relu"


def test_a_mask_on_a_size_that_is_no_multiple_of_the_vector_claims_no_hint(tmp_path):
    folder = SETS / RELU
    findings = run_triage(str(folder / "solution.py"), str(folder / "problem.py"), min_confidence=0).findings
    scalar = [f for f in findings if f.pattern == "nv.scalar-access"]
    assert scalar and all(f.confidence < 0.5 for f in scalar)
    assert all("not a multiple of 4" in f.evidence[0]["detail"] and "hint would" not in f.evidence[0]["detail"]
               for f in scalar)


def test_the_compiled_narrow_access_confirms_the_padding_finding_without_claiming_a_hint():
    folder = SETS / RELU
    narrow = Fact(kernel="relu_kernel[n_elements:i32]", kind="global_access", file="solution.py", line=13,
                  stage="ptx", excerpt="ld.global.b32",
                  value={"op": "load", "vector_bits": 32, "elements": 1, "dtype": "f32", "masked": True,
                         "via": "ld.global", "tensor_shape": [1024]})
    findings = run_triage(str(folder / "solution.py"), str(folder / "problem.py"), facts=[narrow]).findings
    scalar = [f for f in findings if f.pattern == "nv.scalar-access" and f.line == 13]
    assert len(scalar) == 1 and scalar[0].rung == 3
    assert scalar[0].confidence == pytest.approx(0.70)  # the source's 0.45 tail, confirmed: 0.65 + 0.05
    details = [e["detail"] for e in scalar[0].evidence]
    assert any("compiles to 32-bit instructions in relu_kernel[n_elements:i32]" in d and "no hint is true" in d
               for d in details)
    assert not any("hint would be true" in d for d in details)


def test_a_mask_on_sizes_that_are_multiples_of_the_vector_is_a_missing_hint(tmp_path):
    findings = found(tmp_path, RELU, cases='[{"batch_size": 1000, "dim": 100003}, {"batch_size": 4096, "dim": 65536}]')
    assert "hint would" in findings["nv.scalar-access"][0].evidence[0]["detail"]


# -------------------------------------------------------------------- nv.gemm-no-grouped-order

def test_a_plain_tile_order_re_streaming_a_weight_larger_than_l2_needs_grouping(tmp_path):
    assert "nv.gemm-no-grouped-order" in found(tmp_path, "blind2/oproj_residual")


def test_a_plain_tile_order_whose_re_streamed_weight_fits_in_l2_does_not(tmp_path):
    cases = '[{"tokens": 32768, "in_features": 2048, "out_features": 2048}]'
    assert "nv.gemm-no-grouped-order" not in found(tmp_path, "blind2/oproj_residual", cases=cases)


# --------------------------------------------------------------------------- nv.hardcoded-config

def test_a_fixed_tile_that_leaves_sms_idle_on_some_shape_is_a_hardcoded_config(tmp_path):
    assert "nv.hardcoded-config" in found(tmp_path, "blind2/weight_grad_gemm")


def test_a_small_intermediate_whose_consumer_re_reads_the_producers_input_is_unfused(tmp_path):
    assert "nv.unfused-epilogue" in found(tmp_path, "heldout/l2_normalize")


def test_a_hint_true_in_one_case_and_false_in_another_is_reported_as_padding(tmp_path):
    findings = found(tmp_path, "../../../kernels/level1/01_square_matmul")["nv.scalar-access"]
    detail = findings[0].evidence[0]["detail"]
    assert findings[0].confidence < 0.85 and "No hint is true in every case" in detail
    assert "N=4999" in detail and "N=3000" in detail


# ------------------------------------------------------------ small GEMMs on a few SMs (blind3)

def test_a_long_k_loop_on_a_tenth_of_the_sms_is_a_small_grid_and_a_fixed_tile(tmp_path):
    findings = found(tmp_path, "blind3/projection_head")
    assert "nv.small-grid" in findings and "nv.hardcoded-config" in findings


def test_a_short_k_loop_on_a_few_sms_is_neither(tmp_path):
    cases = ('[{"batch": 128, "features": 128, "embed_dim": 768}, {"batch": 256, "features": 64, "embed_dim": 1024},'
             ' {"batch": 64, "features": 128, "embed_dim": 512}]')
    findings = found(tmp_path, "blind3/projection_head", cases=cases)
    assert "nv.small-grid" not in findings and "nv.hardcoded-config" not in findings


def test_a_small_grid_from_one_launch_per_expert_is_no_fixed_tile_finding(tmp_path):
    assert "nv.hardcoded-config" not in found(tmp_path, "heldout/moe_expert_proj")


def test_k_sizes_2x_apart_count_as_different_shapes_after_rounding_to_tiles(tmp_path):
    assert "nv.hardcoded-config" in found(tmp_path, "blind3/whisper_cross_attention")


def test_k_sizes_a_third_apart_do_not(tmp_path):
    cases = ('[{"batch": 32, "heads": 20, "q_len": 448, "kv_len": 1500},'
             ' {"batch": 8, "heads": 20, "q_len": 448, "kv_len": 2000}]')
    assert "nv.hardcoded-config" not in found(tmp_path, "blind3/whisper_cross_attention", cases=cases)


# ----------------------------------------------------------------------- nv.smem-limits-occupancy

def test_six_stages_that_leave_one_program_per_sm_where_registers_allow_two_limit_occupancy(tmp_path):
    findings = found(tmp_path, "blind3/vit_mlp_fc1_gelu")
    assert "nv.smem-limits-occupancy" in findings and "nv.hardcoded-config" in findings


def test_four_stages_at_one_program_per_sm_do_not(tmp_path):
    findings = found(tmp_path, "blind3/vit_mlp_fc1_gelu", ("num_stages=6", "num_stages=4"))
    assert "nv.smem-limits-occupancy" not in findings


# ------------------------------------------------------------------- nv.redundant-global-traffic

def test_one_launch_site_in_a_loop_reading_its_own_piece_is_no_re_read(tmp_path):
    assert "nv.redundant-global-traffic" not in found(tmp_path, "blind3/packed_mean_pool")


# --------------------------------------------------------------------------- nv.scalar-access

def test_a_launch_moving_a_few_kilobytes_has_no_access_width_to_fix(tmp_path):
    assert "nv.scalar-access" not in found(tmp_path, "blind3/sum_squares_persistent")


def test_the_same_masked_load_over_a_large_buffer_is_still_reported(tmp_path):
    edits = (("partial_ptr + offs, mask=offs < count", "partial_ptr + offs, mask=offs < count + 1"),
             ("BLOCK=triton.next_power_of_2(programs))", "BLOCK=triton.next_power_of_2(programs) * 1024)"),
             ("partials = torch.empty(programs,", "partials = torch.empty(programs * 1024,"))
    assert "nv.scalar-access" in found(tmp_path, "blind3/sum_squares_persistent", *edits)


# ------------------------------------------------------------------------- nv.no-tensor-core

def test_every_program_multiplying_one_shared_matrix_by_its_vector_is_a_matmul_on_cuda_cores(tmp_path):
    assert "nv.no-tensor-core" in found(tmp_path, "blind3/rnn_tanh_sequence")


def test_a_matrix_of_its_own_per_program_is_not(tmp_path):
    edit = ("w = tl.load(w_ptr + i[:, None] * H + j[None, :])", "w = tl.load(w_ptr + b * H * H + i[:, None] * H + j[None, :])")
    assert "nv.no-tensor-core" not in found(tmp_path, "blind3/rnn_tanh_sequence", edit)


# ------------------------------------------------------------ nv.loop-carried-reduction (IR)

def _reduction_fact(folder: Path, kernel: str, line: int):
    from ladder.diagnoser.evidence import Fact

    return Fact(kernel=kernel, kind="reduction_in_loop", file=str(folder / "solution.py"), line=line, stage="ttgir",
                value={"op": "addf", "cross_warp": True, "warps_along_axis": 4, "axis": 1})


def test_a_compiled_cross_warp_sum_of_a_dot_result_is_the_dots_tiling_not_a_loop_carried_reduction():
    folder = SETS / "blind3" / "whisper_cross_attention"
    result = run_triage(str(folder / "solution.py"), str(folder / "problem.py"),
                        facts=[_reduction_fact(folder, "cross_attn_fwd", 32)], detectors=["ir_reductions"])
    assert "nv.loop-carried-reduction" not in {f.pattern for f in result.findings}


def test_a_compiled_cross_warp_sum_of_loaded_data_is():
    folder = SETS / "blind3" / "cosine_similarity_rows"
    result = run_triage(str(folder / "solution.py"), str(folder / "problem.py"),
                        facts=[_reduction_fact(folder, "cosine_rows_kernel", 18)], detectors=["ir_reductions"])
    assert "nv.loop-carried-reduction" in {f.pattern for f in result.findings}
