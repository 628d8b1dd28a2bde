"""Every initial solution compiles for the H200 (sm_90) on every real case, without a GPU: the
runner's aot backend specializes each launch as the JIT would and runs the whole compiler, ptxas
included, so a kernel that would fail to build or to fit on the device fails here first.

The builds go through ``precompile``, the suite's own parallel compile step on the GPU machine."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from ladder.diagnoser.suite.operators import discover, quick_problems
from ladder.runner.precompile import precompile

OPERATORS = discover()
H200 = yaml.safe_load((Path(__file__).parents[2] / "kb" / "hardware" / "h200.yaml").read_text())


@pytest.fixture(scope="module")
def builds() -> dict[str, dict]:
    result = precompile([(op.solution, op.problem) for op in OPERATORS], "sm90", jobs=os.cpu_count() or 1)
    return result["solutions"]


@pytest.mark.slow
@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.key)
def test_initial_solution_compiles_for_sm90_on_every_case(op, builds):
    assert str(op.solution) in builds, "no result: its compile process died"
    build = builds[str(op.solution)]
    assert build["errors"] == []
    assert build["kernels"] >= 1
    assert build["cases"] == [0, 1, 2, 3, 4]
    # Triton checks shared memory only when the device loads a kernel: check it here.
    limit = H200["shared_memory_per_block"]
    assert {label: size for label, size in build["shared_bytes"].items() if size > limit} == {}


def test_precompile_reports_a_broken_pair_and_goes_on():
    ops = discover(only=("relu", "cumsum"))
    with quick_problems(ops) as small:
        pairs = [(op.solution, small[op.key]) for op in ops]
        result = precompile(pairs + [(ops[0].folder / "missing.py", small[ops[0].key])], "sm90", jobs=2)
    assert result["jobs"] == 2
    entries = result["solutions"]
    assert [entries[str(op.solution)]["errors"] for op in ops] == [[], []]
    assert [entries[str(op.solution)]["cases"] for op in ops] == [[0, 1], [0, 1]]
    assert "not found" in entries[str(ops[0].folder / "missing.py")]["errors"][0]
