"""Source-level detectors on small variations: what must fire and what must not (hard negatives)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.triage import run_triage

from .triage_helpers import FIXTURES, LABELED, write_pair


def found(tmp_path: Path, base: str, *edits: tuple[str, str], problem: str | None = None) -> set[str]:
    folder = LABELED / base if (LABELED / base).is_dir() else FIXTURES / base
    text = (folder / "solution.py").read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    solution, problem_path = write_pair(tmp_path / base, text, problem or str(folder / "problem.py"))
    return {f.pattern for f in run_triage(solution, problem_path).findings}


def test_tiny_block_gone_with_a_big_block(tmp_path):
    assert "nv.tiny-block" not in found(tmp_path, "k01", ("128),)](x, y, out, self.alpha, n, BLOCK=128",
                                                          "2048),)](x, y, out, self.alpha, n, BLOCK=2048"))


def test_transposed_dot_operand_is_not_a_strided_inner_axis(tmp_path):
    assert "nv.strided-inner-axis" not in found(tmp_path, "k13")


def test_tutorial_style_modulo_on_tile_indices_is_not_per_element_index_math(tmp_path):
    patterns = found(tmp_path, "c02", ("offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
                                       "offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M"))
    assert "nv.index-div-mod" not in patterns


def test_flat_index_split_by_a_runtime_size_is_index_math(tmp_path):
    assert "nv.index-div-mod" in found(tmp_path, "k02")


def test_chunked_scan_is_not_a_loop_carried_reduction(tmp_path):
    patterns = found(tmp_path, "k10", ("total += tl.sum(x * x, axis=0)", "total += tl.cumsum(x * x, axis=0)"))
    assert "nv.loop-carried-reduction" not in patterns


def test_vector_accumulation_reduced_after_the_loop_is_clean(tmp_path):
    patterns = found(tmp_path, "k10", ("total = 0.0", "total = tl.zeros((BLOCK,), dtype=tl.float32)"),
                     ("total += tl.sum(x * x, axis=0)", "total += x * x"),
                     ("tl.store(out_ptr + row, total)", "tl.store(out_ptr + row, tl.sum(total, axis=0))"))
    assert "nv.loop-carried-reduction" not in patterns


def test_relaxed_atomics_on_per_program_addresses_are_not_contended(tmp_path):
    patterns = found(tmp_path, "k12", ("tl.atomic_add(out_ptr, tl.sum(tl.abs(x), axis=0))",
                                       "tl.atomic_add(out_ptr + pid, tl.sum(tl.abs(x), axis=0), sem=\"relaxed\")"))
    assert "nv.atomic-contention" not in patterns


def test_wgmma_friendly_tiles_are_not_mma_v2(tmp_path):
    assert "nv.mma-v2-on-hopper" not in found(tmp_path, "k04", ("triton.cdiv(M, 32)", "triton.cdiv(M, 64)"),
                                              ("BLOCK_M=32", "BLOCK_M=64"))


def test_two_warps_force_mma_v2(tmp_path):
    patterns = found(tmp_path, "c02", ('num_stages=4, num_warps=4),\n        triton.Config({"BLOCK_M": 64',
                                       'num_stages=4, num_warps=2),\n        triton.Config({"BLOCK_M": 64'))
    assert "nv.mma-v2-on-hopper" not in patterns  # one bad config out of three: the tuner can avoid it


def test_grouped_gemm_is_not_flagged_for_ordering(tmp_path):
    assert "nv.gemm-no-grouped-order" not in found(tmp_path, "k04")


def test_fused_epilogue_is_clean(tmp_path):
    assert "nv.unfused-epilogue" not in found(tmp_path, "c06")


def test_a_single_launch_is_not_launch_bound(tmp_path):
    assert "nv.launch-bound" not in found(tmp_path, "c03")


def test_three_passes_over_rows_too_long_for_the_chip_are_still_redundant(tmp_path):
    solution, problem = write_pair(tmp_path / "long", (LABELED / "k11" / "solution.py").read_text(),
                                   str(LABELED / "k11" / "problem.py"))
    text = Path(problem).read_text()
    Path(problem).write_text(text[:text.index("def get_cases")] + 'def get_cases():\n    return [{"rows": 64, "dim": 1 << 20}, {"rows": 32, "dim": 1 << 21}]\n')
    assert "nv.redundant-global-traffic" in {f.pattern for f in run_triage(solution, problem).findings}


@pytest.mark.parametrize("name", sorted(p.name for p in LABELED.iterdir() if p.name.startswith("c")))
def test_clean_kernels_have_no_findings(name):
    assert run_triage(str(LABELED / name / "solution.py")).findings == []


# ------------------------------------------------------------------------ nv.hardcoded-config

def _cases(tmp_path: Path, base: str, cases: str) -> str:
    """A copy of `base`'s problem with other get_cases()."""
    folder = LABELED / base if (LABELED / base).is_dir() else FIXTURES / base
    text = (folder / "problem.py").read_text()
    start = text.index("def get_cases")
    end = text.find("\n\n\n", start) if "\n\n\n" in text[start:] else len(text)
    path = tmp_path / "problem.py"
    path.write_text(text[:start] + f"def get_cases():\n    return {cases}" + text[end:])
    return str(path)


