"""Launch sites: every Triton launch a script makes, grouped by where it is made, with its arguments.

A *launch site* is one kernel launched from one line of the caller's code (`kernel[grid](...)` at
`train.py:42`, the first frame outside Triton). `SiteRecorder` wraps the innermost Python entry of a
launch (`JITFunction.run` on a GPU, `InterpretedFunction.run` under the interpreter), so what it
sees is what is launched: the autotuner's and the heuristics' choices are already among the
keyword arguments. Per site it counts the launches and keeps, for each distinct *variant* (the
shapes, dtypes and strides of the tensor arguments, the integer and constexpr values, the grid), the
first launch's arguments themselves, so that the launch can be replayed after the script ended
(`ladder.runner.capture.replay`). At most `MAX_VARIANTS` variants are held per site (each holds its
tensors alive); launches of further variants are only counted.

Launches an autotuner makes while it times its configs are not the script's work: they are counted
apart (`tuning_launches`) and never kept (`ladder.runner.capture.tuning`).

What a variant says about the work, for the roofline (`ladder.runner.roofline.floor_seconds` turns it into a
floor): `bytes`, the memory its tensor arguments span (each distinct region once, however many
arguments alias it: every input read once, every output written once), and for a kernel whose
source calls `tl.dot`, `flops` from the GEMM its operands' shapes form ((m, k) x (k, n) -> (m, n),
batched or not, its dimensions matched through alignment padding; where the shapes allow several
readings, the operands of one dtype and then the least work, so the floor stays a time no kernel
can beat).
"""
from __future__ import annotations

import functools
import inspect
import itertools
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ladder.runner.capture.record import source_position
from ladder.runner.capture.tuning import AutotuneWatch
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

MAX_VARIANTS = 4
PADDING_ELEMENTS = 64  # most a dimension is padded by for alignment (128 bytes of 16-bit elements)
MAX_SITES = 64  # sites beyond these (a script generating kernels in a loop) are only counted
_RUNNER = Path(__file__).resolve().parents[1]


@dataclass
class Variant:
    """One shape of a site's launches: how many launches had it, and the first one, replayable."""

    key: str
    launches: int
    arguments: list[dict[str, Any]]
    grid: list[int] | None
    bytes: int
    flops: float | None
    flops_from: str | None
    dtype: str | None  # of the dot's first operand (the roofline's peak), else the first float tensor
    replay: Callable[[], Any] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "launches": self.launches, "arguments": self.arguments, "grid": self.grid,
                "bytes": self.bytes, "flops": self.flops, "flops_from": self.flops_from, "dtype": self.dtype}


@dataclass
class Site:
    """One kernel launched from one line of the script."""

    key: str  # kernel@file:line
    kernel: str
    function: str
    kernel_file: str | None
    kernel_line: int | None
    file: str | None
    line: int | None
    order: int  # which site launched first (0 first)
    dot: bool
    launches: int = 0
    tuning_launches: int = 0
    other_launches: int = 0  # launches of variants beyond MAX_VARIANTS, counted only
    variants: list[Variant] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "kernel": self.kernel, "function": self.function,
                "kernel_file": self.kernel_file, "kernel_line": self.kernel_line, "file": self.file,
                "line": self.line, "order": self.order, "dot": self.dot, "launches": self.launches,
                "tuning_launches": self.tuning_launches, "other_launches": self.other_launches,
                "variants": [variant.to_dict() for variant in self.variants]}


