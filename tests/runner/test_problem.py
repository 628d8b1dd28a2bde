"""The problem/solution loader: KernelBench files unchanged, get_cases, optional flops/bytes."""
from pathlib import Path

import pytest
import torch

from ladder.runner.problem import (
    QUICK_MAX_ELEMENTS,
    ProblemError,
    case_label,
    input_elements,
    load_problem,
    load_solution,
)

FIXTURES = Path(__file__).parent / "fixtures"


def test_kernelbench_file_loads_unchanged_as_one_default_case():
    problem = load_problem(FIXTURES / "kernelbench_relu.py")
    assert problem.cases == [{}]
    with problem.applied({}):
        model = problem.Model(*problem.get_init_inputs())
        (x,) = problem.get_inputs()
    assert x.shape == (4, 300)
    assert torch.equal(model(x), torch.relu(x))


def test_get_cases_sets_module_constants_for_get_inputs():
    problem = load_problem(FIXTURES / "add" / "problem.py")
    sizes = []
    for case in problem.cases:
        with problem.applied(case):
            sizes.append(problem.get_inputs()[0].numel())
    assert sizes == [1000, 4097, 256]


def test_applied_restores_the_file_constants_afterwards():
    problem = load_problem(FIXTURES / "add" / "problem.py")
    with problem.applied({"N": 7}):
        assert problem.module.N == 7
    assert problem.module.N == 1000


def test_flops_and_bytes_see_the_case_constants():
    problem = load_problem(FIXTURES / "add" / "problem.py")
    assert problem.bytes({"N": 4097}) == 3 * 4 * 4097
    assert problem.flops({"N": 10}) == 20


def test_flops_is_none_when_the_file_does_not_say():
    problem = load_problem(FIXTURES / "kernelbench_relu.py")
    assert problem.flops({}) is None and problem.bytes({}) is None


def test_two_solutions_with_the_same_file_name_do_not_collide(tmp_path):
    for folder, value in (("a", 1), ("b", 2)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "solution.py").write_text(
            f"class ModelNew:\n    VALUE = {value}\n")
    assert load_solution(tmp_path / "a" / "solution.py").VALUE == 1
    assert load_solution(tmp_path / "b" / "solution.py").VALUE == 2


def test_missing_get_inputs_is_a_one_line_error(tmp_path):
    path = tmp_path / "problem.py"
    path.write_text("class Model: pass\ndef get_init_inputs(): return []\n")
    with pytest.raises(ProblemError, match="missing `get_inputs`"):
        load_problem(path)


def test_case_naming_an_unknown_constant_is_rejected(tmp_path):
    path = tmp_path / "problem.py"
    path.write_text("N = 1\nclass Model: pass\ndef get_inputs(): return []\n"
                    "def get_init_inputs(): return []\ndef get_cases(): return [{'NN': 2}]\n")
    with pytest.raises(ProblemError, match="case 0 sets 'NN'"):
        load_problem(path)


def test_syntax_error_names_file_and_line(tmp_path):
    path = tmp_path / "solution.py"
    path.write_text("x = 1\ndef broken(:\n")
    with pytest.raises(ProblemError, match=r"solution.py:2: SyntaxError"):
        load_solution(path)


def test_solution_without_model_new_is_rejected(tmp_path):
    path = tmp_path / "solution.py"
    path.write_text("class Model: pass\n")
    with pytest.raises(ProblemError, match="missing `class ModelNew"):
        load_solution(path)


def test_case_label_reads_like_the_constants():
    assert case_label({"M": 4096, "N": 1000}) == "M=4096, N=1000"
    assert case_label({}) == "default"


def test_input_elements_are_counted_on_the_meta_device_without_allocating():
    problem = load_problem(FIXTURES / "add" / "problem.py")
    assert [input_elements(problem, case) for case in problem.cases] == [2000, 8194, 512]
    huge = {"N": 1 << 40}  # 8 TiB of inputs if they were allocated
    assert input_elements(problem, huge) == 2 << 40


def test_input_elements_are_unknown_when_get_inputs_needs_real_data(tmp_path):
    path = tmp_path / "problem.py"
    path.write_text((FIXTURES / "add" / "problem.py").read_text().replace(
        "return [torch.randn(N), torch.randn(N)]", "return [torch.randn(int(torch.randn(1).abs().item()) + N)]"))
    problem = load_problem(path)
    assert input_elements(problem, problem.cases[0]) is None


