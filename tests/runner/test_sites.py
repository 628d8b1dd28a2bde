"""Launch sites on the CPU (Triton's interpreter): launches grouped by the line that makes them, their
arguments kept and replayed, the autotuner's benchmarking counted apart, replays timed."""
from pathlib import Path

import pytest
import torch

from ladder.runner.backends.interpret import InterpretBackend
from ladder.runner.capture.replay import time_replay
from ladder.runner.capture.sites import SiteRecorder, gemm_flops, spanned_bytes
from ladder.runner.problem import load_module

from .host_clock import HostClockBackend

LAUNCHES = Path(__file__).parent / "fixtures" / "sites" / "launches.py"


@pytest.fixture(scope="module")
def kernels():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRITON_INTERPRET", "1")
        from triton.runtime.autotuner import Autotuner

        def each_config_once(kernel_call, quantiles=None, **kwargs):
            kernel_call()
            return [1.0] * len(quantiles) if quantiles else 1.0

        patch.setattr(Autotuner, "do_bench", property(lambda self: each_config_once))
        yield load_module(LAUNCHES, "sites_test")


def line_of(marker: str) -> int:
    return next(number for number, text in enumerate(LAUNCHES.read_text().splitlines(), 1) if marker in text)


def test_launches_are_grouped_by_the_line_that_makes_them(kernels):
    x = torch.randn(1000)
    with SiteRecorder() as recorder:
        for _ in range(3):
            kernels.scale(x, 2.0)
        kernels.scale_elsewhere(x, 2.0)
    first, second = recorder.ordered()
    assert (first.kernel, first.file, first.line) == ("scale_kernel", str(LAUNCHES), line_of("# the scale site"))
    assert first.launches == 3 and len(first.variants) == 1 and first.variants[0].launches == 3
    assert second.line == line_of("# a second site") and second.launches == 1
    assert first.kernel_line == line_of("def scale_kernel") and not first.dot


def test_each_distinct_shape_is_a_variant_and_those_past_the_limit_are_counted(kernels):
    with SiteRecorder(max_variants=2) as recorder:
        for n in (100, 200, 300, 100):
            kernels.scale(torch.randn(n), 2.0)
    (site,) = recorder.ordered()
    assert [v.launches for v in site.variants] == [2, 1] and site.other_launches == 1
    variant = site.variants[0]
    assert variant.grid == [1, 1, 1] and variant.bytes == 2 * 100 * 4
    assert {"name": "n", "value": 100} in variant.arguments and {"name": "BLOCK", "value": 128} in variant.arguments


def test_the_autotuners_benchmarking_is_counted_apart_and_never_kept(kernels):
    x = torch.randn(1000)
    with SiteRecorder() as recorder:
        kernels.tuned_scale(x, 3.0)
        kernels.tuned_scale(x, 3.0)
    (site,) = recorder.ordered()
    assert site.launches == 2 and site.tuning_launches == 3 and recorder.tuning_launches == 3
    assert site.variants[0].grid is not None  # the grid callable was resolved with the chosen BLOCK


def test_a_kept_launch_replays_on_its_own_arguments(kernels):
    x = torch.randn(1000)
    with SiteRecorder() as recorder:
        out = kernels.scale(x, 2.0)
    out.zero_()
    recorder.ordered()[0].variants[0].replay()
    assert torch.allclose(out, 2 * x)


def test_a_dot_kernel_gets_the_flops_of_the_gemm_its_operands_form(kernels):
    a, b = torch.randn(32, 64), torch.randn(64, 48)
    with SiteRecorder() as recorder:
        c = kernels.matmul(a, b)
    assert torch.allclose(c, a @ b, atol=1e-3)
    (site,) = recorder.ordered()
    variant = site.variants[0]
    assert site.dot and variant.flops == 2 * 32 * 48 * 64 and variant.dtype == "float32"
    assert variant.flops_from == "(32x64) @ (64x48) -> (32x48)"


