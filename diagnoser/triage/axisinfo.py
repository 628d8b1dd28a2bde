"""A small mirror of Triton's AxisInfo analysis, evaluated over Python kernel source.

Triton decides the vector width of every global access from three per-dimension facts about the
pointer tensor (lib/Analysis/AxisInfo.cpp): *contiguity* (length of runs of consecutive values),
*divisibility* (largest power of two dividing the first value of each run) and *constancy*
(length of runs of equal values). Coalesce (lib/Dialect/TritonGPU/Transforms/Coalesce.cpp) then
gives each thread min(alignment, 128 bits) elements along the most contiguous axis.

Mirroring the same transfer rules lets rung 1 predict, without compiling, whether a load will be
`ld.global.v4` or scalar, and tells a fix which hint (`tl.multiple_of`, `tl.max_contiguous`) would
restore what the compiler could not prove. Only the rules that kernel index math exercises are
mirrored; everything else falls back to the compiler's own pessimistic state (1, 1, 1).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

# highestPowOf2Divisor(0) in Triton: "divisible by anything".
MAX_DIVISOR = 1 << 62


def pow2_divisor(value: int) -> int:
    """Largest power of two dividing `value` (Triton's highestPowOf2Divisor)."""
    if value == 0:
        return MAX_DIVISOR
    value = abs(value)
    return value & -value


def gcd(*values: int) -> int:
    """Triton's gcd: a zero operand is ignored."""
    result = 0
    for value in values:
        if value == 0:
            continue
        result = value if result == 0 else math.gcd(result, value)
    return result


def _mul_div(a: int, b: int) -> int:
    if a and b and a > MAX_DIVISOR // b:
        return MAX_DIVISOR
    return a * b


@dataclass(frozen=True)
class AxisInfo:
    """Per-dimension contiguity, divisibility and constancy, plus a known constant value."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: Optional[int] = None

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @classmethod
    def pessimistic(cls, rank: int = 1) -> "AxisInfo":
        rank = max(rank, 1)
        return cls((1,) * rank, (1,) * rank, (1,) * rank)

    @classmethod
    def of_constant(cls, value: int, shape: tuple[int, ...] = ()) -> "AxisInfo":
        rank = max(len(shape), 1)
        constancy = tuple(shape) if shape else (1,)
        return cls((1,) * rank, (pow2_divisor(value),) * rank, constancy, value)

    @classmethod
    def scalar(cls, divisibility: int = 1, constant: Optional[int] = None) -> "AxisInfo":
        if constant is not None:
            return cls.of_constant(constant)
        return cls((1,), (divisibility,), (1,))

    @classmethod
    def make_range(cls, start: int, end: int) -> "AxisInfo":
        return cls((end - start,), (pow2_divisor(start),), (1,))


def _dim(info: AxisInfo, attr: str, d: int) -> int:
    values = getattr(info, attr)
    return values[d] if d < len(values) else values[-1]


def join(lhs: AxisInfo, rhs: AxisInfo) -> AxisInfo:
    """The lattice join used at loop back-edges and if/else merges (AxisInfo::join)."""
    rank = max(lhs.rank, rhs.rank)
    contiguity, divisibility, constancy = [], [], []
    for d in range(rank):
        contiguity.append(gcd(_dim(lhs, "contiguity", d), _dim(rhs, "contiguity", d)))
        divisibility.append(_divisibility_from_contiguity(lhs, rhs, d))
        constancy.append(gcd(_dim(lhs, "constancy", d), _dim(rhs, "constancy", d)))
    constant = lhs.constant if lhs.constant is not None and lhs.constant == rhs.constant else None
    return AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy), constant)


def _divisibility_from_contiguity(lhs: AxisInfo, rhs: AxisInfo, d: int) -> int:
    lc, rc = _dim(lhs, "contiguity", d), _dim(rhs, "contiguity", d)
    ld, rd = _dim(lhs, "divisibility", d), _dim(rhs, "divisibility", d)
    if lc == rc or lc == MAX_DIVISOR or rc == MAX_DIVISOR:
        return gcd(ld, rd)
    return gcd(ld, rd, lc, rc)


def binary(op: str, lhs: AxisInfo, rhs: AxisInfo, shape: tuple[int, ...],
           elem_bytes: int = 1) -> AxisInfo:
    """Transfer rule of one binary integer op; `op` is one of add sub mul div rem shl shr and or
    xor max min addptr cmp. `elem_bytes` is the pointee size for addptr."""
    rank = max(len(shape), 1)
    constant = _fold(op, lhs.constant, rhs.constant)
    if constant is not None and op not in ("max", "min", "cmp"):
        constancy = tuple(max(_dim(lhs, "constancy", d), _dim(rhs, "constancy", d)) for d in range(rank))
        return AxisInfo((1,) * rank, (pow2_divisor(constant),) * rank, constancy, constant)
    contiguity, divisibility, constancy = [], [], []
    for d in range(rank):
        size = shape[d] if d < len(shape) else 1
        c, v, k = _binary_dim(op, lhs, rhs, d, size, elem_bytes)
        contiguity.append(c)
        divisibility.append(v)
        constancy.append(k)
    return AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy), constant)


def _fold(op: str, a: Optional[int], b: Optional[int]) -> Optional[int]:
    if a is None or b is None:
        if op == "rem" and b == 1:
            return 0
        return None
    try:
        return {
            "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
            "div": lambda: int(a / b) if b else None, "rem": lambda: int(math.fmod(a, b)) if b else None,
            "shl": lambda: a << b, "shr": lambda: a >> b, "and": lambda: a & b,
            "or": lambda: a | b, "xor": lambda: a ^ b, "max": lambda: max(a, b),
            "min": lambda: min(a, b), "addptr": lambda: a + b * 1,
        }.get(op, lambda: None)()
    except (ValueError, OverflowError):
        return None


def _is_contiguous_dim(info: AxisInfo, d: int, size: int) -> bool:
    return _dim(info, "contiguity", d) == size


def _is_constant_dim(info: AxisInfo, d: int, size: int) -> bool:
    return _dim(info, "constancy", d) == size


def _binary_dim(op: str, lhs: AxisInfo, rhs: AxisInfo, d: int, size: int,
                elem_bytes: int) -> tuple[int, int, int]:
    lc, rc = _dim(lhs, "contiguity", d), _dim(rhs, "contiguity", d)
    ld, rd = _dim(lhs, "divisibility", d), _dim(rhs, "divisibility", d)
    lk, rk = _dim(lhs, "constancy", d), _dim(rhs, "constancy", d)
    if op in ("add", "sub", "addptr"):
        if op == "sub":
            contiguity = gcd(lc, rk)
        else:
            contiguity = max(gcd(lk, rc), gcd(lc, rk))
        if op == "addptr":
            rd = _mul_div(rd, elem_bytes)
        return contiguity, gcd(ld, rd), gcd(lk, rk)
    if op == "mul":
        contiguity = max(lc if rhs.constant == 1 else 1, rc if lhs.constant == 1 else 1)
        l_div = 1 if (lc > 1 and rhs.constant != 1) else ld
        r_div = 1 if (rc > 1 and lhs.constant != 1) else rd
        return contiguity, _mul_div(l_div, r_div), gcd(lk, rk)
    if op == "div":
        contiguity = lc if rhs.constant == 1 else 1
        constancy = gcd(lk, rk)
        if _is_contiguous_dim(lhs, d, size) and _is_constant_dim(rhs, d, size):
            constancy = max(constancy, gcd(lc, ld, rd))
        if lhs.constant == 0 or rhs.constant == 1:
            divisibility = ld
        elif rhs.constant is not None and rhs.constant != 0 and _is_pow2(abs(rhs.constant)) and lc == 1:
            divisibility = max(1, ld // abs(rhs.constant))
        else:
            divisibility = 1
        return contiguity, divisibility, constancy
    if op == "rem":
        contiguity = 1
        if _is_contiguous_dim(lhs, d, size) and _is_constant_dim(rhs, d, size):
            contiguity = gcd(lc, ld, rd)
        divisibility = gcd(ld, rd) if rk > 1 else 1
        constancy = size if rhs.constant == 1 else gcd(lk, rk)
        return contiguity, divisibility, constancy
    if op in ("shl", "shr"):
        shift = rhs.constant
        contiguity = lc if shift == 0 else 1
        l_div = 1 if (lc > 1 and shift) else ld
        if op == "shl":
            divisibility = _mul_div(l_div, 1 << (shift or 0)) if shift is not None else l_div
        else:
            divisibility = max(1, l_div >> shift) if shift is not None else 1
        return contiguity, divisibility, gcd(lk, rk)
    if op in ("max", "min"):
        return gcd(lc, rc), _divisibility_from_contiguity(lhs, rhs, d), gcd(lk, rk)
    if op in ("and", "or", "xor"):
        return 1, 1, gcd(lk, rk)
    if op == "cmp":
        return 1, 1, _cmp_constancy(lhs, rhs, d, size)
    return 1, 1, 1


def _cmp_constancy(lhs: AxisInfo, rhs: AxisInfo, d: int, size: int) -> int:
    """CmpOpAxisInfoVisitor: comparing a contiguous range with a splat keeps runs of equal
    results of length gcd(contiguity, divisibilities) (this is what lets masks stay vectorised)."""
    lk, rk = _dim(lhs, "constancy", d), _dim(rhs, "constancy", d)
    hint = gcd(lk, rk)
    if _is_constant_dim(lhs, d, size) and _is_contiguous_dim(rhs, d, size):
        hint = max(hint, gcd(_dim(rhs, "contiguity", d), _dim(lhs, "divisibility", d),
                             _dim(rhs, "divisibility", d)))
    if _is_contiguous_dim(lhs, d, size) and _is_constant_dim(rhs, d, size):
        hint = max(hint, gcd(_dim(lhs, "contiguity", d), _dim(lhs, "divisibility", d),
                             _dim(rhs, "divisibility", d)))
    return hint


def _is_pow2(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def splat(info: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    """A scalar broadcast to a tensor (SplatOpAxisInfoVisitor)."""
    rank = max(len(shape), 1)
    return AxisInfo((1,) * rank, (info.divisibility[0],) * rank,
                    tuple(shape) if shape else (1,), info.constant)


def expand_dims(info: AxisInfo, axis: int) -> AxisInfo:
    """`x[:, None]` (ExpandDimsOpAxisInfoVisitor)."""
    if info.constant is not None:
        new_div = pow2_divisor(info.constant)
    else:
        new_div = 0
        for d in range(info.rank):
            new_div = gcd(new_div, 1 if info.contiguity[d] > 1 else info.divisibility[d])
        new_div = new_div or 1
    contiguity = list(info.contiguity)
    divisibility = list(info.divisibility)
    constancy = list(info.constancy)
    contiguity.insert(axis, 1)
    divisibility.insert(axis, new_div)
    constancy.insert(axis, 1)
    return AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy), info.constant)


def broadcast(info: AxisInfo, src_shape: tuple[int, ...], dst_shape: tuple[int, ...]) -> AxisInfo:
    """Implicit broadcast of size-1 dims (BroadcastOpAxisInfoVisitor)."""
    contiguity, divisibility, constancy = [], [], []
    for d, size in enumerate(dst_shape):
        src = src_shape[d] if d < len(src_shape) else 1
        contiguity.append(1 if src == 1 else _dim(info, "contiguity", d))
        divisibility.append(_dim(info, "divisibility", d))
        constancy.append(size if src == 1 else _dim(info, "constancy", d))
    return AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy), info.constant)


def select(cond: AxisInfo, lhs: AxisInfo, rhs: AxisInfo, rank: int) -> AxisInfo:
    """`tl.where(cond, lhs, rhs)` (SelectOpAxisInfoVisitor, tensor condition)."""
    if cond.constant is not None:
        return rhs if cond.constant == 0 else lhs
    contiguity, divisibility, constancy = [], [], []
    for d in range(max(rank, 1)):
        ck = _dim(cond, "constancy", d)
        constancy.append(gcd(_dim(lhs, "constancy", d), _dim(rhs, "constancy", d), ck))
        contiguity.append(gcd(_dim(lhs, "contiguity", d), _dim(rhs, "contiguity", d), ck))
        divisibility.append(_divisibility_from_contiguity(lhs, rhs, d))
    constant = lhs.constant if lhs.constant is not None and lhs.constant == rhs.constant else None
    return AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy), constant)


def with_hint(info: AxisInfo, contiguity=None, divisibility=None, constancy=None) -> AxisInfo:
    """`tl.max_contiguous` / `tl.multiple_of` / `tl.max_constancy` override the analysis: an int
    for every dim, or one value per dim."""
    def values(hint, current):
        if hint is None:
            return current
        if isinstance(hint, (list, tuple)):
            return tuple(hint) if len(hint) == len(current) else current
        return (hint,) * len(current)

    return AxisInfo(values(contiguity, info.contiguity), values(divisibility, info.divisibility),
                    values(constancy, info.constancy), info.constant)


def order_from_contiguity(contiguity: tuple[int, ...]) -> list[int]:
    """getOrderFromContiguity: most contiguous dim first, ties broken towards the last dim."""
    dims = list(reversed(range(len(contiguity))))
    return sorted(dims, key=lambda d: -contiguity[d])


def elements_per_thread(ptr: AxisInfo, shape: tuple[int, ...], elem_bits: int) -> int:
    """getNumElementsPerThread (TritonGPU/Transforms/Utility.cpp): the widest vector one thread
    may load given alignment and contiguity, capped at 128 bits."""
    if not shape:
        return 1
    order = order_from_contiguity(ptr.contiguity)
    d = order[0]
    elem_bytes = max(elem_bits // 8, 1)
    max_multiple = max(_dim(ptr, "divisibility", d) // elem_bytes, 1)
    max_contig = min(_dim(ptr, "contiguity", d), shape[d])
    return max(1, min(max_multiple, max_contig, 128 // max(elem_bits, 1)))


def blocked_layout(shape: tuple[int, ...], size_per_thread: list[int], order: list[int],
                   num_warps: int, threads_per_warp: int = 32) -> tuple[list[int], list[int]]:
    """BlockedEncodingAttr::get (TritonGPUAttrDefs.td): threads and warps per dim, filled from
    the contiguous dim outwards. Returns (threads_per_warp, warps_per_cta) per dim."""
    rank = len(shape)
    tpw, wpc = [1] * rank, [1] * rank
    remaining_lanes, remaining_threads, remaining_warps = threads_per_warp, num_warps * threads_per_warp, num_warps
    prev_lanes = prev_warps = 1
    for i in order[:-1]:
        threads_cta = min(max(remaining_threads, 1), max(1, shape[i] // max(size_per_thread[i], 1)))
        tpw[i] = min(max(threads_cta, 1), remaining_lanes)
        wpc[i] = min(max(threads_cta // tpw[i], 1), remaining_warps)
        remaining_warps = max(remaining_warps // wpc[i], 1)
        remaining_lanes = max(remaining_lanes // tpw[i], 1)
        remaining_threads = max(remaining_threads // max(threads_cta, 1), 1)
        prev_lanes *= tpw[i]
        prev_warps *= wpc[i]
    last = order[-1]
    tpw[last] = max(threads_per_warp // prev_lanes, 1)
    wpc[last] = max(num_warps // prev_warps, 1)
    return tpw, wpc


def coalesced_layout(ptr: AxisInfo, shape: tuple[int, ...], elem_bits: int, num_warps: int
                     ) -> tuple[list[int], list[int], list[int], list[int]]:
    """The blocked layout Coalesce gives a load or store of this pointer tensor, as
    (size_per_thread, threads_per_warp, warps_per_cta, order)."""
    order = order_from_contiguity(ptr.contiguity)
    per_thread = min(elements_per_thread(ptr, shape, elem_bits), max(math.prod(shape) // (num_warps * 32), 1))
    size_per_thread = [1] * len(shape)
    size_per_thread[order[0]] = per_thread
    tpw, wpc = blocked_layout(shape, size_per_thread, order, num_warps)
    return size_per_thread, tpw, wpc, order


def warps_holding(layout: tuple[list[int], list[int], list[int], list[int]], shape: tuple[int, ...],
                  dim: int, index: int) -> set[int]:
    """The warps of a blocked layout that hold some element with coordinate `index` along `dim`
    (all coordinates along the other dims); a layout smaller than the shape wraps around, one
    larger replicates."""
    spt, tpw, wpc, order = layout
    per_dim = []
    for d in range(len(shape)):
        extent = spt[d] * tpw[d] * wpc[d]
        copies = max(1, -(-extent // shape[d]))  # a layout wider than the tensor holds copies
        coords = [index] if d == dim else range(shape[d])
        per_dim.append({((c + k * shape[d]) // (spt[d] * tpw[d])) % wpc[d] for c in coords for k in range(copies)})
    warps = {0}
    stride = 1
    for d in order:  # linear warp id: the layout's fastest dim varies fastest
        warps = {w + stride * c for w in warps for c in per_dim[d]}
        stride *= wpc[d]
    return warps


@dataclass(frozen=True)
class AccessWidth:
    """What Coalesce and the load/store lowering will make of one pointer tensor."""

    order: tuple[int, ...]
    per_thread: int          # elements each thread moves per vector instruction
    vector_bits: int
    warps_per_cta: tuple[int, ...]


def access_width(ptr: AxisInfo, shape: tuple[int, ...], elem_bits: int, num_warps: int,
                 mask: Optional[AxisInfo] = None, is_store: bool = False) -> AccessWidth:
    """Coalesce.cpp's choice of sizePerThread, then LoadStoreOpToLLVM's cap by mask alignment."""
    if not shape:
        return AccessWidth((0,), 1, elem_bits, (1,))
    order = order_from_contiguity(ptr.contiguity)
    per_thread = elements_per_thread(ptr, shape, elem_bits)
    num_elems = math.prod(shape)
    per_thread = min(per_thread, max(num_elems // (num_warps * 32), 1))
    size_per_thread = [1] * len(shape)
    size_per_thread[order[0]] = per_thread
    _, wpc = blocked_layout(shape, size_per_thread, order, num_warps)
    vec = per_thread
    if mask is not None:
        vec = min(vec, max(_dim(mask, "constancy", order[0]), 1))
    return AccessWidth(tuple(order), vec, vec * elem_bits, tuple(wpc))
