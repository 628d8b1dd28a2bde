"""IR-level detectors on hand-made rung-3 facts: each fires on its signal and stays quiet without it."""
from __future__ import annotations

import pytest

from ladder.diagnoser.evidence import Fact
from ladder.diagnoser.triage import triage
from ladder.diagnoser.triage.context import TriageContext
from ladder.diagnoser.triage.detectors import ir
from ladder.diagnoser.triage.source import parse_module

from .triage_helpers import LABELED as LABELED_DIR

SOURCE = "import triton\nimport triton.language as tl\n"


def ctx(*facts: Fact, target: str = "nvidia") -> TriageContext:
    return TriageContext(source=parse_module(SOURCE), target=target, facts=list(facts))


def fact(fact_kind: str, line: int = 10, kernel: str = "k[n:i32%16]", **value) -> Fact:
    return Fact(kernel=kernel, kind=fact_kind, value=value, file="s.py", line=line, stage="ttgir", excerpt="...")


CASES = [
    (ir.detect_ir_access, fact("global_access", op="load", vector_bits=32, tensor_shape=[1024], via="ld.global"),
     fact("global_access", op="load", vector_bits=128, tensor_shape=[1024], via="ld.global"), "nv.scalar-access"),
    (ir.detect_ir_spill, fact("spill", spill_stores_bytes=96, spill_loads_bytes=96, local_bytes=96),
     fact("spill", spill_stores_bytes=0, spill_loads_bytes=0, local_bytes=0), "nv.register-spill"),
    (ir.detect_ir_layout, fact("convert_layout", src="blocked", dst="mma", in_loop=True, through_shared=True),
     fact("convert_layout", src="blocked", dst="blocked", in_loop=False, through_shared=True), "nv.hot-layout-conversion"),
    (ir.detect_ir_dot, fact("dot_lowering", kind="mma_sync", mma_version=2),
     fact("dot_lowering", kind="wgmma", mma_version=3), "nv.mma-v2-on-hopper"),
    (ir.detect_ir_dot, fact("dot_lowering", kind="fma", input_precision="ieee"),
     fact("dot_lowering", kind="wgmma", mma_version=3), "nv.no-tensor-core"),
    (ir.detect_ir_pipelining, fact("pipelining", feeds_dot=True, pipelined=False, sync_loads=2, requested_stages=1),
     fact("pipelining", feeds_dot=True, pipelined=True, async_copies=2), "nv.unpipelined-loop"),
    (ir.detect_ir_occupancy, fact("occupancy", limiter="shared_memory", programs_per_sm=1, warps_per_sm=4),
     fact("occupancy", limiter="registers", programs_per_sm=1, warps_per_sm=4), "nv.smem-limits-occupancy"),
    (ir.detect_ir_reductions, fact("reduction_in_loop", op="add", cross_warp=True, warps_along_axis=4),
     fact("reduction_in_loop", op="add", cross_warp=False, warps_along_axis=1), "nv.loop-carried-reduction"),
    (ir.detect_ir_index, fact("divrem_in_loop", op="remsi", per_element=True, power_of_two=False, dtype="i32"),
     fact("divrem_in_loop", op="divsi", per_element=False, power_of_two=False), "nv.index-div-mod"),
    (ir.detect_ir_index, fact("int64_index", ops=["arith.addi", "arith.muli"], per_element=True, count=3),
     fact("int64_index", ops=["arith.extsi"], per_element=False, count=1), "nv.int64-index"),
    (ir.detect_ir_atomics, fact("atomic", op="fadd", sem="acq_rel", in_loop=True),
     fact("atomic", op="fadd", sem="relaxed", in_loop=False), "nv.atomic-contention"),
    (ir.detect_ir_launch, fact("launch", programs=16, sm_count=132, grid=[16, 1, 1]),
     fact("launch", programs=4096, sm_count=132, grid=[4096, 1, 1]), "nv.small-grid"),
]


@pytest.mark.parametrize("detector,positive,negative,pattern", CASES, ids=[c[3] + ":" + c[1].kind for c in CASES])
def test_detector_fires_on_its_signal(detector, positive, negative, pattern):
    findings = detector(ctx(positive))
    assert [f.pattern for f in findings] == [pattern]
    per_kernel = positive.kind in ("spill", "occupancy", "launch")  # kernel-wide facts carry no line
    assert findings[0].rung == 3 and findings[0].kernel == "k"
    assert findings[0].line == (None if per_kernel else positive.line)
    assert findings[0].evidence[0]["type"] == "fact" and findings[0].evidence[0]["kind"] == positive.kind


@pytest.mark.parametrize("detector,positive,negative,pattern", CASES, ids=[c[3] + ":" + c[1].kind for c in CASES])
def test_detector_is_quiet_without_its_signal(detector, positive, negative, pattern):
    assert detector(ctx(negative)) == []