class SiteRecorder:
    """While active, every Triton launch is counted by site and its first variants kept (see module)."""

    def __init__(self, max_variants: int = MAX_VARIANTS, max_sites: int = MAX_SITES) -> None:
        self.max_variants, self.max_sites = max_variants, max_sites
        self.sites: dict[str, Site] = {}
        self.untracked_launches = 0  # launches of sites beyond max_sites
        self.tuning_launches = 0
        self._tuning_before: dict[str, int] = {}  # site key -> tuning launches before its first own one
        self._autotune = AutotuneWatch()
        self._saved: list[tuple[type, Callable]] = []

    def __enter__(self) -> SiteRecorder:
        self._autotune.install()
        for owner in _entry_classes():
            original = owner.run
            self._saved.append((owner, original))
            owner.run = self._recording(original)
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, original in reversed(self._saved):
            owner.run = original
        self._saved.clear()
        self._autotune.uninstall()

    def ordered(self) -> list[Site]:
        return sorted(self.sites.values(), key=lambda site: site.order)

    def _recording(self, original: Callable) -> Callable:
        recorder = self

        def run(fn: Any, *args: Any, grid: Any = None, warmup: bool = False, **kwargs: Any) -> Any:
            if not warmup:
                recorder._record(fn, original, args, grid, kwargs, sys._getframe(1))
            return original(fn, *args, grid=grid, warmup=warmup, **kwargs)

        run.__wrapped__ = original
        return run

    def _record(self, fn: Any, original: Callable, args: tuple, grid: Any, kwargs: dict, frame: Any) -> None:
        tuning = self._autotune.tuning()
        caller = _caller(_autotuner_frame(frame) if tuning else frame)
        key = _site_key(fn, caller)
        site = self.sites.get(key)
        if tuning:  # before the site's first own launch: the autotuner times first
            self.tuning_launches += 1
            if site is None:
                self._tuning_before[key] = self._tuning_before.get(key, 0) + 1
            else:
                site.tuning_launches += 1
            return
        if site is None:
            if len(self.sites) >= self.max_sites:
                self.untracked_launches += 1
                return
            site = self.sites[key] = _new_site(key, fn, caller, len(self.sites))
            site.tuning_launches = self._tuning_before.pop(key, 0)
        site.launches += 1
        named = _named_arguments(fn, args, kwargs)
        resolved = _resolve_grid(grid, named)
        variant_key = _variant_key(named, resolved)
        known = next((v for v in site.variants if v.key == variant_key), None)
        if known is not None:
            known.launches += 1
        elif len(site.variants) < self.max_variants:
            site.variants.append(_variant(variant_key, named, resolved, site.dot, original, fn, args, grid, kwargs))
        else:
            site.other_launches += 1


def _entry_classes() -> list[type]:
    """The classes whose `run` is the innermost Python entry of a launch in this process."""
    from triton.runtime.jit import JITFunction

    classes: list[type] = [JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # a Triton without the interpreter
        return classes
    return [*classes, InterpretedFunction]


@functools.lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    """Code that launches on the caller's behalf (Triton's launch path and benchmarkers, torch's op
    wrappers, the runner's own, such as the interpreter's benchmarker): the launch site is the first
    frame below them."""
    import torch
    import triton

    folders = [Path(module.__file__).resolve().parent for module in (triton, torch)] + [_RUNNER]
    return tuple(str(folder) + os.sep for folder in folders)


def _autotuner_frame(frame: Any) -> Any:
    """The frame of the `Autotuner.run` that is timing configs (a launch made while it benchmarks
    belongs to the site that called it, whoever's `do_bench` made the launch)."""
    from triton.runtime import autotuner

    tuner_file = autotuner.__file__
    found = frame
    while frame is not None:
        if frame.f_code.co_name == "run" and frame.f_code.co_filename == tuner_file:
            found = frame
        frame = frame.f_back
    return found


def _caller(frame: Any) -> tuple[str | None, int | None]:
    """File and line of the first frame outside Triton, torch and the runner: where the launch is made."""
    skipped = _library_dirs()
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith((*skipped, "<")):
            return filename, frame.f_lineno
        frame = frame.f_back
    return None, None


def _python_function(fn: Any) -> Any:
    inner = fn
    while hasattr(inner, "fn") and not inspect.isfunction(inner):
        inner = inner.fn
    return inner


def _site_key(fn: Any, caller: tuple[str | None, int | None]) -> str:
    name = getattr(_python_function(fn), "__name__", "kernel")
    return f"{name}@{caller[0] or '?'}:{caller[1] or 0}"


def _new_site(key: str, fn: Any, caller: tuple[str | None, int | None], order: int) -> Site:
    function = _python_function(fn)
    kernel_file, kernel_line = source_position(function)
    return Site(key=key, kernel=getattr(function, "__name__", "kernel"),
                function=f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}",
                kernel_file=kernel_file, kernel_line=kernel_line, file=caller[0], line=caller[1], order=order,
                dot=calls_dot(fn))


