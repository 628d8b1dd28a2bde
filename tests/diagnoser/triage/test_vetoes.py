"""Rung-3 facts veto the rung-1 findings they contradict, and confirm the ones they show."""
from __future__ import annotations

import pytest

from ladder.diagnoser.evidence import Fact, Finding
from ladder.diagnoser.triage import run_triage
from ladder.diagnoser.triage.catalog import load_catalog
from ladder.diagnoser.triage.context import TriageContext
from ladder.diagnoser.triage.source import parse_module
from ladder.diagnoser.triage.vetoes import NO_VETO, VETOES, veto_by_ir

from .triage_helpers import LABELED, write_pair

K22 = LABELED / "k22"  # a 256x256 accumulator on 4 warps: the source predicts spills


def fact(fact_kind: str, line: int | None = 10, kernel: str = "k", excerpt: str = "...", **value) -> Fact:
    return Fact(kernel=kernel, kind=fact_kind, value=value, file="s.py", line=line, stage="sass", excerpt=excerpt)


def predicted(pattern: str, line: int = 10, title: str = "t", **source) -> Finding:
    return Finding(pattern, 1, title, file="s.py", line=line, kernel="k", confidence=0.7,
                   evidence=[{"type": "source", "file": "s.py", "line": line, **source}])


def vetoes(finding: Finding, *facts: Fact) -> list[dict]:
    ctx = TriageContext(source=parse_module("import triton\n"), facts=list(facts))
    rules = {id_: entry.veto["rule"] for id_, entry in load_catalog().items() if entry.veto}
    kept, vetoed = veto_by_ir(ctx, [finding], rules)
    assert len(kept) + len(vetoed) == 1
    return vetoed


def k22(tmp_path, facts: list[Fact]):
    solution, problem = write_pair(tmp_path / "k22", (K22 / "solution.py").read_text(), str(K22 / "problem.py"))
    return run_triage(solution, problem, facts=facts)


NO_SPILL = {"registers": 255, "spills": 0, "spill_stores_bytes": 0, "spill_loads_bytes": 0, "local_bytes": 0,
            "num_warps": 4}


def test_a_predicted_spill_is_vetoed_when_ptxas_spills_nothing(tmp_path):
    without = k22(tmp_path, [])
    assert "nv.register-spill" in {f.pattern for f in without.findings}
    result = k22(tmp_path, [fact("resources", 8, "mm_kernel", **NO_SPILL)])
    assert "nv.register-spill" not in {f.pattern for f in result.findings}
    [vetoed] = [v for v in result.vetoed if v["pattern"] == "nv.register-spill"]
    assert vetoed["veto"]["rung"] == 3 and "spills 0 bytes" in vetoed["veto"]["reason"]
    assert vetoed["veto"]["evidence"][0]["kind"] == "resources"
    assert vetoed["evidence"] == next(f for f in without.findings if f.pattern == "nv.register-spill").evidence
    assert any("vetoed" in note and "nv.register-spill" in note for note in result.notes)


def test_a_spill_ptxas_reports_confirms_the_prediction_and_keeps_the_ir_excerpt(tmp_path):
    source_only = next(f for f in k22(tmp_path, []).findings if f.pattern == "nv.register-spill")
    spilled = dict(NO_SPILL, spills=12772, spill_stores_bytes=7152, spill_loads_bytes=5620)
    spill = fact("spill", 33, "mm_kernel", excerpt="STL.64 [R1+0x10], R4", spill_stores_bytes=7152,
                 spill_loads_bytes=5620, local_bytes=0, stl=1353, ldl=973, in_loop=True)
    result = k22(tmp_path, [fact("resources", 8, "mm_kernel", **spilled), spill])
    [confirmed] = [f for f in result.findings if f.pattern == "nv.register-spill"]
    assert confirmed.rung == 3 and confirmed.confidence > source_only.confidence
    assert {e["type"] for e in confirmed.evidence} == {"source", "fact"}
    assert any(e.get("excerpt") == "STL.64 [R1+0x10], R4" for e in confirmed.evidence)
    assert result.vetoed == []


def test_a_kernel_wide_veto_needs_every_compiled_specialization_to_agree():
    clean = fact("resources", kernel="k[BLOCK=64]", **NO_SPILL)
    spilling = fact("resources", kernel="k[BLOCK=128]", **dict(NO_SPILL, spill_stores_bytes=64))
    assert vetoes(predicted("nv.register-spill"), clean)
    assert not vetoes(predicted("nv.register-spill"), clean, spilling)


def test_a_rung_three_finding_is_never_vetoed():
    compiled = Finding("nv.register-spill", 3, "t", line=10, kernel="k", evidence=[])
    ctx = TriageContext(source=parse_module("import triton\n"), facts=[fact("resources", **NO_SPILL)])
    assert veto_by_ir(ctx, [compiled], {"nv.register-spill": "no_spills"}) == ([compiled], [])


