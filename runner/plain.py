"""Values the runner reads without running code of the candidate's: a candidate's own object (a tuple
subclass, a property, ``__iter__``, ``__hash__``, ``__index__``) runs its code whenever the runner or
Triton reads it, outside the timed region and where the recorders take what it does for their own.

- kernel arguments (``foreign_argument``): what Triton specializes on, hashes and reads attributes of
  inside its launcher; ``tensors_in`` finds the tensors in one for the launch tracer;
- a forward's outputs (``plain_outputs``): what the runner copies out and checks after forward returned.
"""
from __future__ import annotations

from typing import Any, Iterator

import torch

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


def tensors_in(value: Any) -> Iterator[torch.Tensor]:
    """Tensors in a kernel argument: tensors, Triton's tensor descriptors (``.base``), nested
    tuples/lists. Only objects that run no code of the candidate's when read: a builtin tuple or list
    (not a subclass with its own ``__iter__``), a descriptor of Triton's own class."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)) and plain_sequence(type(value)):
        for item in value:
            yield from tensors_in(item)
    elif _from_triton(type(value)) and isinstance(getattr(value, "base", None), torch.Tensor):
        yield value.base


def _from_triton(kind: type) -> bool:
    return str(getattr(kind, "__module__", "")).split(".")[0] == "triton"


# Kernel arguments Triton reads without running code of the candidate's: exact builtin scalars, torch's
# dtypes and devices, numpy scalars, tensors, Triton's own objects (descriptors, constexprs, dtypes,
# jitted functions), and builtin tuples and lists of them.
_PLAIN_SCALARS = (int, float, bool, str, bytes, type(None), torch.dtype, torch.device)


def foreign_argument(value: Any) -> str | None:
    """The type of the first object in a kernel argument that is none of those, else None: Triton
    specializes on, hashes, compares and reads attributes of its arguments (``.dtype``, ``.base``,
    ``__index__``, ``__hash__``) inside its launcher, where an object of the candidate's would run code
    the recorders take for Triton's own."""
    kind = type(value)
    if kind in _PLAIN_SCALARS or isinstance(value, torch.Tensor) or _from_triton(kind):
        return None
    if str(getattr(kind, "__module__", "")) == "numpy" and kind.__name__ not in ("ndarray", "matrix"):
        return None
    if isinstance(value, (tuple, list)) and plain_sequence(kind):
        return next((found for item in value if (found := foreign_argument(item))), None)
    return f"{kind.__module__}.{kind.__qualname__}"


def plain_sequence(kind: type) -> bool:
    """Whether a tuple or list type iterates, measures and indexes as the builtin one does (so
    reading it runs no code of its own)."""
    base = tuple if issubclass(kind, tuple) else list if issubclass(kind, list) else None
    return base is not None and type(kind) is type and all(getattr(kind, name) is getattr(base, name)
                                                           for name in ("__iter__", "__len__", "__getitem__"))


def plain_outputs(output: Any) -> tuple[list, str | None]:
    """A forward's outputs as a flat list, and why they cannot be taken as they are (or None).

    Outputs must be dense tensors (no subclass), tuples or lists of them, or numbers: any other
    object of the candidate's runs its own code whenever the runner looks at it (iterating it,
    copying it out, checking its poison), after forward returned: outside the timed region and the
    recorders. A tuple or list counts when it iterates as the builtin one does (named tuples and
    torch's return types do), so flattening it runs no candidate code.
    """
    flat: list = []
    return flat, _flatten_into(flat, output)


def _flatten_into(flat: list, value: Any) -> str | None:
    """``plain_outputs``'s walk, a module function rather than a closure: a recursive closure refers
    to itself through its cell, so every call would leave the outputs in a reference cycle that only
    the garbage collector frees. The contestant keeps collection off while it times, and a run of
    timed calls then held every call's outputs on the device (tens of GiB for a large case)."""
    kind = type(value)
    if plain_sequence(kind):
        for item in value:
            problem = _flatten_into(flat, item)
            if problem:
                return problem
        return None
    if kind in (torch.Tensor, torch.nn.Parameter) and value.layout == torch.strided:
        flat.append(value)
        return None
    if value is None or kind in (int, float, bool):
        flat.append(value)
        return None
    if kind in (torch.Tensor, torch.nn.Parameter):
        return f"returns a {str(value.layout).replace('torch.', '')} tensor (outputs must be dense)"
    what = f"{kind.__name__} (a torch.Tensor subclass)" if isinstance(value, torch.Tensor) else kind.__name__
    return (f"returns a {what}: outputs must be dense tensors, tuples or lists of them, or numbers "
            "(anything else runs its own code when the runner reads it, after forward returned)")
