"""Statement execution: assignments, loops, branches and returns of the kernel body.

Loops run their body twice: once from the state on entry, then from the loop-carried values
joined with that state, the way the compiler's dataflow analysis reaches its fixpoint. A runtime
`if` runs both branches and joins them; a constant one runs the branch it takes.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .. import axisinfo as ax
from ..axisinfo import AxisInfo
from .operators import binop
from .params import note_tile_params
from .report import Loop
from .values import UNKNOWN, V, join_values, python_value

if TYPE_CHECKING:
    from .walker import KernelWalker


class Return(Exception):
    """A `return` unwinding to the kernel's top or to the inlined helper's call, with its value."""

    def __init__(self, value: V) -> None:
        self.value = value


def exec_body(walker: KernelWalker, body: list[ast.stmt], env: dict[str, V]) -> None:
    for stmt in body:
        _execute(walker, stmt, env)


def _execute(walker: KernelWalker, stmt: ast.stmt, env: dict[str, V]) -> None:
    walker.tick()
    if isinstance(stmt, ast.Assign):
        value = walker.eval(stmt.value, env)
        for target in stmt.targets:
            _assign(target, value, env)
    elif isinstance(stmt, ast.AnnAssign):
        if stmt.value is not None:
            _assign(stmt.target, walker.eval(stmt.value, env), env)
    elif isinstance(stmt, ast.AugAssign):
        current = walker.eval(stmt.target, env)
        value = binop(walker, stmt.op, current, walker.eval(stmt.value, env), stmt)
        _assign(stmt.target, value, env)
    elif isinstance(stmt, ast.Expr):
        walker.eval(stmt.value, env)
    elif isinstance(stmt, ast.For):
        _exec_for(walker, stmt, env)
    elif isinstance(stmt, ast.While):
        _exec_while(walker, stmt, env)
    elif isinstance(stmt, ast.If):
        _exec_if(walker, stmt, env)
    elif isinstance(stmt, ast.Return):
        raise Return(walker.eval(stmt.value, env) if stmt.value is not None else V("none"))
    elif isinstance(stmt, ast.With):
        exec_body(walker, stmt.body, env)


def _assign(target: ast.expr, value: V, env: dict[str, V]) -> None:
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        items = value.items if value.kind == "tuple" else ()
        for i, element in enumerate(target.elts):
            _assign(element, items[i] if i < len(items) else UNKNOWN, env)


def _exec_for(walker: KernelWalker, stmt: ast.For, env: dict[str, V]) -> None:
    loop_id = id(stmt)
    kind, bounds, num_stages = _loop_spec(walker, stmt.iter, env)
    trip = None
    if bounds is not None and all(isinstance(b.conc, (int, np.integer)) for b in bounds):
        start, stop, step = (int(b.conc) for b in bounds)
        trip = len(range(start, stop, step)) if step else None
    loop = walker.report.loops.setdefault(loop_id, Loop(loop_id, stmt.lineno, kind, num_stages, trip,
                                                        len(walker.loop_stack)))
    if bounds is not None and any({"pid", "num_programs"} & b.deps for b in bounds):
        loop.grid_stride = True
    if bounds is None:
        iv = V("int", (), AxisInfo.scalar(1), 32, deps=frozenset({"loop"}))
        second = iv
    else:
        start, stop, step = bounds
        div = ax.gcd((start.info or AxisInfo.scalar()).divisibility[0],
                     (step.info or AxisInfo.scalar()).divisibility[0]) or 1
        deps = start.deps | stop.deps | step.deps | {"loop"}
        bits = max(start.bits, stop.bits, step.bits) if start.kind == "int" else 32
        first_conc = start.conc if isinstance(start.conc, (int, np.integer)) else None
        second_conc = (first_conc + step.conc) if first_conc is not None and isinstance(step.conc, (int, np.integer)) else None
        iv = V("int", (), AxisInfo.scalar(div), bits, conc=first_conc, deps=deps)
        second = V("int", (), AxisInfo.scalar(div), bits, conc=second_conc, deps=deps)
    before = dict(env)
    walker.loop_stack.append(loop_id)
    try:
        _assign(stmt.target, iv, env)
        exec_body(walker, stmt.body, env)
        # Second pass: loop-carried values joined with their initial state, the way the
        # dataflow analysis reaches its fixpoint; concrete values are those of iteration 2.
        carried = _join_carried(before, env)
        _assign(stmt.target, second, carried)
        exec_body(walker, stmt.body, carried)
        final = _join_carried(before, carried, keep_concrete=False)
    finally:
        walker.loop_stack.pop()
    env.clear()
    env.update(final)


def _join_carried(before: dict[str, V], after: dict[str, V], keep_concrete: bool = True) -> dict[str, V]:
    result = dict(after)
    for name, new in after.items():
        old = before.get(name)
        if old is None or old is new:
            continue
        merged = join_values(old, new)
        if not keep_concrete:
            merged = replace(merged, conc=None)
        result[name] = merged
    return result


def _loop_spec(walker: KernelWalker, node: ast.expr, env: dict[str, V]):
    if not isinstance(node, ast.Call):
        return "range", None, None
    name = walker.module.canonical(node.func) or ""
    kind = {"range": "range", "tl.range": "tl.range", "tl.static_range": "static_range"}.get(name)
    if kind is None:
        walker.eval(node, env)
        return "range", None, None
    args = [walker.eval(a, env) for a in node.args]
    num_stages = None
    for kw in node.keywords:
        if kw.arg == "num_stages":
            num_stages = walker.eval(kw.value, env).py
    if len(args) == 1:
        bounds = (python_value(0), args[0], python_value(1))
    elif len(args) == 2:
        bounds = (args[0], args[1], python_value(1))
    elif len(args) >= 3:
        bounds = (args[0], args[1], args[2])
        note_tile_params(walker, args[2])
    else:
        bounds = None
    return kind, bounds, num_stages


def _exec_while(walker: KernelWalker, stmt: ast.While, env: dict[str, V]) -> None:
    loop_id = id(stmt)
    walker.report.loops.setdefault(loop_id, Loop(loop_id, stmt.lineno, "while", None, None, len(walker.loop_stack)))
    before = dict(env)
    walker.loop_stack.append(loop_id)
    try:
        walker.eval(stmt.test, env)
        exec_body(walker, stmt.body, env)
    finally:
        walker.loop_stack.pop()
    final = _join_carried(before, env, keep_concrete=False)
    env.clear()
    env.update(final)


def _exec_if(walker: KernelWalker, stmt: ast.If, env: dict[str, V]) -> None:
    test = walker.eval(stmt.test, env)
    if test.py is not None and not test.is_tensor:
        exec_body(walker, stmt.body if test.py else stmt.orelse, env)
        return
    then_env, else_env = dict(env), dict(env)
    then_returned = _exec_branch(walker, stmt.body, then_env)
    else_returned = _exec_branch(walker, stmt.orelse, else_env)
    if then_returned and else_returned:
        raise Return(V("none"))
    if then_returned or else_returned:
        # An early exit on a runtime condition (`if target == ignore: store; return`): the
        # kernel goes on along the other branch.
        env.clear()
        env.update(else_env if then_returned else then_env)
        return
    concrete_branch = None
    if isinstance(test.conc, (bool, int, np.integer, np.bool_)) and not test.is_tensor:
        concrete_branch = then_env if test.conc else else_env
    env.clear()
    for name in set(then_env) | set(else_env):
        a, b = then_env.get(name), else_env.get(name)
        if a is None or b is None:
            env[name] = a or b
        elif a is b:
            env[name] = a
        else:
            merged = join_values(a, b)
            conc = concrete_branch[name].conc if concrete_branch is not None and name in concrete_branch else None
            env[name] = replace(merged, conc=conc)


def _exec_branch(walker: KernelWalker, body: list[ast.stmt], env: dict[str, V]) -> bool:
    """Run one branch of a runtime `if`; True when it returns from the kernel itself (an
    inlined helper's return carries its value, so it is left to propagate)."""
    if walker.call_depth:
        exec_body(walker, body, env)
        return False
    try:
        exec_body(walker, body, env)
    except Return:
        return True
    return False