def test_a_sensible_fixed_elementwise_block_is_not_a_hardcoded_config(tmp_path):
    patterns = found(tmp_path, "elementwise", ("triton.cdiv(n, 128)", "triton.cdiv(n, 1024)"), ("BLOCK=128", "BLOCK=1024"))
    assert "nv.hardcoded-config" not in patterns and "nv.tiny-block" not in patterns


def test_a_fixed_gemm_config_that_fits_every_shape_is_not_a_hardcoded_config(tmp_path):
    patterns = found(tmp_path, "gemm_rowmajor", ("triton.cdiv(M, 64), triton.cdiv(N, 64)", "triton.cdiv(M, 128), triton.cdiv(N, 128)"),
                     ("BLOCK_M=64, BLOCK_N=64", "BLOCK_M=128, BLOCK_N=128"))
    assert "nv.hardcoded-config" not in patterns


def test_a_fixed_gemm_tile_that_pads_a_skinny_case_is_a_hardcoded_config(tmp_path):
    edits = (("triton.cdiv(M, 64), triton.cdiv(N, 64)", "triton.cdiv(M, 128), triton.cdiv(N, 128)"),
             ("BLOCK_M=64, BLOCK_N=64", "BLOCK_M=128, BLOCK_N=128"))
    problem = _cases(tmp_path, "gemm_rowmajor", '[{"M": 32, "N": 8192, "K": 4096}, {"M": 4096, "N": 4096, "K": 1024}]')
    assert "nv.hardcoded-config" in found(tmp_path, "gemm_rowmajor", *edits, problem=problem)


def test_a_fixed_gemm_config_for_one_shape_is_not_a_hardcoded_config(tmp_path):
    problem = _cases(tmp_path, "gemm_rowmajor", '[{"M": 4096, "N": 4096, "K": 1024}, {"M": 4096, "N": 4096, "K": 1536}]')
    assert "nv.hardcoded-config" not in found(tmp_path, "gemm_rowmajor", problem=problem)


# ---------------------------------------------------------------------------- nv.small-grid

def test_small_grids_launched_in_a_loop_count_their_work_together(tmp_path):
    problem = _cases(tmp_path, "k15", '[{"rows": 256, "cols": 32768}, {"rows": 128, "cols": 65536}]')
    patterns = found(tmp_path, "k15", problem=problem)
    assert {"nv.small-grid", "nv.launch-bound"} <= patterns


def test_a_loop_of_small_grids_moving_little_is_only_launch_bound(tmp_path):
    patterns = found(tmp_path, "k15")
    assert "nv.launch-bound" in patterns and "nv.small-grid" not in patterns


# ---------------------------------------------------------------------- nv.unfused-epilogue

def test_scattering_results_back_through_an_index_is_not_an_unfused_epilogue(tmp_path):
    assert "nv.unfused-epilogue" not in found(tmp_path, "routed_groups")


# ------------------------------------------------------------------------- nv.scalar-access

def test_do_not_specialize_on_a_row_stride_drops_its_divisibility(tmp_path):
    patterns = found(tmp_path, "c03", ("@triton.jit\ndef softmax_kernel", '@triton.jit(do_not_specialize=["stride_x", 3])\ndef softmax_kernel'))
    assert "nv.scalar-access" in patterns