def test_a_kernel_whose_dot_is_in_a_jit_helper_still_gets_its_gemm_flops(kernels):
    a, b = torch.randn(32, 64), torch.randn(64, 48)
    with SiteRecorder() as recorder:
        c = kernels.helper_matmul(a, b)
    assert torch.allclose(c, a @ b, atol=1e-3)
    (site,) = recorder.ordered()
    assert site.dot and site.variants[0].flops == 2 * 32 * 48 * 64


@pytest.mark.parametrize("shapes, flops", [
    ([(128, 64), (64, 32), (128, 32)], 2 * 128 * 32 * 64),
    ([(128, 64), (32, 64), (128, 32)], 2 * 128 * 32 * 64),  # a weight stored (n, k), as nn.Linear keeps it
    ([(4, 16, 8), (4, 8, 2), (4, 16, 2)], 2 * 4 * 16 * 2 * 8),
    ([(4, 16, 8), (2, 8), (4, 16, 2)], 2 * 4 * 16 * 2 * 8),
    ([(64, 64), (64,), (64,)], None),
])
def test_gemm_flops_from_operand_shapes(shapes, flops):
    assert gemm_flops(shapes, [torch.float16] * len(shapes))[0] == flops


@pytest.mark.parametrize("shapes, flops", [
    ([(5000, 3000), (7001, 3000), (5000, 7008)], 2 * 5000 * 7001 * 3000),  # output rows padded to 16 bytes
    ([(130, 80), (65, 80), (130, 72)], 2 * 130 * 65 * 80),  # K zero-padded in both operands, output padded
    ([(100, 40), (90, 40), (100, 160)], None),  # 70 columns past 90 is no alignment padding
    ([(64, 64), (48, 64), (64, 56)], None),  # nor is padding by more than an eighth of the size
])
def test_gemm_flops_matches_dimensions_through_alignment_padding(shapes, flops):
    found, how, _ = gemm_flops(shapes, [torch.float16] * len(shapes))
    assert found == flops
    assert flops is None or how.endswith("within alignment padding")


def test_gemm_flops_prefers_operands_of_one_dtype_over_a_smaller_reading():
    """A fused GEMM + batch-norm statistics kernel: (tiles, n) fp32 partial sums beside the fp16 weight
    form a smaller 'GEMM' that no dot computes; the exact reading over padded ones, too."""
    h, f = torch.float16, torch.float32
    shapes = [(3000, 3000), (3000, 3000), (3000,), (3000, 3000), (47, 3000), (47, 3000)]
    assert gemm_flops(shapes, [h, h, h, h, f, f])[0] == 2 * 3000 ** 3
    assert gemm_flops([(64, 32), (32, 48), (64, 48), (64, 52)], [h] * 4)[1] == "(64x32) @ (32x48) -> (64x48)"


def test_spanned_bytes_count_each_region_once():
    base = torch.empty(1000)
    assert spanned_bytes([base, base[:500], base[250:750]]) == 4000
    assert spanned_bytes([base[::10]]) == (99 * 10 + 1) * 4  # a strided view spans its extent
    assert spanned_bytes([torch.empty(10), torch.empty(0)]) == 40


def test_replays_are_timed_on_the_host_clock_under_the_interpreter(kernels):
    x = torch.randn(500)
    with SiteRecorder() as recorder:
        kernels.scale(x, 2.0)
    timed = time_replay(recorder.ordered()[0].variants[0].replay, InterpretBackend(), budget_s=0.001, min_reps=3)
    assert timed["clock"] == "host" and not timed["l2_flushed"] and timed["reps"] == 3 and timed["median"] > 0


def test_with_device_events_each_repetition_is_flushed_and_bracketed(kernels):
    x = torch.randn(500)
    with SiteRecorder() as recorder:
        kernels.scale(x, 2.0)
    calls = []
    timed = time_replay(lambda: calls.append(recorder.ordered()[0].variants[0].replay()), HostClockBackend(),
                        budget_s=0.001, min_reps=4, max_reps=4)
    assert timed["clock"] == "events" and timed["l2_flushed"] and timed["reps"] == 4
    assert len(calls) == 2 + 1 + 4  # warm-up replays, the estimate, the timed repetitions
