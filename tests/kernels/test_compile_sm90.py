"""Every initial solution compiles for the H200 (sm_90) on every real case, without a GPU: the
runner's aot backend specializes each launch as the JIT would and runs the whole compiler, ptxas
included, so a kernel that would fail to build or to fit on the device fails here first."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from diagnoser.suite import compile_kernels, discover, precompile, quick_problems

OPERATORS = discover()
H200 = yaml.safe_load((Path(__file__).parents[2] / "kb" / "hardware" / "h200.yaml").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.key)
def test_initial_solution_compiles_for_sm90_on_every_case(op):
    kernels = compile_kernels(op.solution, op.problem, "sm90")
    assert kernels
    assert [kernel.label for kernel in kernels if kernel.error] == []
    launched_cases = {launch["case"] for kernel in kernels for launch in kernel.launches}
    assert launched_cases == set(range(5))
    # Triton checks shared memory only when it loads the kernel on the device: check it here.
    too_big = {kernel.label: kernel.metadata["shared"] for kernel in kernels
               if kernel.metadata["shared"] > H200["shared_memory_per_block"]}
    assert too_big == {}


def test_precompile_compiles_in_parallel_and_reports_a_broken_pair():
    ops = discover(only=("relu", "cumsum"))
    with quick_problems(ops) as small:
        pairs = [(op.solution, small[op.key]) for op in ops]
        result = precompile(pairs + [(ops[0].folder / "missing.py", small[ops[0].key])], "sm90", jobs=2)
    assert result["jobs"] == 2
    entries = result["solutions"]
    assert [entries[str(op.solution)]["errors"] for op in ops] == [[], []]
    assert all(entries[str(op.solution)]["kernels"] >= 1 for op in ops)
    assert "not found" in entries[str(ops[0].folder / "missing.py")]["errors"][0]
