"""Rules that keep triage precise: for each, the kernel shape that must fire and the close variant
that must not (the variants are edits of kernels from the labeled and blind sets)."""
from __future__ import annotations

from pathlib import Path

from diagnoser.triage import run_triage

from .triage_helpers import HERE, write_pair

BLIND2 = HERE / "blind2"


def found(tmp_path: Path, base: str, *edits: tuple[str, str], cases: str | None = None) -> dict[str, list]:
    """Findings by pattern for `base` (a folder under tests/triage) after text edits of its
    solution and, given `cases`, another get_cases()."""
    folder = HERE / base
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
