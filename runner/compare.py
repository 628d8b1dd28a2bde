"""The correctness verdict: does a candidate's output match the reference's, and if not, why.

**Exact structure.** The candidate returns the same number of outputs as the reference, each with
exactly the reference's shape, dtype and device type (the reference run in the problem's own
precision decides those).

**Never-written elements.** Memory the candidate allocates during a checked forward is filled with
the poison pattern (``ladder.runner.guards``); floating outputs still holding it are reported as
"never written" rather than as a numeric mismatch.

**NaN/Inf never pass**, wherever they are. A reference that itself produces NaN/Inf fails the case
too: the inputs make the problem ill-posed, and a comparison there proves nothing.

**Integers and booleans** must match exactly.

**Floating outputs** are compared with a reference computed in float64 where the model allows it
(``ladder.runner.reference`` falls back to the problem's own precision otherwise). The error of each element
is normalised by the reference's magnitude at that element *plus its root-mean-square over the whole
output*::

    err_i = |c_i - r_i| / (|r_i| + rms(r))        pass iff  max_i err_i <= rtol

The rms term acts as an absolute tolerance on the output's own scale: the error of a reduction or a
dot product is proportional to the size of its terms, not of its (possibly cancelling) result, so a
purely elementwise relative test would fail correct kernels wherever the result is near zero, and a
fixed ``atol`` would mean nothing across problems whose outputs are 1e-4 or 1e4. Returning zeros
gives err close to 1 and never passes.

``rtol`` by output dtype, about ten units of rounding of the type (what a correct kernel that
accumulates in fp32 and rounds once at the end stays well inside):

=============  ========  ================================================================
float64        1e-7
float32        1e-4      fp32 arithmetic in another order: errors around 1e-6
float32 + tf32 5e-3      tl.dot's default for fp32 inputs is tf32 (10-bit mantissa, Hopper
                         truncates): a random K=64..8192 matmul measures 1.2e-3..1.4e-3
float16        5e-3      2^-11 = 4.9e-4 per rounding
bfloat16       2e-2      2^-8 = 3.9e-3 per rounding
=============  ========  ================================================================

**tf32.** Triton computes fp32 ``tl.dot`` in tf32 unless told ``input_precision="ieee"``. An fp32
output gets the tf32 tolerance when the problem allows it: ``ALLOW_TF32 = True/False`` in the problem
file decides; unset, it is allowed when the reference contains a contraction (matmul, linear, conv,
bmm, einsum, attention), i.e. exactly where a Triton port would call ``tl.dot``. A problem without a
contraction (softmax, norms, elementwise) keeps fp32's tolerance, so computing it in lower precision
does not pass. When tf32 is allowed, the eager reference is timed with tf32 enabled as well, so a
speedup is not a gift of precision.

**Ill-conditioned problems.** The reference is also run in the problem's own precision; its error
against float64 shows how much rounding the problem itself amplifies (a softmax over large fp16
logits, a long cumsum). The tolerance becomes ``max(rtol, 4 x that error)``, capped at 10 x rtol, so
a candidate may be a few times less exact than PyTorch itself, never arbitrarily wrong.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch

from ladder.runner.guards import unwritten_count
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

RTOL = {
    torch.float64: 1e-7,
    torch.float32: 1e-4,
    torch.float16: 5e-3,
    torch.bfloat16: 2e-2,
}
TF32_RTOL = 5e-3
# Unlisted floating types (fp8 and friends) get the coarsest tolerance listed.
COARSEST_RTOL = max(RTOL.values())
NATIVE_ERROR_FACTOR = 4.0
MAX_RTOL_FACTOR = 10.0


@dataclass
class Verdict:
    """The outcome of comparing one set of outputs; ``reason`` is one line when ``ok`` is false."""

    ok: bool
    reason: str | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    rtol: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def flatten_outputs(value: Any) -> list[Any]:
    """A forward's result as a flat list (a tensor, or nested tuples/lists of tensors and numbers)."""
    if isinstance(value, (tuple, list)):
        return [item for part in value for item in flatten_outputs(part)]
    return [value]


def base_rtol(dtype: torch.dtype, allow_tf32: bool) -> float:
    rtol = RTOL.get(dtype, COARSEST_RTOL)
    if dtype == torch.float32 and allow_tf32:
        rtol = max(rtol, TF32_RTOL)
    return rtol


# Elements per slice of an error computation: float64 temporaries of 128 MiB each, however large
# the output (whole-tensor temporaries of a 4 G-element output held 40 GiB of the device at once,
# which the contestants timing beside the judge then lacked).
ERROR_SLICE = 1 << 24


def normalized_error(value: torch.Tensor, reference: torch.Tensor) -> tuple[float, float]:
    """(max |value - reference|, max |value - reference| / (|reference| + rms(reference))), computed
    in float64 one slice of ``ERROR_SLICE`` elements at a time; NaN anywhere makes both NaN."""
    value, reference = value.detach().reshape(-1), reference.detach().reshape(-1)
    total = value.numel()
    if total == 0:
        return 0.0, 0.0
    slices = [slice(start, start + ERROR_SLICE) for start in range(0, total, ERROR_SLICE)]
    square_sum = sum(reference[part].to(torch.float64).pow(2).sum() for part in slices)
    scale = (square_sum / total).sqrt().clamp_min(torch.finfo(torch.float64).tiny)
    worst_abs = worst_rel = torch.zeros((), dtype=torch.float64, device=value.device)
    for part in slices:
        exact = reference[part].to(torch.float64)
        difference = (value[part].to(torch.float64) - exact).abs_()
        worst_abs = torch.maximum(worst_abs, difference.max())
        worst_rel = torch.maximum(worst_rel, (difference / (exact.abs() + scale)).max())
    return float(worst_abs), float(worst_rel)