ONE_CASE = """import torch
import torch.nn as nn
batch = 4096
dim = 4097
seed = 12345
class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)
def get_inputs():
    return [torch.randn(batch, dim)]
def get_init_inputs():
    return []
"""


def test_a_quick_run_of_a_problem_with_only_its_real_sizes_shrinks_them_for_the_interpreter(tmp_path):
    path = tmp_path / "problem.py"
    path.write_text(ONE_CASE)
    problem = load_problem(path, quick=True)
    (case,) = problem.cases
    assert input_elements(problem, case) <= QUICK_MAX_ELEMENTS
    assert case["dim"] % 2 == 1  # halved rounding up: the odd size, and its tail, stay odd
    assert "seed" not in case  # halving it shrinks no input: left as written
    assert problem.shrunk_from == {key: {"batch": 4096, "dim": 4097}[key] for key in case}
    with problem.applied(case):
        assert problem.get_inputs()[0].shape == (case["batch"], case["dim"])
    assert (problem.module.batch, problem.module.dim) == (4096, 4097)  # restored after the block
    assert load_problem(path).cases == [{}] and not load_problem(path).shrunk_from  # full runs: as written


def test_a_quick_run_keeps_cases_already_small_and_the_files_own_test_cases():
    problem = load_problem(FIXTURES / "add" / "problem.py", quick=True)
    assert not problem.shrunk_from


def test_shrinking_is_the_same_in_every_process_when_sizes_tie(tmp_path):
    """The judge and each contestant load the problem in processes of their own (string hashing,
    hence set order, differs between them): equal sizes must be halved in the same order."""
    import json
    import os
    import subprocess
    import sys

    path = tmp_path / "problem.py"
    path.write_text(ONE_CASE.replace("dim = 4097", "dim = 4096").replace("batch = 4096", "batch = 4096\nrows = 4096")
                    .replace("torch.randn(batch, dim)", "torch.randn(batch, dim), torch.randn(rows)"))
    root = Path(__file__).resolve().parents[2]
    program = (f"import json, sys; sys.path.insert(0, {str(root)!r}); from ladder.runner.problem import load_problem; "
               f"print(json.dumps(load_problem({str(path)!r}, quick=True).cases))")
    seen = {subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(6)}
    assert len(seen) == 1, seen
    assert json.loads(seen.pop())[0]


def test_a_solution_runs_from_its_source_not_a_bytecode_cache_beside_it(tmp_path):
    """A cache whose header names the source's size and time would otherwise run in its place."""
    import importlib.util
    import os
    import py_compile

    solution = tmp_path / "solution.py"
    solution.write_text("class ModelNew:\n    VALUE = 'source'\n")
    stat = solution.stat()
    forged = tmp_path / "forged.py"
    forged.write_text("class ModelNew:\n    VALUE = 'cache'\n")  # same length as the source
    py_compile.compile(str(forged), cfile=importlib.util.cache_from_source(str(solution)))
    os.utime(solution, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    forged.unlink()
    assert load_solution(solution).VALUE == "source"


def test_a_helper_beside_the_solution_that_is_bytecode_or_an_extension_is_refused(tmp_path):
    import importlib.machinery
    import py_compile

    (tmp_path / "solution.py").write_text("import helper_bc\nimport helper_ext\nclass ModelNew:\n    pass\n")
    (tmp_path / "source.py").write_text("VALUE = 1\n")
    py_compile.compile(str(tmp_path / "source.py"), cfile=str(tmp_path / "helper_bc.pyc"))
    with pytest.raises(ProblemError, match="helper_bc.pyc beside the solution is not Python source"):
        load_solution(tmp_path / "solution.py")
    (tmp_path / "helper_bc.py").write_text("VALUE = 1\n")  # with a source, the source runs
    (tmp_path / "helper_ext.py").write_text("VALUE = 2\n")
    (tmp_path / f"helper_ext{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"not a shared object")
    with pytest.raises(ProblemError, match="helper_ext.* beside the solution is not Python source"):
        load_solution(tmp_path / "solution.py")
