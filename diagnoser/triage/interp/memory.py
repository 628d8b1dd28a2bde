"""Memory accesses: `tl.load`, `tl.store` and the atomics, one `Access` per call site.

Each access keeps the abstract view (the AxisInfo of its addresses and the access width the
compiler can prove) and, after the walk, the concrete one (the widest vector and the strides the
sampled program's real addresses allow); fixes compare the two to know which hints are true.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

import numpy as np

from .. import axisinfo as ax
from ..axisinfo import AxisInfo
from .layout import mark_layout_use
from .numeric import axis_strides, true_vector
from .reductions import mark_reductions_used
from .report import Access, Atomic, Tile
from .syntax import call_arg
from .values import DTYPE_BITS, FLOAT_DTYPES, V, dims_for, info_for

if TYPE_CHECKING:
    from .walker import KernelWalker

ATOMICS = {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
           "atomic_xchg", "atomic_cas"}


def load(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    ptr = walker.eval(call_arg(node, "pointer", 0), env)
    mask_node = call_arg(node, "mask", 1)
    other_node = call_arg(node, "other", 2)
    mask = walker.eval(mask_node, env) if mask_node is not None else None
    care = call_arg(node, "care_padding")
    care_padding = None
    if care is not None:
        care_padding = bool(walker.eval(care, env).py)
    return _loaded(walker, node, ptr, mask, other_node is not None, care_padding)


def descriptor_load(walker: KernelWalker, node: ast.Call, descriptor: V) -> V:
    """`desc.load([offsets])`: one box of the descriptor's block shape, read like a block pointer's
    block (a TMA copy: whole, aligned rows; out-of-bounds elements arrive as zeros)."""
    return _loaded(walker, node, descriptor, None, False, None)


def descriptor_store(walker: KernelWalker, node: ast.Call, descriptor: V, value: V) -> V:
    """`desc.store([offsets], value)`: one box written like a block pointer's block."""
    return _stored(walker, node, descriptor, value, None)


def _loaded(walker: KernelWalker, node: ast.Call, ptr: V, mask: Optional[V], has_other: bool,
            care_padding: Optional[bool]) -> V:
    access = _record_access(walker, node, "load", ptr, mask, has_other, care_padding)
    dtype = ptr.py if isinstance(ptr.py, str) else "fp32"
    bits = DTYPE_BITS.get(dtype, 32)
    shape = ptr.shape
    if shape and access is not None:
        walker.report.tiles.append(Tile(node.lineno, shape, bits, "load"))
    # The value depends on the address and the mask, but no comparison made them is one of its own:
    # a float loaded under `offsets < n` is not the outcome of an integer compare.
    deps = (ptr.deps | (mask.deps if mask is not None else frozenset())) - {"cmp_int"} | {"load"}
    origins = frozenset({id(node)})
    if dtype in FLOAT_DTYPES:
        return V("float", shape, None, bits, deps=deps, origins=origins, dims=ptr.dims)
    info = AxisInfo.pessimistic(max(len(shape), 1))
    return V("int", shape, info, bits, deps=deps, origins=origins, dims=ptr.dims)


def store(walker: KernelWalker, node: ast.Call, env: dict[str, V]) -> V:
    ptr = walker.eval(call_arg(node, "pointer", 0), env)
    value = walker.eval(call_arg(node, "value", 1), env)
    mask_node = call_arg(node, "mask", 2)
    mask = walker.eval(mask_node, env) if mask_node is not None else None
    return _stored(walker, node, ptr, value, mask)


def _stored(walker: KernelWalker, node: ast.Call, ptr: V, value: V, mask: Optional[V]) -> V:
    access = _record_access(walker, node, "store", ptr, mask, False, None)
    if access is not None:
        access.from_dot = access.from_dot or "dot" in value.deps
    mark_reductions_used(walker, value)
    mark_layout_use(walker, value, "feeds_store")
    return V("none")