def compare(candidate: Any, expected: Any, native: Any, *, allow_tf32: bool,
            expected_is_float64: bool) -> Verdict:
    """Compare a forward's outputs with the reference's.

    Args:
        candidate: what the candidate's forward returned.
        expected: the reference's outputs in float64 (``expected_is_float64``) or, when the model
            could not run in float64, in its own precision.
        native: the reference's outputs in the problem's own precision (shape/dtype come from here).
        allow_tf32: whether fp32 outputs get the tf32 tolerance.
    """
    outputs, expected, native = (flatten_outputs(x) for x in (candidate, expected, native))
    if len(outputs) != len(native):
        return Verdict(False, f"returns {len(outputs)} output(s), the reference returns {len(native)}")
    worst = Verdict(True, max_abs_err=0.0, max_rel_err=0.0)
    for index, (out, ref, nat) in enumerate(zip(outputs, expected, native)):
        label = f"output {index}" if len(native) > 1 else "output"
        verdict = _compare_one(label, out, ref, nat, allow_tf32, expected_is_float64)
        if not verdict.ok:
            return verdict
        for key in ("max_abs_err", "max_rel_err", "rtol"):
            mine, theirs = getattr(verdict, key), getattr(worst, key)
            if mine is not None and (theirs is None or mine > theirs):
                setattr(worst, key, mine)
    return worst


def _compare_one(label: str, out: Any, ref: Any, nat: Any, allow_tf32: bool,
                 expected_is_float64: bool) -> Verdict:
    if not isinstance(nat, torch.Tensor):
        return _compare_scalar(label, out, ref)
    if not isinstance(out, torch.Tensor):
        return Verdict(False, f"{label} is a {type(out).__name__}, the reference's is a tensor")
    if tuple(out.shape) != tuple(nat.shape):
        return Verdict(False, f"{label} has shape {tuple(out.shape)}, the reference's is {tuple(nat.shape)}")
    if out.dtype != nat.dtype:
        return Verdict(False, f"{label} has dtype {_name(out.dtype)}, the reference's is {_name(nat.dtype)}")
    if out.device.type != nat.device.type:
        return Verdict(False, f"{label} is on {out.device.type}, the reference's is on {nat.device.type}")
    if not (out.dtype.is_floating_point or out.dtype.is_complex):
        return _compare_exact(label, out, nat)
    return _compare_float(label, out, ref, nat, allow_tf32, expected_is_float64)


def _compare_exact(label: str, out: torch.Tensor, nat: torch.Tensor) -> Verdict:
    different = out != nat
    count = int(different.sum())
    if count == 0:
        return Verdict(True, max_abs_err=0.0, max_rel_err=0.0, rtol=0.0)
    if unwritten_count(out[different]) == count:
        return Verdict(False, f"{label}: {count} of {out.numel()} elements never written "
                              "(they still hold the poison pattern)")
    first = tuple(int(i) for i in different.nonzero()[0])
    return Verdict(False, f"{label}: {count} of {out.numel()} elements differ (exact match required; "
                          f"first at {first}: {out[first].item()} vs {nat[first].item()})")


def _compare_float(label: str, out: torch.Tensor, ref: torch.Tensor, nat: torch.Tensor,
                   allow_tf32: bool, expected_is_float64: bool) -> Verdict:
    total = out.numel()
    unwritten = unwritten_count(out)
    if unwritten:
        return Verdict(False, f"{label}: {unwritten} of {total} elements never written "
                              "(they still hold the poison pattern)")
    finite = torch.isfinite(out)
    if not bool(finite.all()):
        nans = int(torch.isnan(out).sum())
        infs = int(torch.isinf(out).sum())
        return Verdict(False, f"{label}: {nans} NaN and {infs} Inf of {total} elements (NaN/Inf never pass)")
    if not bool(torch.isfinite(ref).all()):
        return Verdict(False, f"{label}: the reference itself produces NaN/Inf on these inputs "
                              "(the problem's inputs make it ill-posed)")
    rtol = base_rtol(out.dtype, allow_tf32)
    if expected_is_float64:
        _, native_error = normalized_error(nat, ref)
        rtol = min(max(rtol, NATIVE_ERROR_FACTOR * native_error), MAX_RTOL_FACTOR * rtol)
    else:
        rtol *= 2  # both sides approximate the exact result
    max_abs, max_rel = normalized_error(out, ref)
    if max_rel <= rtol:
        return Verdict(True, max_abs_err=max_abs, max_rel_err=max_rel, rtol=rtol)
    return Verdict(False, f"{label}: max error {max_rel:.3g} (relative to |ref| + rms(ref)) exceeds "
                          f"tolerance {rtol:.3g}; max abs error {max_abs:.3g}",
                   max_abs_err=max_abs, max_rel_err=max_rel, rtol=rtol)


def _compare_scalar(label: str, out: Any, ref: Any) -> Verdict:
    if isinstance(out, torch.Tensor):
        return Verdict(False, f"{label} is a tensor, the reference's is a {type(ref).__name__}")
    if isinstance(ref, float) or isinstance(out, float):
        try:
            out_value, ref_value = float(out), float(ref)
        except (TypeError, ValueError):
            return Verdict(False, f"{label} is {out!r}, the reference's is {ref!r}")
        error = abs(out_value - ref_value) / max(abs(ref_value), 1e-30)
        if error <= RTOL[torch.float32]:
            return Verdict(True, max_abs_err=abs(out_value - ref_value), max_rel_err=error)
        return Verdict(False, f"{label} is {out_value!r}, the reference's is {ref_value!r}")
    if out == ref:
        return Verdict(True)
    return Verdict(False, f"{label} is {out!r}, the reference's is {ref!r}")


def _name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")