def test_do_not_specialize_on_the_mask_bound_narrows_accesses_through_the_mask(tmp_path):
    folder = LABELED / "c03"
    text = (folder / "solution.py").read_text().replace(
        "@triton.jit\ndef softmax_kernel", '@triton.jit(do_not_specialize=["n_cols"])\ndef softmax_kernel')
    solution, problem = write_pair(tmp_path / "c03", text, str(folder / "problem.py"))
    details = [e["detail"] for f in run_triage(solution, problem).findings if f.pattern == "nv.scalar-access"
               for e in f.evidence]
    assert details and all("limited by the mask" in d for d in details)


def test_a_narrow_access_with_a_tiny_share_of_the_bytes_is_not_reported(tmp_path, monkeypatch):
    from ladder.diagnoser.triage.detectors.source import access

    assert "nv.scalar-access" not in found(tmp_path, "row_moments")
    monkeypatch.setattr(access, "MIN_ACCESS_SHARE", 0.0)
    assert "nv.scalar-access" in found(tmp_path, "row_moments")


def test_a_broadcast_of_a_per_channel_value_is_not_a_scalar_access(tmp_path):
    assert "nv.scalar-access" not in found(tmp_path, "channel_scale")


def test_interleaved_accesses_that_cover_contiguous_runs_are_scalar_access(tmp_path):
    patterns = found(tmp_path, "complex_rotate")
    assert "nv.scalar-access" in patterns and "nv.strided-inner-axis" not in patterns


def test_a_stride_two_access_without_its_partner_is_strided(tmp_path):
    patterns = found(tmp_path, "complex_rotate", ("re * s + im * c, mask=mask)", "re * s + 0.0 * c, mask=mask)"),
                     ("    im = tl.load(z_ptr + 2 * i + 1, mask=mask, other=0.0)\n", "    im = re\n"))
    assert "nv.strided-inner-axis" in patterns


# ---------------------------------------------------------------------- nv.atomic-contention

def test_scatter_adds_spread_over_a_large_target_are_not_contended(tmp_path):
    assert "nv.atomic-contention" not in found(tmp_path, "index_add_rows")


def test_scatter_adds_onto_a_few_rows_are_contended(tmp_path):
    problem = _cases(tmp_path, "index_add_rows", '[{"rows": 65536, "dim": 256, "targets": 16}, {"rows": 131072, "dim": 128, "targets": 64}]')
    assert "nv.atomic-contention" in found(tmp_path, "index_add_rows", problem=problem)


# ------------------------------------------------------------------- nv.hot-layout-conversion

def test_a_vector_loaded_per_iteration_and_converted_across_warps_is_hot(tmp_path):
    assert "nv.hot-layout-conversion" in found(tmp_path, "matvec_rows")


def test_a_vector_whose_slice_layout_stays_within_each_warp_is_not_hot(tmp_path):
    patterns = found(tmp_path, "matvec_rows", ("BLOCK_R=64, BLOCK_C=128", "BLOCK_R=16, BLOCK_C=512"),
                     ("triton.cdiv(rows, 64)", "triton.cdiv(rows, 16)"))
    assert "nv.hot-layout-conversion" not in patterns


def test_a_vector_with_fewer_elements_than_threads_is_reloaded_in_place_not_converted(tmp_path):
    assert "nv.hot-layout-conversion" not in found(tmp_path, "matvec_rows", ("BLOCK_C=128", "BLOCK_C=64"))


def test_a_transposed_dot_operand_does_not_make_the_product_a_transposed_store(tmp_path):
    patterns = found(tmp_path, "gemm_rowmajor", ("acc += tl.dot(a, b)", "acc += tl.dot(tl.trans(tl.trans(a)), b)"))
    assert "nv.hot-layout-conversion" not in patterns


def test_a_permuted_accumulator_on_its_way_to_the_store_adds_no_conversion_of_its_own(tmp_path):
    stored = "    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,"
    permuted = stored.replace(", acc,", ", tl.permute(tl.permute(acc, (1, 0)), (1, 0)),")
    assert "nv.hot-layout-conversion" not in found(tmp_path, "gemm_rowmajor", (stored, permuted))
    transposed_c = "tl.load(c_ptr + rn[:, None] * stride_cm + rm[None, :] * stride_cn)"
    reloaded = stored.replace(", acc,", f", tl.permute({transposed_c}, (1, 0)),")
    assert "nv.hot-layout-conversion" in found(tmp_path / "loaded", "gemm_rowmajor", (stored, reloaded))


