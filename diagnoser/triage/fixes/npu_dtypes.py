"""Data types the A2/A3 vector units have instructions for (Triton-Ascend's performance guide,
"Optimizing Data Types": no vector int64 add, no vector int32/int64 compare).

npu.int64-scalar-fallback -> int32 indices: every int64 load that feeds the flagged arithmetic
is narrowed at the load (`tl.load(...).to(tl.int32)`), so the adds run in int32; tl.store converts
back to the output's int64. Exact while the values and the results fit in int32 (positions,
lengths, ids, offsets into tensors below 2**31 elements): the gate checks every candidate on fresh
inputs of every case.

npu.where-condition-dtype -> fp32 conditions: the operands of each integer comparison in a
tl.where condition are converted to fp32 (`keep.to(tl.float32) != 0`), which the vector unit
compares. Exact whenever the comparison is against zero (int to fp32 keeps sign and zero-ness),
or when its operands are index math (program ids, aranges, integer arguments, not loaded data)
and every integer of every case is below 2**24, the largest fp32 represents exactly.
"""
from __future__ import annotations

import ast
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from .common import analyses_of, context_for, target_kernels, tl_name
from .edit import Edit, NotApplicable, apply, method_call, replace

INT64 = "npu.int64-scalar-fallback"
WHERE = "npu.where-condition-dtype"
FP32_EXACT = 1 << 24


def fix_int64_scalar_fallback(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    tl = tl_name(ctx)
    narrowed: dict[int, ast.Call] = {}
    for kernel in target_kernels(ctx, finding, INT64):
        nodes = {id(node): node for node in ast.walk(kernel.node)}
        assigned = _assignments(kernel.node)
        for analysis in analyses_of(ctx, kernel.name):
            loads = {a.node_id: a for a in analysis.report.accesses if a.op == "load"}
            for op in analysis.report.int64_ops:
                if not (op.per_element and op.on_data and op.kind != "cast"):
                    continue
                if finding is not None and finding.line and op.line != finding.line:
                    continue
                node = nodes.get(op.node_id)
                for load in _feeding_loads(node, assigned, ctx) if node is not None else []:
                    access = loads.get(id(load))
                    if access is not None and access.elem_bits == 64:
                        narrowed[id(load)] = load
    if not narrowed:
        raise NotApplicable(f"{INT64}: no int64 load feeds the flagged arithmetic (its int64 comes from elsewhere)")
    return apply(source, [replace(source, load, method_call(source, load, f"to({tl}.int32)"))
                          for load in narrowed.values()])


def _assignments(function: ast.FunctionDef) -> dict[str, list[ast.expr]]:
    """Name -> every value assigned to it in the kernel (plain `name = value` statements)."""
    found: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
    return found


def _feeding_loads(node: ast.AST, assigned: dict[str, list[ast.expr]], ctx: TriageContext,
                   seen: frozenset = frozenset()) -> list[ast.Call]:
    """The tl.load calls whose values reach `node` through plain assignments."""
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and ctx.source.canonical(sub.func) == "tl.load":
            found.append(sub)
        elif isinstance(sub, ast.Name) and sub.id in assigned and sub.id not in seen:
            for value in assigned[sub.id]:
                found.extend(_feeding_loads(value, assigned, ctx, seen | {sub.id}))
    return found


def fix_where_condition_dtype(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    tl = tl_name(ctx)
    edits: dict[int, Edit] = {}
    for kernel in target_kernels(ctx, finding, WHERE):
        nodes = {id(node): node for node in ast.walk(kernel.node)}
        assigned = _assignments(kernel.node)
        largest = _largest_integer(ctx, kernel.name)
        for analysis in analyses_of(ctx, kernel.name):
            scalars = {p.name for p in kernel.params if p.constexpr} | set(analysis.launch.int_args())
            for where in analysis.report.wheres:
                if not where.cond_from_int_compare or (finding is not None and finding.line and where.line != finding.line):
                    continue
                call = nodes.get(where.node_id)
                condition = (call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "condition"),
                                                                 None)) if isinstance(call, ast.Call) else None
                for compare in _compares(condition, assigned) if condition is not None else []:
                    operands = [compare.left, *compare.comparators]
                    if not _exact_in_fp32(operands, assigned, ctx, largest):
                        raise NotApplicable(f"{WHERE}: line {where.line} compares loaded integers with a nonzero "
                                            "value; fp32 is exact for them only below 2**24")
                    for operand in operands:
                        if not _scalar(operand, scalars):
                            edits[id(operand)] = replace(source, operand, method_call(source, operand, f"to({tl}.float32)"))
    if not edits:
        raise NotApplicable(f"{WHERE}: no tl.where condition compares integers")
    return apply(source, edits.values())


def _compares(node: ast.AST, assigned: dict[str, list[ast.expr]], seen: frozenset = frozenset()) -> list[ast.Compare]:
    """The comparisons a condition is made of, through the names it was assigned to."""
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Compare):
            found.append(sub)
        elif isinstance(sub, ast.Name) and sub.id in assigned and sub.id not in seen:
            for value in assigned[sub.id]:
                found.extend(_compares(value, assigned, seen | {sub.id}))
    return found


def _scalar(node: ast.expr, scalars: set[str]) -> bool:
    """A literal, constexpr or integer argument: compared against an fp32 tensor it is converted
    with it, so it needs no `.to` (a constexpr has none)."""
    return not any(isinstance(sub, ast.Call) or (isinstance(sub, ast.Name) and sub.id not in scalars)
                   for sub in ast.walk(node))


def _exact_in_fp32(operands: list[ast.expr], assigned: dict[str, list[ast.expr]], ctx: TriageContext,
                   largest: int) -> bool:
    against_zero = len(operands) == 2 and any(isinstance(o, ast.Constant) and o.value == 0 for o in operands)
    from_data = any(_feeding_loads(operand, assigned, ctx) for operand in operands)
    return against_zero or (not from_data and largest < FP32_EXACT)


def _largest_integer(ctx: TriageContext, kernel: str) -> int:
    """The largest integer index math can reach in any case: a tensor's element count or an int argument."""
    sizes = [0]
    for analysis in analyses_of(ctx, kernel):
        sizes += [arg.numel for arg in analysis.launch.tensors().values()]
        sizes += [abs(value) for value in analysis.launch.int_args().values() if isinstance(value, int)]
    return max(sizes)
