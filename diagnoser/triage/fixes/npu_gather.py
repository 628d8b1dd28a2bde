"""npu.discrete-access -> one contiguous load of the table, and tl.gather on chip.

A load through loaded indices (`tl.load(table_ptr + codes)`) is lowered by TritonToUnstructure to
a scalar loop, one element at a time. When the table is small, the whole of it is one contiguous
copy into the unified buffer, and the selection is tl.gather there:

    table = tl.load(table_ptr + tl.arange(0, TABLE))      # once per program, at the kernel's top
    values = tl.gather(table, codes.to(tl.int32), 0)      # was: tl.load(table_ptr + codes)

The table is the pointer argument the address starts from; its size must be the same in every
case and small enough that it and its double buffer take at most TABLE_SHARE of the unified buffer
(a codebook, a lookup table: not an embedding matrix). A size that is not a power of two is padded
with a masked load. A masked gather keeps its mask (masked lanes read entry 0, then take `other`).
Indices of more than one dimension are flattened for the gather and the result reshaped back.
"""
from __future__ import annotations

import ast
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..detectors.ascend import discrete_reason
from .common import analyses_of, context_for, fresh_name, target_kernels, tl_name
from .edit import Edit, NotApplicable, apply, indentation, line_offsets, method_call, replace, segment

PATTERN = "npu.discrete-access"
TABLE_SHARE = 0.25


def fix_discrete_access(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    tl = tl_name(ctx)
    edits: dict[tuple, Edit] = {}
    for kernel in target_kernels(ctx, finding, PATTERN):
        nodes = {id(node): node for node in ast.walk(kernel.node)}
        analyses = analyses_of(ctx, kernel.name)
        tables: dict[str, str] = {}
        seen: dict[int, list] = {}
        for analysis in analyses:
            for access in analysis.report.accesses:
                if access.op == "load" and "load" in access.deps and discrete_reason(analysis.report, access):
                    seen.setdefault(access.node_id, []).append(access)
        for variants in seen.values():
            access = variants[0]
            if finding is not None and finding.line and access.line != finding.line:
                continue
            call = nodes.get(access.node_id)
            pointer = call.args[0] if isinstance(call, ast.Call) and call.args else None
            if not (isinstance(pointer, ast.BinOp) and isinstance(pointer.op, ast.Add)
                    and isinstance(pointer.left, ast.Name)):
                raise NotApplicable(f"{PATTERN}: line {access.line}: the address is not `table_ptr + indices`")
            table = pointer.left.id
            size = _table_size(ctx, analyses, table, access)
            if table not in tables:
                tables[table] = fresh_name(ctx, kernel, f"{table.removesuffix('_ptr')}_table")
                edits[("table", table)] = _load_table(source, kernel.node, table, tables[table], size, tl)
            edits[("gather", id(call))] = replace(source, call, _gather(source, call, pointer.right, tables[table],
                                                                        _shape_text(variants), tl))
    if not edits:
        raise NotApplicable(f"{PATTERN}: no load through loaded indices to rewrite")
    return apply(source, edits.values())


def _table_size(ctx: TriageContext, analyses: list, table: str, access) -> int:
    sizes = {a.launch.tensors()[table].numel for a in analyses if table in a.launch.tensors()}
    if len(sizes) != 1:
        raise NotApplicable(f"{PATTERN}: `{table}` is not one tensor of the same size in every case")
    size = sizes.pop()
    padded = 1 << max(size - 1, 0).bit_length()
    limit = ctx.device.get("unified_buffer_bytes", 0) * TABLE_SHARE
    if padded * max(access.elem_bits // 8, 1) * ctx.device.get("multibuffer_factor", 1) > limit:
        raise NotApplicable(f"{PATTERN}: `{table}` ({size} elements) is too large to keep whole in the unified buffer")
    return size


def _load_table(source: str, function: ast.FunctionDef, table: str, name: str, size: int, tl: str) -> Edit:
    """The whole table loaded once, at the top of the kernel's body (after its docstring)."""
    body = function.body
    first = body[1] if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        else body[0]
    padded = 1 << max(size - 1, 0).bit_length()
    lanes = f"{tl}.arange(0, {padded})"
    mask = "" if padded == size else f", mask={lanes} < {size}"
    offset = line_offsets(source)[first.lineno - 1]
    return Edit(offset, offset, f"{indentation(source, first.lineno)}{name} = {tl}.load({table} + {lanes}{mask})\n")


def _gather(source: str, call: ast.Call, indices: ast.expr, table: str, shape: list[str], tl: str) -> str:
    mask = next((k.value for k in call.keywords if k.arg == "mask"), call.args[1] if len(call.args) > 1 else None)
    other = next((k.value for k in call.keywords if k.arg == "other"), call.args[2] if len(call.args) > 2 else None)
    index = method_call(source, indices, f"to({tl}.int32)")
    if mask is not None:
        index = f"{tl}.where({segment(source, mask)}, {index}, 0)"
    if len(shape) > 1:
        index = f"{tl}.reshape({index}, ({' * '.join(shape)},))"
    gathered = f"{tl}.gather({table}, {index}, 0)"
    if len(shape) > 1:
        gathered = f"{tl}.reshape({gathered}, ({', '.join(shape)}))"
    if mask is not None:
        gathered = f"{tl}.where({segment(source, mask)}, {gathered}, {segment(source, other) if other else 0})"
    return gathered


def _shape_text(variants: list) -> list[str]:
    """The index tile's shape as source text, valid in every case: each dim's sizing constexpr, else
    its size when every case has the same."""
    first = variants[0]
    if len(first.shape) <= 1:
        sizes = {access.numel for access in variants}
        if len(sizes) == 1:
            return [str(first.numel)]
    texts = []
    for dim, size in enumerate(first.shape):
        names = first.dims[dim] if len(first.dims) == len(first.shape) else frozenset()
        if len(names) == 1:
            texts.append(next(iter(names)))
        elif all(len(a.shape) == len(first.shape) and a.shape[dim] == size for a in variants):
            texts.append(str(size))
        else:
            raise NotApplicable(f"{PATTERN}: line {first.line}: the index tile's shape differs between cases")
    return texts