# ---------------------------------------------------------------------- nv.strided-inner-axis

def test_a_transposed_load_whose_contiguous_axis_the_compiler_sees_is_coalesced(tmp_path):
    patterns = found(tmp_path, "matvec_rows", ("w = tl.load(w_ptr + r[:, None] * cols + c[None, :], mask=(r[:, None] < rows) & (c[None, :] < cols), other=0.0)",
                                               "w = tl.trans(tl.load(w_ptr + r[None, :] * cols + c[:, None], mask=(r[None, :] < rows) & (c[:, None] < cols), other=0.0))"))
    assert "nv.strided-inner-axis" not in patterns


def test_a_block_pointer_walking_a_strided_dimension_fastest_is_strided(tmp_path):
    text = (FIXTURES / "matvec_rows" / "solution.py").read_text()
    column_sums = text.replace(
        "        x = tl.load(x_ptr + c, mask=c < cols, other=0.0)\n", "").replace(
        "        w = tl.load(w_ptr + r[:, None] * cols + c[None, :], mask=(r[:, None] < rows) & (c[None, :] < cols), other=0.0)\n"
        "        acc += tl.sum(w * x[None, :], axis=1)\n",
        "        col = tl.make_block_ptr(w_ptr + c0, shape=(rows,), strides=(cols,), offsets=(r0,), block_shape=(BLOCK_R,), order=(0,))\n"
        "        acc += tl.load(col, boundary_check=(0,), padding_option=\"zero\")\n").replace(
        "    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)\n",
        "    r0 = tl.program_id(0) * BLOCK_R\n    r = r0 + tl.arange(0, BLOCK_R)\n")
    solution, problem = write_pair(tmp_path / "cols", column_sums, str(FIXTURES / "matvec_rows" / "problem.py"))
    findings = run_triage(solution, problem).findings
    assert "nv.strided-inner-axis" in {f.pattern for f in findings}
    transposed = column_sums.replace("shape=(rows,), strides=(cols,)", "shape=(rows,), strides=(1,)")
    solution, problem = write_pair(tmp_path / "rows", transposed, str(FIXTURES / "matvec_rows" / "problem.py"))
    assert "nv.strided-inner-axis" not in {f.pattern for f in run_triage(solution, problem).findings}


# --------------------------------------------------------------- nv.redundant-global-traffic

def test_a_tensor_read_again_by_a_second_kernel_is_redundant_traffic(tmp_path):
    assert "nv.redundant-global-traffic" in found(tmp_path, "row_center")


def test_rows_too_long_to_keep_on_chip_may_be_read_by_two_kernels(tmp_path):
    problem = _cases(tmp_path, "row_center", '[{"rows": 1024, "dim": 65536}, {"rows": 512, "dim": 131072}]')
    assert "nv.redundant-global-traffic" not in found(tmp_path, "row_center", problem=problem)


def test_a_fixed_gemm_config_the_compiled_kernel_shows_spilling_is_a_hardcoded_config(tmp_path):
    from ladder.diagnoser.evidence import Fact

    edits = (("triton.cdiv(M, 64), triton.cdiv(N, 64)", "triton.cdiv(M, 128), triton.cdiv(N, 128)"),
             ("BLOCK_M=64, BLOCK_N=64", "BLOCK_M=128, BLOCK_N=128"))
    folder = FIXTURES / "gemm_rowmajor"
    text = (folder / "solution.py").read_text()
    for old, new in edits:
        text = text.replace(old, new)
    solution, problem = write_pair(tmp_path / "g", text, str(folder / "problem.py"))
    spill = Fact("matmul_kernel", "spill", {"spill_stores_bytes": 512, "spill_loads_bytes": 512}, line=22)
    assert "nv.hardcoded-config" not in {f.pattern for f in run_triage(solution, problem).findings}
    assert "nv.hardcoded-config" in {f.pattern for f in run_triage(solution, problem, facts=[spill]).findings}
