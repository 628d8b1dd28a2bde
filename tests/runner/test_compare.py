"""The correctness verdict: structure, poison, NaN/Inf, exact integers, dtype-aware tolerances."""
import math

import pytest
import torch

from ladder.runner.compare import TF32_RTOL, compare, normalized_error
from ladder.runner.guards import poison


def verdict_for(candidate, reference, *, native=None, allow_tf32=False):
    native = reference if native is None else native
    exact = reference.double() if reference.is_floating_point() else reference
    return compare(candidate, exact, native, allow_tf32=allow_tf32,
                   expected_is_float64=reference.is_floating_point())


def test_identical_output_passes():
    x = torch.randn(100)
    assert verdict_for(x.clone(), x).ok


def test_returning_zeros_never_passes():
    x = torch.randn(100)
    verdict = verdict_for(torch.zeros(100), x)
    assert not verdict.ok and verdict.max_rel_err > 0.3


def test_nan_fails_even_where_everything_else_matches():
    x = torch.randn(100)
    candidate = x.clone()
    candidate[7] = float("nan")
    verdict = verdict_for(candidate, x)
    assert not verdict.ok and "1 NaN" in verdict.reason


def test_inf_fails():
    x = torch.randn(10)
    candidate = x.clone()
    candidate[0] = float("inf")
    assert "1 Inf" in verdict_for(candidate, x).reason


def test_poisoned_elements_are_reported_as_never_written():
    x = torch.randn(64)
    candidate = x.clone()
    poison(candidate)
    candidate[:40] = x[:40]
    assert "24 of 64 elements never written" in verdict_for(candidate, x).reason


def test_shape_must_match_exactly_even_when_values_would_broadcast():
    x = torch.randn(8)
    assert "shape (8, 1)" in verdict_for(x.clone().view(8, 1), x).reason


def test_dtype_must_match_exactly():
    x = torch.randn(8)
    verdict = verdict_for(x.to(torch.float64), x)
    assert not verdict.ok and "dtype float64" in verdict.reason


def test_number_of_outputs_must_match():
    x = torch.randn(4)
    verdict = compare((x, x), x.double(), x, allow_tf32=False, expected_is_float64=True)
    assert "returns 2 output(s), the reference returns 1" in verdict.reason


def test_integer_outputs_need_an_exact_match():
    x = torch.arange(10)
    candidate = x.clone()
    candidate[3] += 1
    verdict = verdict_for(candidate, x)
    assert not verdict.ok and "1 of 10 elements differ" in verdict.reason


def test_fp32_error_of_a_tf32_matmul_passes_only_when_tf32_is_allowed():
    a, b = torch.randn(64, 256), torch.randn(256, 64)
    truncate = lambda t: (t.view(torch.int32) & ~0x1FFF).view(torch.float32)  # tf32 inputs
    candidate = truncate(a) @ truncate(b)
    reference = a @ b
    exact = a.double() @ b.double()
    strict = compare(candidate, exact, reference, allow_tf32=False, expected_is_float64=True)
    relaxed = compare(candidate, exact, reference, allow_tf32=True, expected_is_float64=True)
    assert not strict.ok and relaxed.ok and relaxed.rtol == TF32_RTOL


def test_fp16_output_within_a_few_roundings_passes():
    x = torch.randn(1000, dtype=torch.float64)
    reference = x.half()
    candidate = (x * (1 + 1e-3)).half()
    assert compare(candidate, x, reference, allow_tf32=False, expected_is_float64=True).ok


def test_bf16_tolerance_is_looser_than_fp16():
    x = torch.randn(1000, dtype=torch.float64)
    off_by_one_percent = x * 1.01
    assert compare(off_by_one_percent.bfloat16(), x, x.bfloat16(), allow_tf32=False, expected_is_float64=True).ok
    assert not compare(off_by_one_percent.half(), x, x.half(), allow_tf32=False, expected_is_float64=True).ok


def test_tolerance_grows_with_the_reference_own_error():
    x = torch.randn(1000, dtype=torch.float64)
    near = (x * (1 + 5e-4)).float()
    assert not compare(near, x, x.float(), allow_tf32=False, expected_is_float64=True).ok
    noisy_native = (x * (1 + 2e-4)).float()  # the problem's own fp32 run is this far off
    assert compare(near, x, noisy_native, allow_tf32=False, expected_is_float64=True).ok


def test_tolerance_growth_is_capped_at_ten_times_the_dtype_tolerance():
    x = torch.randn(1000, dtype=torch.float64)
    very_noisy_native = (x * 1.1).float()
    verdict = compare((x * (1 + 5e-3)).float(), x, very_noisy_native, allow_tf32=False,
                      expected_is_float64=True)
    assert not verdict.ok and verdict.rtol == pytest.approx(1e-3)


def test_error_is_normalised_by_the_output_scale_so_near_zero_elements_do_not_dominate():
    reference = torch.tensor([1000.0, -1000.0, 1e-6], dtype=torch.float64)
    candidate = torch.tensor([1000.0, -1000.0, 1e-2], dtype=torch.float32)
    _, relative = normalized_error(candidate, reference)
    assert relative < 1e-4


def test_the_error_computed_slice_by_slice_is_the_whole_tensor_s_and_misses_no_slice(monkeypatch):
    from ladder.runner import compare as module

    reference = torch.randn(1001, 3, dtype=torch.float64)
    candidate = (reference * (1 + 1e-5)).float()
    candidate[-1, -1] += 0.5  # in the last, partial slice
    whole = module.normalized_error(candidate, reference)
    monkeypatch.setattr(module, "ERROR_SLICE", 64)
    sliced = module.normalized_error(candidate, reference)
    assert sliced == pytest.approx(whole, rel=1e-12) and sliced[0] == pytest.approx(0.5, rel=1e-3)
    candidate[0, 0] = float("nan")
    assert all(math.isnan(e) for e in module.normalized_error(candidate, reference))


def test_reference_nan_fails_the_case_instead_of_comparing():
    reference = torch.tensor([1.0, float("nan")])
    verdict = compare(torch.tensor([1.0, 2.0]), reference.double(), reference, allow_tf32=False,
                      expected_is_float64=True)
    assert "reference itself produces NaN/Inf" in verdict.reason


@pytest.mark.parametrize("candidate, ok", [(3, True), (4, False), (2.0000001, True)])
def test_scalar_outputs_compare_by_value(candidate, ok):
    reference = 3 if isinstance(candidate, int) else 2.0
    assert compare(candidate, reference, reference, allow_tf32=False, expected_is_float64=False).ok is ok
