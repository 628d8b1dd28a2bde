"""The suite's files: the issue's 37 operators, each a valid KernelBench problem with five cases,
small interpreter cases, a roofline model, and a solution that keeps the problem's interface."""
from __future__ import annotations

import inspect
import math

import pytest
import torch

from ladder.diagnoser.suite.operators import discover
from ladder.runner.problem import load_problem, load_solution
from ladder.runner.static_check import ERROR, check_solution

OPERATORS = discover()
LEVEL1 = {1, 2, 3, 4, 7, 9, 17, 19, 23, 24, 26, 36, 40, 42, 47, 51, 89, 95, 97}
LEVEL2 = {9, 12, 14, 18, 22, 29, 30, 33, 37, 40, 45, 53, 56, 59, 63, 76, 86, 99}
by_key = pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.key)


def sizes(case: dict) -> list[int]:
    """The integer sizes of a case (tuple-valued constants such as input_shape included)."""
    values = []
    for value in case.values():
        values += list(value) if isinstance(value, tuple) else [value]
    return [value for value in values if isinstance(value, int) and not isinstance(value, bool)]


def test_the_suite_is_the_issue_operator_list():
    assert {op.number for op in OPERATORS if op.level == 1} == LEVEL1
    assert {op.number for op in OPERATORS if op.level == 2} == LEVEL2
    assert len(OPERATORS) == 37


@by_key
def test_problem_has_five_cases(op):
    assert len(load_problem(op.problem).cases) == 5


@by_key
def test_cases_mix_tail_and_power_of_two_sizes(op):
    values = [value for case in load_problem(op.problem).cases for value in sizes(case)]
    assert any(value > 16 and value % 16 for value in values), "no size leaves a tail"
    assert any(value >= 64 and value & (value - 1) == 0 for value in values), "no power-of-two size"


@by_key
def test_every_case_fits_32_bit_indexing(op):
    """Kernels index with int32 offsets: no input of a real case may reach 2**31 elements."""
    problem = load_problem(op.problem)
    for case in problem.cases:
        with problem.applied(case), torch.device("meta"):
            inputs = problem.get_inputs()
        for tensor in inputs:
            assert tensor.numel() < 2**31, f"{case}: input of shape {tuple(tensor.shape)}"


@by_key
def test_test_cases_are_small_versions_of_the_cases(op):
    problem = load_problem(op.problem)
    test_cases = problem.module.get_test_cases()
    assert len(test_cases) >= 2
    for case in test_cases:
        assert set(case) <= set(problem.cases[0]), f"{case} sets constants the cases do not vary"
        with problem.applied(case), torch.device("meta"):
            elements = sum(tensor.numel() for tensor in problem.get_inputs())
        assert elements <= 2**18, f"{case}: {elements} input elements is slow under the interpreter"


@by_key
def test_flops_and_bytes_are_positive_for_every_case(op):
    problem = load_problem(op.problem)
    for case in problem.cases:
        assert problem.flops(case) > 0 and problem.bytes(case) > 0


@by_key
def test_reference_is_long_enough_to_time(op):
    """Each case's roofline floor is well above launch overhead (tens of microseconds on an H200)."""
    problem = load_problem(op.problem)
    for case in problem.cases:
        floor_s = max(problem.flops(case) / 790e12, problem.bytes(case) / 4.3e12)
        assert floor_s > 20e-6, f"{case}: roofline floor {floor_s * 1e6:.1f} us"


@by_key
def test_solution_constructor_matches_the_model(op):
    model = load_problem(op.problem).Model
    model_new = load_solution(op.solution)
    assert list(inspect.signature(model_new.__init__).parameters) == list(
        inspect.signature(model.__init__).parameters)


@by_key
def test_solution_passes_the_static_checks(op):
    errors = [str(violation) for violation in check_solution(op.solution) if violation.severity == ERROR]
    assert not errors


def test_matmul_problems_use_half_precision():
    """Tensor-core operators are benched in fp16/bf16, not fp32 (where tl.dot would mean tf32)."""
    half = (torch.float16, torch.bfloat16)
    for op in OPERATORS:
        problem = load_problem(op.problem)
        if "matmul" not in op.name and "gemm" not in op.name and op.name != "sdpa":
            continue
        with problem.applied(problem.cases[0]), torch.device("meta"):
            inputs = problem.get_inputs()
        assert all(tensor.dtype in half for tensor in inputs if tensor.is_floating_point()), op.key


def test_roofline_floor_is_never_above_a_second():
    """Sanity of the sizes: the slowest case's floor stays far below the suite's time budget."""
    worst = max(max(load_problem(op.problem).flops(case) / 790e12, load_problem(op.problem).bytes(case) / 4.3e12)
                for op in OPERATORS for case in load_problem(op.problem).cases)
    assert worst < 5e-3 and math.isfinite(worst)
