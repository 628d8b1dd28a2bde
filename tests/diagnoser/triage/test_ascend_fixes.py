"""The mechanical fixes for the Ascend patterns: each removes its pattern from Triton-Ascend's
ttadapter IR (compiled here, no NPU) and from rung 1, and the rewritten kernel still matches the
reference under Triton's interpreter.

`IR` holds, for each fix, an excerpt of the ttadapter before and after (the lines as Triton-Ascend
3.2 prints them, locations left out) and the pattern each must match. Compiling needs the
Triton-Ascend environment (`ladder setup ascend`); those tests are skipped without it.
"""
from __future__ import annotations

import re

import pytest

from ladder.diagnoser.triage import triage
from ladder.diagnoser.triage.fixes import FIXES, NotApplicable, apply_fix
from ladder.runner.ascend_ir import ascend_python

from .triage_helpers import ASCEND, ascend_capture, fixture, interpret, write_pair

FIXED = {
    "grid": "npu.grid-exceeds-cores",
    "int64": "npu.int64-scalar-fallback",
    "where": "npu.where-condition-dtype",
    "ub": "npu.ub-overflow",
    "tail": "npu.unaligned-tail-axis",
    "discrete": "npu.discrete-access",
}

# fixture -> ((ttadapter before, what it must match), (after, what it must match)).
IR = {
    "grid": (("%alloc = memref.alloc() : memref<32xf32>  (131072 programs, no loop)", r"^(?![\s\S]*scf\.for)"),
             ("scf.for %arg12 = %arg9 to %arg5 step %arg6  : i32 {", r"scf\.for %\w+ = %\w+ to %\w+ step %\w+")),
    "int64": (("%4 = arith.addi %2, %3 : tensor<2048xi64>", r"arith\.addi %\w+, %\w+ : tensor<2048xi64>"),
              ("%6 = arith.addi %3, %5 : tensor<2048xi32>", r"arith\.addi %\w+, %\w+ : tensor<2048xi32>")),
    "where": (("%8 = arith.cmpi ne, %6, %3 : tensor<2048xi32>", r"arith\.cmpi ne, %\w+, %\w+ : tensor<2048xi32>"),
              ("%8 = arith.cmpf une, %7, %1 : tensor<2048xf32>", r"arith\.cmpf une, %\w+, %\w+ : tensor<2048xf32>")),
    "ub": (("%alloc = memref.alloc() : memref<65536xf32>", r"memref\.alloc\(\) : memref<65536xf32>"),
           ("%alloc = memref.alloc() : memref<8192xf32>", r"memref\.alloc\(\) : memref<8192xf32>")),
    "tail": (("%alloc = memref.alloc() : memref<256x4xf32>", r"memref\.alloc\(\) : memref<256x4xf32>"),
             ("%alloc = memref.alloc() : memref<1024xf32>", r"memref\.alloc\(\) : memref<1024xf32>")),
    "discrete": (("} {ExtractedLoadOrStore}", r"\} \{ExtractedLoadOrStore\}"),
                 ("%4 = call @triton_gather(%0, %3, %c0_i32) : (tensor<256xf32>, tensor<2048xi32>, i32) -> "
                  "tensor<2048xf32>", r"call @triton_gather\(")),
}
# The fact kind each pattern is read from (rung 3); the grid's is the launch against the cores.
FACT = {"int64": "int64_arith", "where": "int_compare", "ub": "ub_usage", "tail": "unaligned_tail",
        "discrete": "discrete_access"}

needs_ascend = pytest.mark.skipif(ascend_python() is None, reason="needs the Triton-Ascend environment")


def pair(name: str) -> tuple[str, str]:
    return str(ASCEND / name / "solution.py"), str(ASCEND / name / "problem.py")


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Each fixture with its fix applied, as a solution/problem pair."""
    folder = tmp_path_factory.mktemp("ascend-fixed")
    return {name: write_pair(folder / name, apply_fix(pattern, *pair(name)), pair(name)[1])
            for name, pattern in FIXED.items()}


def ttadapter(solution: str, problem: str) -> tuple[str, list]:
    kernels, facts = ascend_capture(solution, problem)
    (kernel,) = kernels
    assert kernel.error is None and "ttadapter" in kernel.stages
    return "\n".join(line.split(" loc(")[0] for line in kernel.stages["ttadapter"].splitlines()), list(facts)


def test_every_pattern_with_a_fix_here_is_marked_mechanical_in_the_catalog():
    from ladder.diagnoser.triage.catalog import load_catalog

    catalog = load_catalog()
    assert set(FIXED.values()) <= set(FIXES)
    assert all(catalog[pattern].mechanical for pattern in FIXED.values())


@pytest.mark.parametrize("name", sorted(FIXED))
def test_the_fix_removes_the_pattern_at_rung_1(name, rewritten):
    pattern = FIXED[name]
    assert pattern in {f.pattern for f in triage(*pair(name), target="ascend")}
    assert pattern not in {f.pattern for f in triage(*rewritten[name], target="ascend")}


@pytest.mark.slow
@needs_ascend
@pytest.mark.parametrize("name", sorted(FIXED))
def test_the_fix_removes_the_pattern_from_the_ttadapter_ir(name, rewritten):
    (before_excerpt, before), (after_excerpt, after) = IR[name]
    text, facts = ttadapter(*pair(name))
    assert re.search(before, text), f"before: expected IR like `{before_excerpt}`"
    fixed_text, fixed_facts = ttadapter(*rewritten[name])
    assert re.search(after, fixed_text), f"after: expected IR like `{after_excerpt}`"
    if name == "grid":
        (launch,) = [f for f in facts if f.kind == "launch"]
        (fixed_launch,) = [f for f in fixed_facts if f.kind == "launch"]
        assert launch.value["programs"] > launch.value["max_grid"]
        assert fixed_launch.value["programs"] == fixed_launch.value["sm_count"] == 40
        return
    shows = [f for f in facts if f.kind == FACT[name] and (name != "ub" or f.value["fits"] is False)]
    assert shows and not [f for f in fixed_facts if f.kind == FACT[name] and (name != "ub" or f.value["fits"] is False)]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIXED))
def test_the_fixed_kernel_matches_the_reference_under_the_interpreter(name, rewritten):
    result = interpret(*rewritten[name])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "MISMATCH" not in result.stdout and "ok" in result.stdout


def test_a_sub_block_loop_is_not_offered_for_a_reduction_over_the_block():
    from .triage_helpers import SETS

    folder = SETS / "blind3" / "npu_softmax_wide_rows"
    with pytest.raises(NotApplicable, match="reduces over the block"):
        apply_fix("npu.ub-overflow", folder / "solution.py", folder / "problem.py")


def test_a_where_on_loaded_integers_against_a_nonzero_value_is_left_alone(tmp_path):
    solution, problem = pair("where")
    text = open(solution).read().replace("tl.where(keep != 0,", "tl.where(keep > 3,")
    edited, _ = write_pair(tmp_path / "where3", text, problem)
    with pytest.raises(NotApplicable, match="below 2\\*\\*24"):
        apply_fix("npu.where-condition-dtype", edited, problem)


def test_the_grid_fix_leaves_nvidia_kernels_to_their_own_rules():
    solution, problem = fixture("elementwise")
    assert "npu.grid-exceeds-cores" not in {f.pattern for f in triage(solution, problem)}