# Per pattern: a rung-1 finding, facts that contradict it, facts that agree with (or do not speak to) it.
SHARED = {"limits": {"registers": 2, "shared_memory": 1, "warps": 16, "blocks": 32}}
RULES = [
    ("nv.scalar-access", predicted("nv.scalar-access"),
     [fact("global_access", op="load", vector_bits=128, via="ld.global")],
     [fact("global_access", op="load", vector_bits=32, via="ld.global")]),
    ("nv.strided-inner-axis", predicted("nv.strided-inner-axis"),
     [fact("global_access", op="load", vector_bits=64, via="ld.global")],
     [fact("global_access", op="load", vector_bits=16, via="ld.global")]),
    ("nv.register-spill", predicted("nv.register-spill"), [fact("resources", **NO_SPILL)],
     [fact("resources", **NO_SPILL), fact("spill", spill_stores_bytes=96, spill_loads_bytes=96)]),
    ("nv.oversized-block", predicted("nv.oversized-block"),
     [fact("resources", **NO_SPILL), fact("occupancy", programs_per_sm=2, warps_per_sm=16)],
     [fact("resources", **NO_SPILL), fact("occupancy", programs_per_sm=1, warps_per_sm=8)]),
    ("nv.tiny-block", predicted("nv.tiny-block"),
     [fact("resources", **NO_SPILL), fact("global_access", dtype="f32", tensor_shape=[512], vector_bits=128)],
     [fact("resources", **NO_SPILL), fact("global_access", dtype="f32", tensor_shape=[128], vector_bits=32)]),
    ("nv.no-tensor-core", predicted("nv.no-tensor-core"), [fact("dot_lowering", kind="wgmma")],
     [fact("dot_lowering", kind="fma")]),
    ("nv.mma-v2-on-hopper", predicted("nv.mma-v2-on-hopper"), [fact("dot_lowering", kind="wgmma")],
     [fact("dot_lowering", kind="mma_sync")]),
    ("nv.unpipelined-loop", predicted("nv.unpipelined-loop"),
     [fact("pipelining", feeds_dot=True, pipelined=True, async_copies=2, sync_loads=0)],
     [fact("pipelining", feeds_dot=True, pipelined=True, async_copies=1, sync_loads=1)]),
    ("nv.smem-limits-occupancy", predicted("nv.smem-limits-occupancy"),
     [fact("occupancy", programs_per_sm=2, warps_per_sm=16, limits={"registers": 2, "shared_memory": 3})],
     [fact("occupancy", programs_per_sm=1, warps_per_sm=8, **SHARED)]),
    ("nv.hot-layout-conversion", predicted("nv.hot-layout-conversion", in_loop=True),
     [fact("convert_layout", line=20, in_loop=False, through_shared=True)],
     [fact("convert_layout", line=20, in_loop=True, through_shared=True)]),
    ("nv.loop-carried-reduction", predicted("nv.loop-carried-reduction"),
     [fact("reduction_in_loop", cross_warp=False)], [fact("reduction_in_loop", cross_warp=True)]),
    ("nv.small-grid", predicted("nv.small-grid"), [fact("launch", programs=264, sm_count=132)],
     [fact("launch", programs=264, sm_count=132), fact("launch", programs=16, sm_count=132)]),
    ("nv.index-div-mod", predicted("nv.index-div-mod"),
     [fact("resources", **NO_SPILL), fact("divrem_in_loop", per_element=True, power_of_two=True)],
     [fact("divrem_in_loop", per_element=True, power_of_two=False)]),
    ("nv.int64-index", predicted("nv.int64-index", title="64-bit index math where 32 bits suffice"),
     [fact("resources", **NO_SPILL)], [fact("int64_index", per_element=True, count=3)]),
]


@pytest.mark.parametrize("pattern,finding,contradicting,agreeing", RULES, ids=[r[0] for r in RULES])
def test_each_rule_vetoes_on_contradicting_facts_only(pattern, finding, contradicting, agreeing):
    [vetoed] = vetoes(finding, *contradicting)
    assert vetoed["pattern"] == pattern and vetoed["veto"]["reason"]
    assert vetoes(Finding.from_dict(finding.to_dict()), *agreeing) == []


def test_the_32_bit_overflow_finding_is_not_vetoed_by_the_absence_of_64_bit_math():
    assert vetoes(predicted("nv.int64-index", title="32-bit offsets overflow"), fact("resources", **NO_SPILL)) == []


def test_every_nvidia_pattern_says_what_vetoes_it_and_every_rule_is_used():
    catalog = load_catalog()
    nvidia = {id_: entry for id_, entry in catalog.items() if entry.backend == "nvidia"}
    assert all(entry.veto for entry in nvidia.values())
    named = {entry.veto["rule"] for entry in nvidia.values()}
    assert named - {NO_VETO} == set(VETOES)
    tested = {r[0] for r in RULES}
    assert {id_ for id_, entry in nvidia.items() if entry.veto["rule"] != NO_VETO} <= tested
