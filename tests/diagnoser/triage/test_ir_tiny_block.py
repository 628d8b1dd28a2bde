"""nv.tiny-block from rung 3: the recorded grid and the compiled blocks, with or without a problem file."""
from __future__ import annotations

import pytest

from ladder.diagnoser.evidence import Fact
from ladder.diagnoser.triage import run_triage
from ladder.diagnoser.triage.context import TriageContext
from ladder.diagnoser.triage.detectors import ir
from ladder.diagnoser.triage.source import parse_module

from .triage_helpers import FIXTURES

SCRIPT = FIXTURES / "tiny_block_script" / "train.py"  # BLOCK=128 over 16M elements, the block a local variable


def fact(fact_kind: str, line: int | None = 10, kernel: str = "k[n:i32%16]", **value) -> Fact:
    return Fact(kernel=kernel, kind=fact_kind, value=value, file="s.py", line=line, stage="ptx", excerpt="...")


def facts(block: int = 128, programs: int = 131072, kernel: str = "k[n:i32%16]", line: int = 11,
          **access) -> list[Fact]:
    load = {"op": "load", "tensor_shape": [block], "dtype": "f32", "via": "ld.global", "in_loop": False, **access}
    return [fact("launch", None, kernel, programs=programs, sm_count=132, grid=[programs, 1, 1], case=None,
                 programs_per_sm=16),
            fact("resources", None, kernel, num_warps=4, registers=16, shared_bytes=0),
            fact("global_access", line, kernel, **load),
            fact("global_access", line + 1, kernel, **{**load, "op": "store"})]


def detect(found: list[Fact]) -> list:
    return ir.detect_ir_tiny_block(TriageContext(source=parse_module("import triton\n"), facts=found))


def test_a_large_grid_of_one_element_per_thread_programs_is_tiny():
    [finding] = detect(facts())
    assert finding.pattern == "nv.tiny-block" and finding.rung == 3 and finding.line == 11
    assert [e["kind"] for e in finding.evidence] == ["global_access", "launch"]
    assert "131072 programs" in finding.evidence[0]["detail"] and "1 element(s) per thread" in finding.evidence[0]["detail"]


@pytest.mark.parametrize("why,found", [
    ("8 elements per thread", facts(block=1024, programs=16384)),
    ("a grid that fits in two waves", facts(programs=200)),
    ("a program that loops", facts(in_loop=True)),
    ("TMA copies", facts(via="tma")),
    ("a dot", facts() + [fact("dot_lowering", kind="wgmma")]),
])
def test_programs_with_enough_work_are_not(why, found):
    assert detect(found) == [], why


def test_a_kernel_the_source_walk_judged_keeps_the_source_verdict(tmp_path):
    """Its cases were traced: the compiled facts confirm the source finding, never add one."""
    from .triage_helpers import write_pair

    pair = FIXTURES / "elementwise"   # BLOCK=128 over 1M-16M elements; the load on line 12
    compiled = facts(kernel="scale_clamp_kernel[n:i32%16]", line=12)
    [confirmed] = [f for f in run_triage(str(pair / "solution.py"), str(pair / "problem.py"), facts=compiled).findings
                   if f.pattern == "nv.tiny-block"]
    assert confirmed.rung == 3 and {e["type"] for e in confirmed.evidence} == {"source", "fact"}
    wide = (pair / "solution.py").read_text().replace("128", "2048")
    solution, problem = write_pair(tmp_path / "wide", wide, str(pair / "problem.py"))
    assert "nv.tiny-block" not in {f.pattern for f in run_triage(solution, problem, facts=compiled).findings}


@pytest.mark.slow
def test_a_script_s_own_launches_show_its_tiny_blocks():
    """No problem file and a block size held in a variable: the source rung cannot size the
    launch, the captured grid and the compiled block can."""
    from ladder.diagnoser.ir import facts_for

    compiled = facts_for(str(SCRIPT))
    assert "nv.tiny-block" not in {f.pattern for f in run_triage(str(SCRIPT)).findings}
    [finding] = [f for f in run_triage(str(SCRIPT), facts=compiled).findings if f.pattern == "nv.tiny-block"]
    assert finding.rung == 3 and finding.line == 11 and finding.kernel == "scale_kernel"
    assert "131072 programs" in finding.evidence[0]["detail"]
    # Run as a script, the source rung sees the same launch and the facts confirm it.
    [traced] = [f for f in run_triage(str(SCRIPT), script=True).findings if f.pattern == "nv.tiny-block"]
    assert traced.rung == 1 and traced.line == 11 and "131072 programs" in traced.evidence[0]["detail"]
    [both] = [f for f in run_triage(str(SCRIPT), facts=compiled, script=True).findings if f.pattern == "nv.tiny-block"]
    assert both.rung == 3 and {e["type"] for e in both.evidence} == {"source", "fact"}