def atomic(walker: KernelWalker, op: str, node: ast.Call, env: dict[str, V]) -> V:
    ptr = walker.eval(call_arg(node, "pointer", 0), env)
    if op == "atomic_cas":
        mask = None
        walker.eval(call_arg(node, "cmp", 1), env)
        walker.eval(call_arg(node, "val", 2), env)
    else:
        mark_reductions_used(walker, walker.eval(call_arg(node, "val", 1), env))
        mask_node = call_arg(node, "mask", 2)
        mask = walker.eval(mask_node, env) if mask_node is not None else None
    sem_node = call_arg(node, "sem")
    sem = walker.eval(sem_node, env).py if sem_node is not None else None
    _record_access(walker, node, "atomic", ptr, mask, False, None)
    distinct = None
    if isinstance(ptr.conc, np.ndarray):
        distinct = int(np.unique(ptr.conc).size)
    elif isinstance(ptr.conc, (int, np.integer)):
        distinct = 1
    key = walker.record_key("atomic", node)
    if key not in walker.records:
        record = Atomic(id(node), node.lineno, op, sem, tuple(walker.loop_stack), "pid" in ptr.deps, distinct, ptr.shape,
                        "load" in ptr.deps, ptr.base)
        walker.records[key] = record
        walker.report.atomics.append(record)
    return V("float", ptr.shape, None, ptr.bits, deps=ptr.deps | {"load"})


def _record_access(walker: KernelWalker, node: ast.Call, op: str, ptr: V, mask: Optional[V], has_other: bool,
                   care_padding: Optional[bool]) -> Optional[Access]:
    node_id = id(node)
    bits = DTYPE_BITS.get(ptr.py, 32) if isinstance(ptr.py, str) else ptr.bits
    if ptr.kind == "blockptr":
        access = walker.accesses.get(node_id)
        if access is None:
            width = ax.AccessWidth(tuple(reversed(range(len(ptr.shape)))), max(128 // bits, 1), 128, ())
            access = Access(node_id, node.lineno, op, ptr.base, ptr.shape, bits, mask is not None, has_other,
                            tuple(walker.loop_stack), AxisInfo.pessimistic(max(len(ptr.shape), 1)), width,
                            ptr.deps, block_ptr=True, care_padding=care_padding,
                            end_line=getattr(node, "end_lineno", None),
                            true_strides=ptr.strides or None, block_order=ptr.order or None)
            walker.accesses[node_id] = access
        return access
    if ptr.kind != "ptr":
        return None
    for tag in ptr.deps:
        if tag in walker.int64_by_tag:
            walker.int64_by_tag[tag].feeds_address = True
    shape = ptr.shape
    info = ptr.info or AxisInfo.pessimistic(max(len(shape), 1))
    mask_info = info_for(mask, shape) if mask is not None and mask.info is not None and shape else None
    width = ax.access_width(info, shape, bits, walker.num_warps, mask_info, op != "load")
    access = walker.accesses.get(node_id)
    if access is None:
        access = Access(node_id, node.lineno, op, ptr.base, shape, bits, mask is not None, has_other,
                        tuple(walker.loop_stack), info, width, ptr.deps, care_padding=care_padding,
                        end_line=getattr(node, "end_lineno", None), dims=dims_for(ptr, shape))
        walker.accesses[node_id] = access
    else:
        # A later pass of a loop body: keep the joined (fixpoint) abstract state.
        access.info, access.width, access.deps = info, width, access.deps | ptr.deps
    if mask_info is not None:
        fastest = width.order[0] if width.order else 0
        access.mask_constancy = mask_info.constancy[min(fastest, len(mask_info.constancy) - 1)]
    if isinstance(ptr.conc, np.ndarray) and shape:
        mask_conc = mask.conc if mask is not None and isinstance(mask.conc, np.ndarray) else None
        walker.concrete_offsets.setdefault(node_id, []).append((ptr.conc, mask_conc, bits))
        if access.sample_offsets is None:
            access.sample_offsets = ptr.conc
    return access


def finish_access(walker: KernelWalker, access: Access) -> None:
    """Once the walk is done: the widest vector and the per-axis strides that every pass over the
    access allows with the sampled program's real offsets."""
    samples = walker.concrete_offsets.get(access.node_id)
    if not samples or not access.shape:
        return
    binding = walker.bindings.get(access.base or "")
    base_aligned = binding.aligned if binding is not None else True
    vecs, strides = [], None
    for offsets, mask, bits in samples:
        try:
            offsets = np.broadcast_to(np.asarray(offsets, dtype=np.int64), access.shape)
            mask = np.broadcast_to(np.asarray(mask, dtype=bool), access.shape) if mask is not None else None
        except ValueError:
            continue
        vecs.append(true_vector(offsets, mask, bits, base_aligned))
        s = axis_strides(offsets)
        strides = s if strides is None else tuple(a if a == b else None for a, b in zip(strides, s))
    if vecs:
        access.true_vec = min(vecs)
    access.true_strides = strides
