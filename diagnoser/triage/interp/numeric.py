"""The concrete domain of the walk: numpy integer math on the sampled program's index values,
and what the real addresses of an access allow (vector width, per-axis stride)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np


def np_binary(name: str, a: Any, b: Any) -> Any:
    """`name` on two concrete integer operands the way the kernel computes it (division truncates
    toward zero, the remainder takes the dividend's sign); None when an operand is unknown."""
    if a is None or b is None:
        return None
    try:
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        if name == "add" or name == "addptr":
            r = a + b
        elif name == "sub":
            r = a - b
        elif name == "mul":
            r = a * b
        elif name == "div":
            if np.any(b == 0):
                return None
            r = np.trunc(a / b).astype(np.int64) if np.any((a < 0) ^ (b < 0)) else a // b
        elif name == "rem":
            if np.any(b == 0):
                return None
            r = np.fmod(a, b)
        elif name == "shl":
            r = a << b
        elif name == "shr":
            r = a >> b
        elif name == "and":
            r = a & b
        elif name == "or":
            r = a | b
        elif name == "xor":
            r = a ^ b
        elif name == "max":
            r = np.maximum(a, b)
        elif name == "min":
            r = np.minimum(a, b)
        else:
            return None
    except (ValueError, TypeError, OverflowError):
        return None
    return r if r.ndim else int(r)


def true_vector(offsets: np.ndarray, mask: Optional[np.ndarray], bits: int, base_aligned: bool = True) -> int:
    """The widest power-of-two vector (in elements, <= 128 bits) such that every group of that
    many consecutive lanes along the last axis, starting at a multiple of it, addresses
    consecutive elements and starts on a vector-aligned byte address. Masked-off groups don't count."""
    elem_bytes = max(bits // 8, 1)
    if offsets.ndim == 0:
        return 1
    last = offsets.shape[-1]
    vec = max(128 // max(bits, 1), 1)
    if not base_aligned:
        vec = 1
    while vec > 1:
        if last % vec:
            vec //= 2
            continue
        groups = offsets.reshape(-1, vec)
        ok = np.all(np.diff(groups, axis=1) == 1, axis=1) & ((groups[:, 0] * elem_bytes) % (vec * elem_bytes) == 0)
        if mask is not None:
            # One predicate per vector: a group must be wholly in or wholly out.
            mgroups = mask.reshape(-1, vec)
            active = mgroups.any(axis=1)
            uniform = mgroups.all(axis=1) | ~active
            ok = (ok | ~active) & uniform
        if bool(np.all(ok)):
            return vec
        vec //= 2
    return 1


def axis_strides(offsets: np.ndarray) -> tuple[Optional[int], ...]:
    """The element stride along each axis when it is uniform, else None."""
    result = []
    for d in range(offsets.ndim):
        if offsets.shape[d] < 2:
            result.append(0)
            continue
        diff = np.diff(offsets, axis=d)
        first = diff.flat[0]
        result.append(int(first) if np.all(diff == first) else None)
    return tuple(result)
