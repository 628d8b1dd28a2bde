"""nv.scalar-access -> `tl.multiple_of` / `tl.max_contiguous` / `tl.max_constancy` hints, only
where every case makes them true.

For each access the walk knows two widths: what the compiler can prove (the AxisInfo mirror) and
what the case's real addresses and masks allow (concrete evaluation for sampled programs). A hint
is added only when the second is wider for *every* case, with the narrowest such width, so the
claim it makes to the compiler holds for all of them. Hints go where the value is defined (a loop
variable's initial value, since the pointer increments keep the property), or inline at the call.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from typing import Optional

from ladder.diagnoser.evidence import Finding

from .. import axisinfo
from ..context import TriageContext
from .common import analyses_of, context_for, target_kernels
from .edit import NotApplicable, apply, replace, segment
from .syntax import argument


def fix_scalar_access(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    if not ctx.analyses:
        raise NotApplicable("nv.scalar-access: hints need the problem's cases (they must hold for every case)")
    wraps: dict[int, tuple[ast.AST, str, object]] = {}   # node id -> (node, kind, hint values)
    for kernel in target_kernels(ctx, finding, "nv.scalar-access"):
        nodes = {id(n): n for n in ast.walk(kernel.node)}
        accesses = defaultdict(list)
        warps = {}
        for analysis in analyses_of(ctx, kernel.name):
            for access in analysis.report.accesses:
                accesses[access.node_id].append(access)
                warps[id(access)] = analysis.report.num_warps
        for node_id, seen in accesses.items():
            first = seen[0]
            if finding is not None and finding.line and first.line != finding.line:
                continue
            if first.block_ptr or not first.shape or first.op == "atomic":
                continue
            if any(a.true_strides is None or a.true_strides[-1] != 1 for a in seen):
                continue
            vec = min(min(a.true_vec or 1, max(a.numel // (32 * warps[id(a)]), 1)) for a in seen)
            if vec <= 1 or all(a.width.per_thread >= vec for a in seen):
                continue
            call = nodes.get(node_id)
            if not isinstance(call, ast.Call):
                continue
            rank = len(first.shape)
            elem_bytes = max(first.elem_bits // 8, 1)
            address_width = min(axisinfo.elements_per_thread(a.info, a.shape, a.elem_bits) for a in seen)
            if address_width < vec:
                target = _definition(kernel.node, argument(call, "pointer", 0), first.line)
                _want(wraps, target, "address", (_per_dim(rank, vec * elem_bytes), _per_dim(rank, vec)))
            mask_node = argument(call, "mask", 1 if first.op == "load" else 2)
            if mask_node is not None:
                if any(a.mask_constancy is not None and a.mask_constancy < vec for a in seen):
                    target = _definition(kernel.node, mask_node, first.line)
                    _want(wraps, target, "mask", _per_dim(rank, vec))
    if not wraps:
        raise NotApplicable("nv.scalar-access: no access where every case allows a wider vector than "
                            "the compiler can prove (the data itself is misaligned: pad or realign it)")
    edits = []
    for node, kind, hint in wraps.values():
        text = segment(source, node)
        if kind == "address":
            divisibility, contiguity = hint
            new = f"tl.max_contiguous(tl.multiple_of({text}, {divisibility}), {contiguity})"
        else:
            new = f"tl.max_constancy({text}, {hint})"
        edits.append(replace(source, node, new))
    return apply(source, edits)


def _per_dim(rank: int, value: int) -> str:
    if rank <= 1:
        return str(value)
    return "[" + ", ".join(["1"] * (rank - 1) + [str(value)]) + "]"


def _want(wraps: dict, node: ast.AST, kind: str, hint: object) -> None:
    current = wraps.get(id(node))
    if current is None:
        wraps[id(node)] = (node, kind, hint)
    elif current[2] != hint:
        # Two accesses need different claims about one value: keep the weaker (it holds for both).
        wraps[id(node)] = (node, kind, min(current[2], hint, key=str))


def _definition(function: ast.FunctionDef, node: Optional[ast.expr], line: int) -> ast.expr:
    """Where to put a hint for `node`: the expression itself, or for a plain name its last plain
    assignment before `line` (for a loop-carried pointer, its value before the loop)."""
    if node is None:
        raise NotApplicable("access without the argument to hint")
    if not isinstance(node, ast.Name):
        return node
    candidates = [n for n in ast.walk(function) if isinstance(n, ast.Assign) and n.lineno < line
                  and any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets)]
    if not candidates:
        raise NotApplicable(f"`{node.id}` is not assigned in the kernel; hint it where it is computed")
    return max(candidates, key=lambda n: n.lineno).value