_DOT = re.compile(r"\bdot(_scaled)?\s*\(")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def calls_dot(fn: Any, seen: set[int] | None = None) -> bool:
    """Whether the kernel calls `tl.dot`, itself or in a `@triton.jit` helper it calls (a GEMM tile
    written once and called by several kernels is common), so that its GEMM's flops are counted."""
    seen = set() if seen is None else seen
    function = _python_function(fn)
    if id(function) in seen:
        return False
    seen.add(id(function))
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        source = getattr(fn, "src", "") or ""
    if _DOT.search(source):
        return True
    names = getattr(function, "__globals__", {})
    helpers = (names.get(name) for name in set(_CALL.findall(source)))
    return any(calls_dot(helper, seen) for helper in helpers if helper is not None and hasattr(helper, "fn")
               and inspect.isfunction(_python_function(helper)))


_SIGNATURES: dict[int, inspect.Signature | None] = {}


def _named_arguments(fn: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The launch's arguments by parameter name (defaults filled in), then the launch options."""
    function = _python_function(fn)
    if id(function) not in _SIGNATURES:
        try:
            _SIGNATURES[id(function)] = inspect.signature(function)
        except (TypeError, ValueError):
            _SIGNATURES[id(function)] = None
    signature = _SIGNATURES[id(function)]
    if signature is None:
        return {**{f"arg{i}": value for i, value in enumerate(args)}, **kwargs}
    known = {name: value for name, value in kwargs.items() if name in signature.parameters}
    try:
        bound = signature.bind_partial(*args, **known)
    except TypeError:
        return {**{f"arg{i}": value for i, value in enumerate(args)}, **kwargs}
    bound.apply_defaults()
    return {**bound.arguments, **{name: value for name, value in kwargs.items() if name not in known}}


def _resolve_grid(grid: Any, named: dict[str, Any]) -> list[int] | None:
    try:
        resolved = grid(named) if callable(grid) else grid
        sizes = [int(size) for size in resolved]
    except Exception:  # noqa: BLE001 (a grid callable that needs what only Triton's binder gives: unknown)
        return None
    return sizes + [1] * (3 - len(sizes))


def tensor_of(value: Any) -> Any:
    """The tensor behind an argument: a tensor itself, or the base of a tensor descriptor."""
    import torch

    if isinstance(value, torch.Tensor):
        return value
    base = getattr(value, "base", None)
    return base if isinstance(base, torch.Tensor) else None


def _describe(name: str, value: Any) -> dict[str, Any]:
    tensor = tensor_of(value)
    if tensor is not None:
        described = {"name": name, "shape": list(tensor.shape), "dtype": str(tensor.dtype).replace("torch.", ""),
                     "stride": list(tensor.stride())}
        if tensor is not value:
            described["descriptor"] = [int(size) for size in getattr(value, "block_shape", [])]
        return described
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return {"name": name, "value": value}
    if isinstance(value, float):
        return {"name": name, "value": "float"}  # a float's value does not change the work
    return {"name": name, "value": type(value).__name__}


def _variant_key(named: dict[str, Any], grid: list[int] | None) -> str:
    parts = []
    for name, value in named.items():
        described = _describe(name, value)
        described.pop("name")
        parts.append(f"{name}={described}")
    return ";".join(parts) + f";grid={grid}"


def _variant(key: str, named: dict[str, Any], grid: list[int] | None, dot: bool, original: Callable, fn: Any,
             args: tuple, raw_grid: Any, kwargs: dict) -> Variant:
    tensors = [tensor for tensor in (tensor_of(value) for value in named.values()) if tensor is not None]
    flops, flops_from, dot_dtype = gemm_flops([tuple(t.shape) for t in tensors], [t.dtype for t in tensors]) if dot \
        else (None, None, None)
    first_float = next((t.dtype for t in tensors if t.is_floating_point()), None)
    dtype = dot_dtype or first_float
    return Variant(key=key, launches=1, arguments=[_describe(name, value) for name, value in named.items()],
                   grid=grid, bytes=spanned_bytes(tensors), flops=flops, flops_from=flops_from,
                   dtype=str(dtype).replace("torch.", "") if dtype is not None else None,
                   replay=lambda: original(fn, *args, grid=raw_grid, warmup=False, **kwargs))


def spanned_bytes(tensors: list[Any]) -> int:
    """Bytes of memory the tensors' views span, each region once however many tensors alias it."""
    regions = []
    for tensor in tensors:
        if tensor.numel() == 0:
            continue
        extent = sum((size - 1) * abs(stride) for size, stride in zip(tensor.shape, tensor.stride())) + 1
        start = tensor.data_ptr()
        regions.append((start, start + extent * tensor.element_size()))
    total, reached = 0, None
    for start, end in sorted(regions):
        if reached is None or start >= reached:
            total += end - start
            reached = end
        elif end > reached:
            total += end - reached
            reached = end
    return total


def gemm_flops(shapes: list[tuple[int, ...]], dtypes: list[Any]) -> tuple[float | None, str | None, Any]:
    """2*m*n*k (times the batch) of the GEMM three of the shapes form, with how it was read and the
    first operand's dtype; (None, None, None) when no three shapes form one.

    A (m, k) operand, a (k, n) or (n, k) one (a weight stored transposed) and an (m, n) output, with
    an equal leading batch dimension on all three or on the first and the output only. A dimension
    two tensors carry may differ by alignment padding (`_padded`: an output allocated with rows
    rounded up to 16 bytes, an operand whose K was zero-padded); the work counted is the smaller
    size. Readings are ranked: operands of one dtype (a dot's two operands share one; an fp32
    statistics buffer beside an fp16 weight is no operand), then exact before padded, then the
    least work, so that among plausible GEMMs the floor stays a time no kernel can beat.
    """
    readings = []
    for (i, a), (j, b), (_, c) in itertools.permutations(enumerate(shapes), 3):
        if len(a) not in (2, 3) or len(c) != len(a) or len(b) not in (2, len(a)):
            continue
        batch = a[0] if len(a) == 3 else 1
        if len(a) == 3 and (c[0] != batch or (len(b) == 3 and b[0] != batch)):
            continue
        for k_b, n_b in {tuple(b[-2:]), tuple(b[-2:][::-1])}:
            sizes = [_common(a[-2], c[-2]), _common(a[-1], k_b), _common(n_b, c[-1])]
            if None in sizes:
                continue
            (m, padded_m), (k, padded_k), (n, padded_n) = sizes
            padded = padded_m or padded_k or padded_n
            batched = f"batch {batch} x " if batch > 1 else ""
            how = f"{batched}({m}x{k}) @ ({k}x{n}) -> ({m}x{n})" + (" within alignment padding" if padded else "")
            rank = (dtypes[i] != dtypes[j], padded, 2.0 * batch * m * n * k)
            readings.append((rank, how, dtypes[i]))
    if not readings:
        return None, None, None
    rank, how, dtype = min(readings, key=lambda reading: reading[0])
    return rank[2], how, dtype


def _common(one: int, other: int) -> tuple[int, bool] | None:
    """(the size two tensors share along a dimension, whether one of them is padded past it), or None."""
    if one == other:
        return one, False
    return (min(one, other), True) if _padded(min(one, other), max(one, other)) else None


def _padded(size: int, padded: int) -> bool:
    """Whether `padded` is `size` rounded up for alignment: by fewer than 64 elements and an eighth of it."""
    return size < padded < size + min(PADDING_ELEMENTS, size / 8)
