"""nv.gemm-no-grouped-order -> grouped (GROUP_SIZE_M) program ordering.

The statements that turn program ids into the output tile (`pid_m = tl.program_id(0)` /
`pid_n = tl.program_id(1)`, or `pid_m = pid // num_pid_n` / `pid_n = pid % num_pid_n`) are
replaced by the mapping from Triton's matmul tutorial, computed from the launch order and the
grid's own size, so the grid and everything after these lines stay unchanged. The mapping is a
bijection onto the same tiles, so each program still computes exactly one tile.
"""
from __future__ import annotations

import ast
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..source import Kernel
from .common import context_for, fresh_name, names_reaching, reports_of, target_kernels
from .edit import Edit, NotApplicable, apply, indentation, insert_before_line, remove_statement, span

GROUP_SIZE = 8


def _program_id_axis(module, node: ast.AST) -> Optional[int]:
    if isinstance(node, ast.Call) and module.canonical(node.func) == "tl.program_id":
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, int):
            return arg.value
    return None


def _top_assigns(kernel: Kernel) -> list[ast.Assign]:
    return [s for s in kernel.node.body if isinstance(s, ast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)]


def fix_grouped_order(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    edits: list[Edit] = []
    for kernel in target_kernels(ctx, finding, "nv.gemm-no-grouped-order"):
        reports = reports_of(ctx, kernel.name)
        if not any(d.loops for r in reports for d in r.dots):
            continue
        if any(r.pid_clamped for r in reports):
            continue
        edits += _rewrite(ctx, source, kernel, reports)
    if not edits:
        raise NotApplicable("nv.gemm-no-grouped-order: no plain row-major tile mapping to rewrite")
    return apply(source, edits)


def _rewrite(ctx: TriageContext, source: str, kernel: Kernel, reports) -> list[Edit]:
    module = ctx.source
    assigns = _top_assigns(kernel)
    names = {a.targets[0].id: a for a in assigns}
    group = fresh_name(ctx, kernel, "GROUP_SIZE_M")
    tmp = {key: fresh_name(ctx, kernel, key) for key in
           ("pid", "num_pid_m", "num_pid_n", "num_pid_in_group", "group_id", "first_pid_m", "group_size_m")}
    # Which variable picks rows of A (m) and which columns of B (n): by what the A operand's
    # address is computed from.
    by_axis = {}
    for assign in assigns:
        axis = _program_id_axis(module, assign.value)
        if axis is not None:
            by_axis[axis] = assign
    dot = next(d for r in reports for d in r.dots if d.loops)
    a_load = next((a for r in reports for a in r.accesses if a.node_id in dot.a_origins and a.op == "load"), None)
    a_names = _names_reaching(kernel, a_load.node_id) if a_load is not None else set()
    indent = indentation(source, kernel.node.body[0].lineno)
    if 0 in by_axis and 1 in by_axis and a_load is not None:
        m_axis = 0 if by_axis[0].targets[0].id in a_names else 1
        pid_m, pid_n = by_axis[m_axis], by_axis[1 - m_axis]
        pid, num_m, num_n = tmp["pid"], tmp["num_pid_m"], tmp["num_pid_n"]
        header = [f"{pid} = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)",
                  f"{num_m} = tl.num_programs({m_axis})",
                  f"{num_n} = tl.num_programs({1 - m_axis})"]
    else:
        found = _divmod_pair(module, assigns, names, a_names)
        if found is None:
            raise NotApplicable(f"{kernel.name}: tile indices are not a plain program_id or // and % split")
        pid_text, divisor, pid_m, pid_n, row_major = found
        header = []
        pid = pid_text if pid_text.isidentifier() else tmp["pid"]
        if pid != pid_text:
            header.append(f"{pid} = {pid_text}")
        known = divisor if divisor.isidentifier() else None
        fast = known or tmp["num_pid_n" if row_major else "num_pid_m"]
        if known is None:
            header.append(f"{fast} = {divisor}")
        slow = tmp["num_pid_m" if row_major else "num_pid_n"]
        header.append(f"{slow} = tl.num_programs(0) // {fast}")
        num_m, num_n = (slow, fast) if row_major else (fast, slow)
    first = min(pid_m.lineno, pid_n.lineno)
    removed = [pid_m, pid_n]
    body = header + [
        f"{tmp['num_pid_in_group']} = {group} * {num_n}",
        f"{tmp['group_id']} = {pid} // {tmp['num_pid_in_group']}",
        f"{tmp['first_pid_m']} = {tmp['group_id']} * {group}",
        f"{tmp['group_size_m']} = min({num_m} - {tmp['first_pid_m']}, {group})",
        f"{pid_m.targets[0].id} = {tmp['first_pid_m']} + (({pid} % {tmp['num_pid_in_group']}) % {tmp['group_size_m']})",
        f"{pid_n.targets[0].id} = ({pid} % {tmp['num_pid_in_group']}) // {tmp['group_size_m']}",
    ]
    edits = [remove_statement(source, statement) for statement in removed]
    edits.append(insert_before_line(source, first, "".join(f"{indent}{line}\n" for line in body)))
    edits.append(_add_param(source, kernel, group))
    return edits


def _names_reaching(kernel: Kernel, load_id: int) -> set[str]:
    """Names the address of the load with node id `load_id` is computed from, transitively."""
    load = next((n for n in ast.walk(kernel.node) if id(n) == load_id), None)
    if not isinstance(load, ast.Call) or not load.args:
        return set()
    return names_reaching(kernel, load.args[0])


def _divmod_pair(module, assigns: list[ast.Assign], names: dict[str, ast.Assign], a_names: set[str]):
    """(pid expression text, divisor text, m statement, n statement, row_major) for
    `a = pid // d` + `b = pid % d`: the one the A operand's rows depend on is m; row-major when
    n is the `%` (fast-moving) index."""
    for div in assigns:
        value = div.value
        if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.FloorDiv)):
            continue
        for mod in assigns:
            other = mod.value
            if not (isinstance(other, ast.BinOp) and isinstance(other.op, ast.Mod)):
                continue
            if ast.dump(other.left) != ast.dump(value.left) or ast.dump(other.right) != ast.dump(value.right):
                continue
            pid_text = ast.unparse(value.left)
            if not _depends_on_program_id(module, value.left, names):
                continue
            divisor = ast.unparse(value.right)
            if any(ch in divisor for ch in "+-*/%"):
                divisor = f"({divisor})"
            div_name, mod_name = div.targets[0].id, mod.targets[0].id
            row_major = not (mod_name in a_names and div_name not in a_names)
            if row_major:
                return pid_text, divisor, div, mod, True
            return pid_text, divisor, mod, div, False
    return None


def _depends_on_program_id(module, node: ast.AST, names: dict[str, ast.Assign], seen: frozenset = frozenset()) -> bool:
    for sub in ast.walk(node):
        if _program_id_axis(module, sub) is not None:
            return True
        if isinstance(sub, ast.Name) and sub.id in names and sub.id not in seen:
            if _depends_on_program_id(module, names[sub.id].value, names, seen | {sub.id}):
                return True
    return False


def _add_param(source: str, kernel: Kernel, name: str) -> Edit:
    """Append `name: tl.constexpr = 8` to the kernel's parameters (a default, so launches need no change)."""
    args = kernel.node.args
    last = args.args[-1]
    tail = args.defaults[-1] if args.defaults else (last.annotation if last.annotation is not None else last)
    end = span(source, tail)[1]
    return Edit(end, end, f", {name}: tl.constexpr = {GROUP_SIZE}")