ASCEND = [
    (fact("discrete_access", op="load", elements=1024), "npu.discrete-access"),
    (fact("masked_load_fill", fill="0.0"), "npu.masked-load-fill"),
    (fact("int64_arith", op="addi", count=2), "npu.int64-scalar-fallback"),
    (fact("int_compare", dtype="i32", predicate="slt", count=1), "npu.where-condition-dtype"),
    (fact("ub_usage", bytes=262144, limit=196608, multibuffer_factor=2, fits=False), "npu.ub-overflow"),
    (fact("unaligned_tail", tail_bytes=12, padded_bytes=32), "npu.unaligned-tail-axis"),
]


@pytest.mark.parametrize("item,pattern", ASCEND, ids=[p for _, p in ASCEND])
def test_ascend_facts_map_to_npu_patterns(item, pattern):
    assert [f.pattern for f in ir.detect_ir_ascend(ctx(item, target="ascend"))] == [pattern]


def test_grid_past_the_core_limit_is_reported_for_ascend_only():
    launch = fact("launch", programs=131072, sm_count=40, max_grid=65535, grid=[131072, 1, 1])
    assert [f.pattern for f in ir.detect_ir_launch(ctx(launch, target="ascend"))] == ["npu.grid-exceeds-cores"]


def test_a_few_bytes_spilled_once_are_not_reported():
    assert ir.detect_ir_spill(ctx(fact("spill", spill_stores_bytes=4, spill_loads_bytes=4, local_bytes=0))) == []


def test_kernel_wide_fact_joins_the_source_finding_of_its_kernel():
    from ladder.diagnoser.evidence import Finding
    from ladder.diagnoser.triage import merge

    source = Finding("nv.register-spill", 1, "spill", line=30, kernel="k", confidence=0.6,
                     evidence=[{"type": "source", "line": 30}])
    merged = merge([source] + ir.detect_ir_spill(ctx(fact("spill", spill_stores_bytes=96, spill_loads_bytes=96))))
    assert len(merged) == 1 and merged[0].line == 30 and merged[0].rung == 3


def test_fact_on_another_line_of_the_same_statement_merges():
    from ladder.diagnoser.evidence import Finding
    from ladder.diagnoser.triage import merge

    source = Finding("nv.scalar-access", 1, "scalar", line=35, kernel="k", confidence=0.65,
                     evidence=[{"type": "source", "line": 35, "end_line": 36}])
    merged = merge([source] + ir.detect_ir_access(ctx(fact("global_access", line=36, op="store", vector_bits=16,
                                                           tensor_shape=[64, 64], via="st.global"))))
    assert len(merged) == 1 and merged[0].confidence > 0.9


def test_facts_as_dicts_are_accepted_by_triage(tmp_path):
    solution = tmp_path / "s.py"
    solution.write_text(SOURCE)
    item = fact("dot_lowering", kind="mma_sync", mma_version=2).to_dict()
    assert [f.pattern for f in triage(str(solution), facts=[item])] == ["nv.mma-v2-on-hopper"]


# ------------------------------------------------- facts read with what the source walk knows

def run_with(tmp_path, base: str, facts: list[Fact], *edits: tuple[str, str]):
    from ladder.diagnoser.triage import run_triage

    from .triage_helpers import FIXTURES, LABELED, write_pair

    folder = FIXTURES / base if (FIXTURES / base).is_dir() else LABELED / base
    text = (folder / "solution.py").read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    solution, problem = write_pair(tmp_path / base, text, str(folder / "problem.py"))
    return run_triage(solution, problem, facts=facts)


def patterns_at(result, pattern: str) -> list:
    return [f.line for f in result.findings if f.pattern == pattern]


def test_narrow_compiled_access_to_a_broadcast_value_is_not_scalar_access(tmp_path):
    narrow = dict(op="load", vector_bits=32, elements=1, tensor_shape=[2048], via="ld.global")
    kernel = "channel_scale_kernel"
    assert patterns_at(run_with(tmp_path, "channel_scale", [fact("global_access", 13, kernel, **narrow)]),
                       "nv.scalar-access") == []
    assert patterns_at(run_with(tmp_path, "channel_scale", [fact("global_access", 12, kernel, **narrow)]),
                       "nv.scalar-access") == [12]


def test_compiler_generated_int64_math_is_not_the_authors(tmp_path):
    wide = fact("int64_index", 14, "matvec_kernel", ops=["arith.muli", "arith.addi"], per_element=True, count=4)
    assert patterns_at(run_with(tmp_path, "matvec_rows", [wide]), "nv.int64-index") == []
    authored = ("r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)",
                "r = (tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)).to(tl.int64)")
    assert 14 in patterns_at(run_with(tmp_path, "matvec_rows", [wide], authored), "nv.int64-index")


def test_a_tile_index_wrapped_once_per_program_is_not_hot_division(tmp_path):
    wrap = ("offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)", "offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M")
    line = next(i for i, text in enumerate((LABELED_DIR / "c02" / "solution.py").read_text().splitlines(), 1)
                if wrap[0] in text)
    once = fact("divrem_in_loop", line, "matmul_kernel", op="remsi", per_element=True, power_of_two=False, in_loop=False)
    assert patterns_at(run_with(tmp_path, "c02", [once], wrap), "nv.index-div-mod") == []
    looped = fact("divrem_in_loop", line, "matmul_kernel", op="remsi", per_element=True, power_of_two=False, in_loop=True)
    assert patterns_at(run_with(tmp_path, "c02", [looped], wrap), "nv.index-div-mod") == [line]


def test_an_integer_mask_compare_is_not_a_where_condition(tmp_path):
    compare = dict(dtype="i32", predicate="slt", count=1)
    result = run_with(tmp_path, "a02", [fact("int_compare", 12, "norm_kernel", **compare)])
    assert [f for f in result.findings if f.pattern == "npu.where-condition-dtype" and f.rung == 3] == []
    result = run_with(tmp_path, "a02", [fact("int_compare", 14, "norm_kernel", **compare)])
    assert any(f.rung == 3 for f in result.findings if f.pattern == "npu.where-condition-dtype")


def test_a_unified_buffer_estimate_at_the_limit_only_corroborates():
    marginal = fact("ub_usage", bytes=98308, limit=196608, multibuffer_factor=2, fits=False)
    clear = fact("ub_usage", bytes=131072, limit=196608, multibuffer_factor=2, fits=False)
    assert [f.confidence for f in ir.detect_ir_ascend(ctx(marginal, target="ascend"))] == [0.45]
    assert [f.confidence for f in ir.detect_ir_ascend(ctx(clear, target="ascend"))] == [0.9]


# ------------------------------------------------------------------ source findings vetoed

def test_a_strided_suspicion_the_ir_shows_vectorised_is_vetoed_with_its_reason(tmp_path):
    single = (("re * s + im * c, mask=mask)", "re * s + 0.0 * c, mask=mask)"),
              ("    im = tl.load(z_ptr + 2 * i + 1, mask=mask, other=0.0)\n", "    im = re\n"))
    wide = fact("global_access", 13, "rotate_kernel", op="load", vector_bits=128, elements=4, tensor_shape=[1024],
                via="ld.global")
    result = run_with(tmp_path, "complex_rotate", [wide], *single)
    assert 13 not in patterns_at(result, "nv.strided-inner-axis")
    assert any(v["pattern"] == "nv.strided-inner-axis" and v["line"] == 13 and "128 bits" in v["veto"]["reason"]
               for v in result.vetoed)
    narrow = fact("global_access", 13, "rotate_kernel", op="load", vector_bits=32, elements=1, tensor_shape=[1024],
                  via="ld.global")
    assert 13 in patterns_at(run_with(tmp_path, "complex_rotate", [narrow], *single), "nv.strided-inner-axis")


def test_a_conversion_suspicion_the_ir_does_not_show_in_the_loop_is_dropped(tmp_path):
    compiled = fact("resources", None, "matvec_kernel", num_warps=4)
    cold = fact("convert_layout", 16, "matvec_kernel", src="slice", dst="blocked", in_loop=False, through_shared=True)
    assert patterns_at(run_with(tmp_path, "matvec_rows", [compiled, cold]), "nv.hot-layout-conversion") == []
    hot = fact("convert_layout", 13, "matvec_kernel", src="blocked", dst="slice", in_loop=True, through_shared=True)
    assert patterns_at(run_with(tmp_path, "matvec_rows", [compiled, hot]), "nv.hot-layout-conversion")


AUTOTUNED = SOURCE + """
@triton.autotune(configs=[triton.Config({"BLOCK": 512}, num_warps=4),
                          triton.Config({"BLOCK": 2048}, num_warps=8)], key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
"""


def _access(label: str, bits: int) -> Fact:
    return fact("global_access", line=9, kernel=label, op="load", vector_bits=bits, elements=bits // 32,
                tensor_shape=[2048], via="ld.global")


def _autotuned(*facts: Fact) -> list:
    return ir.detect_ir_access(TriageContext(source=parse_module(AUTOTUNED), target="nvidia", facts=list(facts)))


def test_a_narrow_access_in_every_config_of_one_specialization_is_kept_for_an_autotuned_kernel():
    # The misaligned case's specialization compiles narrow under both configs; the aligned one wide.
    found = _autotuned(_access("k[n:i32,BLOCK=512,num_warps=4]", 32), _access("k[n:i32,BLOCK=2048,num_warps=8]", 32),
                       _access("k[n:i32%16,BLOCK=512,num_warps=4]", 128),
                       _access("k[n:i32%16,BLOCK=2048,num_warps=8]", 128))
    assert [f.pattern for f in found] == ["nv.scalar-access"]


def test_a_narrow_access_some_config_of_its_specialization_avoids_is_dropped():
    found = _autotuned(_access("k[n:i32,BLOCK=512,num_warps=4]", 32), _access("k[n:i32,BLOCK=2048,num_warps=8]", 128))
    assert found == []


def test_argument_terms_leave_out_constexprs_and_options():
    assert ir.argument_terms("k[n:i32%16,stride:i64,BLOCK=64,num_warps=4]#2") == ("n:i32%16", "stride:i64")
    assert ir.argument_terms("k[a:tensordesc<fp16[128, 64]>,M:i32,BLOCK_M=128]") == ("M:i32",)
    assert ir.argument_terms("k") == ()
