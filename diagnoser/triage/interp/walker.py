"""`KernelWalker` evaluates one kernel for one launch configuration and one sampled program id;
`walk_kernel` runs it for a few sampled program ids and merges what they say."""
from __future__ import annotations

import ast
import math
from dataclasses import replace
from typing import Any, Optional

import numpy as np

from .. import axisinfo as ax
from ..axisinfo import AxisInfo
from ..source import Kernel, SourceModule
from .numeric import axis_strides, np_binary, true_vector
from .report import (Access, Atomic, DivMod, Dot, Int64Op, KernelReport, LayoutOp, Loop, OuterProduct,
                     Reduction, Tile, Where)
from .values import (DTYPE_BITS, FLOAT_DTYPES, UNKNOWN, Binding, V, broadcast_shape, dims_for, dtype_name,
                     dtype_of, info_for, join_values, merge_dims, python_value, unknown_from)

REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"}
SCANS = {"cumsum", "cumprod", "associative_scan"}
ATOMICS = {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
           "atomic_xchg", "atomic_cas"}
ELEMENTWISE = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "abs", "sigmoid",
               "erf", "floor", "ceil", "fma", "fdiv", "div_rn", "umulhi", "softmax", "clamp",
               "tanh", "math", "log1p", "expm1", "cast"}


class _Return(Exception):
    def __init__(self, value: V) -> None:
        self.value = value


class _Budget(Exception):
    pass


class KernelWalker:
    """Evaluates one kernel for one launch configuration and one sampled program id."""

    MAX_STEPS = 20000

    def __init__(self, module: SourceModule, kernel: Kernel, bindings: dict[str, Binding],
                 num_warps: int = 4, pid: tuple[int, int, int] = (0, 0, 0),
                 grid: tuple[int, int, int] = (1, 1, 1)) -> None:
        self.module = module
        self.kernel = kernel
        self.bindings = bindings
        self.num_warps = num_warps
        self.pid = pid
        self.grid = grid
        self.report = KernelReport(kernel.name, num_warps)
        self.unspecialized = kernel.unspecialized("do_not_specialize")
        self.unaligned = kernel.unspecialized("do_not_specialize_on_alignment")
        self.loop_stack: list[int] = []
        self.steps = 0
        self.call_depth = 0
        self._accesses: dict[int, Access] = {}
        self._records: dict[tuple[str, int], Any] = {}
        self._concrete_offsets: dict[int, list[tuple[Any, Any, int]]] = {}
        self._int64_by_tag: dict[str, Int64Op] = {}
        self._reductions_by_tag: dict[str, Reduction] = {}

    # ------------------------------------------------------------------ entry
    def run(self) -> KernelReport:
        env = {name: self._param_value(name) for name in (p.name for p in self.kernel.params)}
        try:
            self._exec_body(self.kernel.node.body, env)
        except _Return:
            pass
        except _Budget:
            self.report.errors.append("walk stopped: step budget exhausted")
        except RecursionError:
            self.report.errors.append("walk stopped: recursion limit")
        self.report.accesses = list(self._accesses.values())
        for access in self.report.accesses:
            self._finish_access(access)
        dot_origins = frozenset().union(*(d.operand_origins for d in self.report.dots)) if self.report.dots else frozenset()
        for access in self.report.accesses:
            access.dot_operand = access.node_id in dot_origins
        for loop in self.report.loops.values():
            loop.loads = sum(1 for a in self.report.accesses if a.op == "load" and loop.loop_id in a.loops)
            loop.has_dot = any(loop.loop_id in d.loops for d in self.report.dots)
        return self.report

    def _param_value(self, name: str) -> V:
        param = self.kernel.param(name)
        binding = self.bindings.get(name)
        tag = frozenset({f"param:{name}"})
        if binding is None:
            if param is not None and param.default is not None:
                value = _literal(param.default)
                if value is not None:
                    return python_value(value, tag)
            if param is not None and param.constexpr:
                return V("unknown", deps=tag)
            return V("int", (), AxisInfo.scalar(1), 32, deps=tag)
        # The JIT's specialization: pointers 16-byte aligned, integers equal to 1 or divisible by
        # 16 are known to the compiler, unless the kernel opts out (do_not_specialize*).
        unspecialized = name in self.unspecialized
        unaligned = unspecialized or name in self.unaligned
        if binding.kind == "ptr":
            bits = DTYPE_BITS.get(binding.dtype, 32)
            info = AxisInfo.scalar(16 if binding.aligned and not unaligned else max(bits // 8, 1))
            return V("ptr", (), info, bits, conc=0, deps=tag, base=name, py=binding.dtype)
        if binding.kind == "constexpr":
            return python_value(binding.value, tag)
        if binding.kind == "int":
            value = int(binding.value)
            bits = 64 if abs(value) >= 2 ** 31 else 32
            if value == 1 and not unspecialized:
                return V("int", (), AxisInfo.of_constant(1), bits, conc=1, py=1, deps=tag)
            div = 16 if value % 16 == 0 and not unaligned else 1
            return V("int", (), AxisInfo.scalar(div), bits, conc=value, deps=tag)
        if binding.kind == "float":
            return V("float", (), None, 32, deps=tag)
        return V("none", deps=tag)


    # ------------------------------------------------------------- statements
    def _tick(self) -> None:
        self.steps += 1
        if self.steps > self.MAX_STEPS:
            raise _Budget()

    def _exec_body(self, body: list[ast.stmt], env: dict[str, V]) -> None:
        for stmt in body:
            self._exec(stmt, env)

    def _exec(self, stmt: ast.stmt, env: dict[str, V]) -> None:
        self._tick()
        if isinstance(stmt, ast.Assign):
            value = self._eval(stmt.value, env)
            for target in stmt.targets:
                self._assign(target, value, env)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self._assign(stmt.target, self._eval(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign):
            current = self._eval(stmt.target, env)
            value = self._binop(stmt.op, current, self._eval(stmt.value, env), stmt)
            self._assign(stmt.target, value, env)
        elif isinstance(stmt, ast.Expr):
            self._eval(stmt.value, env)
        elif isinstance(stmt, ast.For):
            self._exec_for(stmt, env)
        elif isinstance(stmt, ast.While):
            self._exec_while(stmt, env)
        elif isinstance(stmt, ast.If):
            self._exec_if(stmt, env)
        elif isinstance(stmt, ast.Return):
            raise _Return(self._eval(stmt.value, env) if stmt.value is not None else V("none"))
        elif isinstance(stmt, ast.With):
            self._exec_body(stmt.body, env)

    def _assign(self, target: ast.expr, value: V, env: dict[str, V]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if value.kind == "tuple" else ()
            for i, element in enumerate(target.elts):
                self._assign(element, items[i] if i < len(items) else UNKNOWN, env)

    def _exec_for(self, stmt: ast.For, env: dict[str, V]) -> None:
        loop_id = id(stmt)
        kind, bounds, num_stages = self._loop_spec(stmt.iter, env)
        trip = None
        if bounds is not None and all(isinstance(b.conc, (int, np.integer)) for b in bounds):
            start, stop, step = (int(b.conc) for b in bounds)
            trip = len(range(start, stop, step)) if step else None
        loop = self.report.loops.setdefault(loop_id, Loop(loop_id, stmt.lineno, kind, num_stages, trip,
                                                          len(self.loop_stack)))
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
        self.loop_stack.append(loop_id)
        try:
            self._assign(stmt.target, iv, env)
            self._exec_body(stmt.body, env)
            # Second pass: loop-carried values joined with their initial state, the way the
            # dataflow analysis reaches its fixpoint; concrete values are those of iteration 2.
            carried = self._join_carried(before, env)
            self._assign(stmt.target, second, carried)
            self._exec_body(stmt.body, carried)
            final = self._join_carried(before, carried, keep_concrete=False)
        finally:
            self.loop_stack.pop()
        env.clear()
        env.update(final)

    def _join_carried(self, before: dict[str, V], after: dict[str, V], keep_concrete: bool = True) -> dict[str, V]:
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

    def _loop_spec(self, node: ast.expr, env: dict[str, V]):
        if not isinstance(node, ast.Call):
            return "range", None, None
        name = self.module.canonical(node.func) or ""
        kind = {"range": "range", "tl.range": "tl.range", "tl.static_range": "static_range"}.get(name)
        if kind is None:
            self._eval(node, env)
            return "range", None, None
        args = [self._eval(a, env) for a in node.args]
        num_stages = None
        for kw in node.keywords:
            if kw.arg == "num_stages":
                num_stages = self._eval(kw.value, env).py
        if len(args) == 1:
            bounds = (python_value(0), args[0], python_value(1))
        elif len(args) == 2:
            bounds = (args[0], args[1], python_value(1))
        elif len(args) >= 3:
            bounds = (args[0], args[1], args[2])
            self._note_tile_params(args[2])
        else:
            bounds = None
        return kind, bounds, num_stages

    def _exec_while(self, stmt: ast.While, env: dict[str, V]) -> None:
        loop_id = id(stmt)
        self.report.loops.setdefault(loop_id, Loop(loop_id, stmt.lineno, "while", None, None, len(self.loop_stack)))
        before = dict(env)
        self.loop_stack.append(loop_id)
        try:
            self._eval(stmt.test, env)
            self._exec_body(stmt.body, env)
        finally:
            self.loop_stack.pop()
        final = self._join_carried(before, env, keep_concrete=False)
        env.clear()
        env.update(final)

    def _exec_if(self, stmt: ast.If, env: dict[str, V]) -> None:
        test = self._eval(stmt.test, env)
        if test.py is not None and not test.is_tensor:
            self._exec_body(stmt.body if test.py else stmt.orelse, env)
            return
        then_env, else_env = dict(env), dict(env)
        then_returned = self._exec_branch(stmt.body, then_env)
        else_returned = self._exec_branch(stmt.orelse, else_env)
        if then_returned and else_returned:
            raise _Return(V("none"))
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

    def _exec_branch(self, body: list[ast.stmt], env: dict[str, V]) -> bool:
        """Run one branch of a runtime `if`; True when it returns from the kernel itself (an
        inlined helper's return carries its value, so it is left to propagate)."""
        if self.call_depth:
            self._exec_body(body, env)
            return False
        try:
            self._exec_body(body, env)
        except _Return:
            return True
        return False

    # ------------------------------------------------------------ expressions
    def _eval(self, node: Optional[ast.expr], env: dict[str, V]) -> V:
        self._tick()
        if node is None:
            return V("none")
        method = getattr(self, "_eval_" + type(node).__name__, None)
        if method is None:
            return UNKNOWN
        try:
            return method(node, env)
        except (_Return, _Budget, RecursionError):
            raise
        except Exception as error:  # a construct this walk does not model: stay pessimistic
            self.report.errors.append(f"line {getattr(node, 'lineno', '?')}: {type(error).__name__}: {error}")
            return UNKNOWN

    def _eval_Constant(self, node: ast.Constant, env: dict[str, V]) -> V:
        return python_value(node.value)

    def _eval_Name(self, node: ast.Name, env: dict[str, V]) -> V:
        if node.id in env:
            return env[node.id]
        if node.id in self.module.constants:
            return python_value(self.module.constants[node.id])
        if node.id in ("True", "False"):
            return python_value(node.id == "True")
        return UNKNOWN

    def _eval_Tuple(self, node: ast.Tuple, env: dict[str, V]) -> V:
        items = tuple(self._eval(e, env) for e in node.elts)
        py = tuple(i.py for i in items) if all(i.py is not None for i in items) else None
        return V("tuple", items=items, py=py)

    _eval_List = _eval_Tuple

    def _eval_IfExp(self, node: ast.IfExp, env: dict[str, V]) -> V:
        test = self._eval(node.test, env)
        if test.py is not None and not test.is_tensor:
            return self._eval(node.body if test.py else node.orelse, env)
        a, b = self._eval(node.body, env), self._eval(node.orelse, env)
        return join_values(a, b)

    def _eval_Attribute(self, node: ast.Attribute, env: dict[str, V]) -> V:
        name = self.module.canonical(node)
        if name and name.startswith("tl."):
            short = name[3:]
            if short in DTYPE_BITS:
                return V("dtype", py=short)
            return V("unknown", py=name)
        base = self._eval(node.value, env)
        if node.attr == "dtype":
            if base.kind == "ptr":
                return V("dtype", py=base.py or "fp32")
            return V("dtype", py=dtype_of(base))
        if node.attr == "shape":
            return python_value(None) if not base.shape else V("tuple", items=tuple(python_value(s) for s in base.shape), py=base.shape)
        if node.attr == "T":
            return self._layout_op("trans", base, node, tuple(reversed(base.shape)))
        if node.attr == "value":
            return base
        return V("unknown", py=None, deps=base.deps)

    def _eval_Subscript(self, node: ast.Subscript, env: dict[str, V]) -> V:
        base = self._eval(node.value, env)
        index = node.slice
        elements = index.elts if isinstance(index, ast.Tuple) else [index]
        if base.kind == "tuple":
            idx = self._eval(index, env).py
            if isinstance(idx, int) and -len(base.items) <= idx < len(base.items):
                return base.items[idx]
            return UNKNOWN
        info = base.info
        shape = list(base.shape)
        conc = base.conc
        conc_index = []
        d = 0
        new_shape: list[int] = []
        old_dims = base.dims if len(base.dims) == len(shape) else tuple(frozenset() for _ in shape)
        new_dims: list = []
        ok = True
        for element in elements:
            if isinstance(element, ast.Constant) and element.value is None:
                new_shape.append(1)
                new_dims.append(frozenset())
                if info is not None:
                    info = ax.expand_dims(info, len(new_shape) - 1)
                conc_index.append(None)
            elif isinstance(element, ast.Slice) and element.lower is None and element.upper is None:
                if d < len(shape):
                    new_shape.append(shape[d])
                    new_dims.append(old_dims[d])
                d += 1
                conc_index.append(slice(None))
            else:
                ok = False
        if not ok:
            return V(base.kind, tuple(shape), None, base.bits, deps=base.deps, base=base.base, origins=base.origins)
        new_shape.extend(shape[d:])
        new_dims.extend(old_dims[d:])
        if isinstance(conc, np.ndarray):
            try:
                conc = conc[tuple(conc_index)]
            except IndexError:
                conc = None
        inserted = [i for i, e in enumerate(elements) if isinstance(e, ast.Constant) and e.value is None]
        op = f"expand:{inserted[0]}" if len(inserted) == 1 and len(elements) == len(new_shape) else ""
        if len(inserted) == 1 and len(shape) == 1 and len(new_shape) == 2:
            self._note_loaded_vector_broadcast(base, node, along=1 - inserted[0])
        return replace(base, shape=tuple(new_shape), info=info, conc=conc, dims=tuple(new_dims), op=op)

    def _note_loaded_vector_broadcast(self, value: V, node: ast.AST, along: int) -> None:
        """A vector loaded in this loop iteration, expanded to meet a tile: it was loaded in its
        own 1-D layout and must be converted to a slice of the tile's layout. RemoveLayoutConversions
        rematerialises the load in the slice layout instead only when it is cheap (fewer elements
        than threads: isExpensiveLoadOrStore), so otherwise the conversion stays in the loop."""
        if not self.loop_stack or math.prod(value.shape) < 32 * self.num_warps:
            return
        loop = self.loop_stack[-1]
        loads = [self._accesses.get(origin) for origin in value.origins]
        vector = next((a for a in loads if a is not None and a.op == "load" and len(a.shape) == 1 and loop in a.loops),
                      None)
        if vector is not None:
            self._layout_op("broadcast", value, node, value.shape)
            record = self._records[self._record_key("layout", node)]
            record.vector, record.axis = vector, along

    def _eval_UnaryOp(self, node: ast.UnaryOp, env: dict[str, V]) -> V:
        operand = self._eval(node.operand, env)
        if isinstance(node.op, ast.USub):
            zero = python_value(0)
            if operand.kind == "float":
                return replace(operand, py=-operand.py if operand.py is not None else None)
            return self._arith("sub", zero, operand, node)
        if isinstance(node.op, ast.Not):
            if operand.py is not None and not operand.is_tensor:
                return python_value(not operand.py)
            return V("bool", operand.shape, None, 1, deps=operand.deps)
        if isinstance(node.op, ast.Invert):
            return V("bool", operand.shape, None, 1, deps=operand.deps)
        return operand

    def _eval_BoolOp(self, node: ast.BoolOp, env: dict[str, V]) -> V:
        values = [self._eval(v, env) for v in node.values]
        if all(v.py is not None and not v.is_tensor for v in values):
            result = values[0].py
            for v in values[1:]:
                result = (result and v.py) if isinstance(node.op, ast.And) else (result or v.py)
            return python_value(result)
        deps = frozenset().union(*(v.deps for v in values))
        return V("bool", (), None, 1, deps=deps)

    def _eval_BinOp(self, node: ast.BinOp, env: dict[str, V]) -> V:
        return self._binop(node.op, self._eval(node.left, env), self._eval(node.right, env), node)

    def _eval_Compare(self, node: ast.Compare, env: dict[str, V]) -> V:
        left = self._eval(node.left, env)
        result = None
        for op, comparator in zip(node.ops, node.comparators):
            right = self._eval(comparator, env)
            current = self._compare(op, left, right, node)
            result = current if result is None else self._logical("and", result, current)
            left = right
        return result or UNKNOWN

    def _eval_Call(self, node: ast.Call, env: dict[str, V]) -> V:
        name = self.module.canonical(node.func) or ""
        if isinstance(node.func, ast.Attribute) and not name.startswith(("tl.", "triton.")):
            receiver = self._eval(node.func.value, env)
            if receiver.kind != "unknown" or receiver.py is None:
                return self._method(node.func.attr, receiver, node, env)
        short = name.split(".")[-1]
        if name.startswith("tl.") or name.startswith("triton."):
            return self._builtin(name, short, node, env)
        if short in self.module.kernels and self.call_depth < 8:
            return self._inline(self.module.kernels[short], node, env)
        if short in ("min", "max") and node.args:
            args = [self._eval(a, env) for a in node.args]
            if all(a.py is not None for a in args):
                return python_value((min if short == "min" else max)(a.py for a in args))
            if any("pid" in a.deps for a in args):
                self.report.pid_clamped = True
            if len(args) == 2 and all(a.kind == "int" and not a.is_tensor for a in args):
                info = ax.binary(short, args[0].info or AxisInfo.scalar(), args[1].info or AxisInfo.scalar(), ())
                conc = np_binary(short, args[0].conc, args[1].conc)
                return V("int", (), info, max(a.bits for a in args), conc, deps=args[0].deps | args[1].deps)
        if short in ("int", "float", "bool") and node.args:
            return self._eval(node.args[0], env)
        if short == "len" and node.args:
            value = self._eval(node.args[0], env)
            return python_value(len(value.items)) if value.kind == "tuple" else UNKNOWN
        args = [self._eval(a, env) for a in node.args]
        return unknown_from(args)

    # -------------------------------------------------------------- helpers
    def _kw(self, node: ast.Call, name: str, position: Optional[int] = None) -> Optional[ast.expr]:
        for kw in node.keywords:
            if kw.arg == name:
                return kw.value
        if position is not None and position < len(node.args):
            return node.args[position]
        return None
    def _record_key(self, kind: str, node: ast.AST) -> tuple[str, int]:
        return (kind, id(node))

    def _inline(self, callee: Kernel, node: ast.Call, env: dict[str, V]) -> V:
        args = [self._eval(a, env) for a in node.args]
        local: dict[str, V] = {}
        for param, value in zip(callee.params, args):
            local[param.name] = value
        for kw in node.keywords:
            if kw.arg:
                local[kw.arg] = self._eval(kw.value, env)
        for param in callee.params:
            if param.name not in local and param.default is not None:
                local[param.name] = python_value(_literal(param.default))
        self.call_depth += 1
        try:
            self._exec_body(callee.node.body, local)
        except _Return as ret:
            return ret.value
        finally:
            self.call_depth -= 1
        return V("none")

    def _binop(self, op: ast.operator, a: V, b: V, node: ast.AST) -> V:
        if a.kind == "tuple" or b.kind == "tuple":
            return UNKNOWN
        if a.py is not None and b.py is not None and not a.is_tensor and not b.is_tensor \
                and a.kind not in ("ptr",) and b.kind not in ("ptr",) \
                and isinstance(a.py, (int, float)) and isinstance(b.py, (int, float)):
            try:
                value = _PYOPS[type(op)](a.py, b.py)
                return python_value(value, a.deps | b.deps)
            except (KeyError, ZeroDivisionError, OverflowError, ValueError):
                pass
        name = _OPNAMES.get(type(op))
        if name is None:
            return unknown_from([a, b])
        if name in ("div", "rem") and (a.kind == "int" or a.kind == "unknown") and (b.kind in ("int", "unknown")):
            self._record_divmod(node, "//" if name == "div" else "%", a, b)
        if isinstance(op, ast.Div) or a.kind == "float" or b.kind == "float":
            shape = broadcast_shape(a.shape, b.shape)
            produced = ""
            if isinstance(op, ast.Mult) and _is_outer_product(a.shape, b.shape):
                # a[:, :, None] * b[None, :, :] is what Combine turns into tt.dot when summed over axis 1
                produced = "outer_dot" if (a.op, b.op) == ("expand:2", "expand:0") else "outer"
                key = self._record_key("outer", node)
                if key not in self._records:
                    record = OuterProduct(id(node), getattr(node, "lineno", 0), shape, tuple(self.loop_stack))
                    self._records[key] = record
                    self.report.outer_products.append(record)
            elif isinstance(op, ast.Mult) and _shared_matvec_axis(a, b) is not None:
                produced = f"matvec:{_shared_matvec_axis(a, b)}"
            deps = a.deps | b.deps
            if isinstance(op, (ast.Sub, ast.Add)) and len(shape) == 3 and _is_outer_product(a.shape, b.shape):
                # a[:, None, :] - b[None, :, :]: every pair of rows meets along the axes both span; a
                # sum over such an axis (of squares: a distance) is a matrix product in disguise
                deps = deps | {f"pairwise:{axis}" for axis, (x, y) in enumerate(zip(a.shape, b.shape)) if x > 1 and y > 1}
            return V("float", shape, None, 32, deps=deps, origins=a.origins | b.origins, op=produced,
                     dims=merge_dims(shape, a, b))
        if name in ("and", "or", "xor") and (a.kind == "bool" or b.kind == "bool"):
            return self._logical(name, a, b)
        return self._arith(name, a, b, node)

    def _arith(self, name: str, a: V, b: V, node: ast.AST) -> V:
        shape = broadcast_shape(a.shape, b.shape)
        if a.kind == "ptr" or b.kind == "ptr":
            ptr, off = (a, b) if a.kind == "ptr" else (b, a)
            if name not in ("add", "sub"):
                return unknown_from([a, b])
            if name == "sub":
                off = self._arith("sub", python_value(0), off, node)
            info = ax.binary("addptr", info_for(ptr, shape), info_for(off, shape), shape, max(ptr.bits // 8, 1))
            conc = np_binary("add", ptr.conc, off.conc)
            off = self._note_int64(node, off, shape)
            return V("ptr", shape, info, ptr.bits, conc, py=ptr.py, deps=ptr.deps | off.deps, base=ptr.base,
                     origins=ptr.origins | off.origins, dims=merge_dims(shape, ptr, off))
        info = ax.binary(name, info_for(a, shape), info_for(b, shape), shape)
        bits = max(a.bits if a.kind == "int" else 32, b.bits if b.kind == "int" else 32)
        conc = np_binary(name, a.conc, b.conc)
        result = V("int", shape, info, bits, conc, deps=a.deps | b.deps, origins=a.origins | b.origins,
                   dims=merge_dims(shape, a, b))
        if bits == 64:
            result = self._note_int64(node, result, shape)
        return result

    def _logical(self, name: str, a: V, b: V) -> V:
        shape = broadcast_shape(a.shape, b.shape)
        info = ax.binary(name, info_for(a, shape), info_for(b, shape), shape)
        conc = np_binary(name, a.conc, b.conc)
        return V("bool", shape, info, 1, conc, deps=a.deps | b.deps | {"cmp_int"} & (a.deps | b.deps),
                 origins=a.origins | b.origins, dims=merge_dims(shape, a, b))

    def _compare(self, op: ast.cmpop, a: V, b: V, node: Optional[ast.AST] = None) -> V:
        if a.py is not None and b.py is not None and not a.is_tensor and not b.is_tensor:
            try:
                return python_value(_CMPOPS[type(op)](a.py, b.py))
            except (KeyError, TypeError):
                pass
        shape = broadcast_shape(a.shape, b.shape)
        int_compare = a.kind in ("int",) and b.kind in ("int",)
        info = ax.binary("cmp", info_for(a, shape), info_for(b, shape), shape)
        conc = None
        if a.conc is not None and b.conc is not None and type(op) in _CMPOPS:
            try:
                conc = _CMPOPS[type(op)](np.asarray(a.conc), np.asarray(b.conc))
            except (TypeError, ValueError):
                conc = None
        deps = a.deps | b.deps | ({"cmp_int"} if int_compare and shape else set())
        self._note_bounds(a, b)
        result = V("bool", shape, info, 1, conc, deps=frozenset(deps), origins=a.origins | b.origins,
                   dims=merge_dims(shape, a, b))
        if node is not None and int_compare and shape and 64 in (a.bits, b.bits):
            result = self._note_int64(node, result, shape, "compare")
        return result

    def _note_int64(self, node: ast.AST, value: V, shape: tuple[int, ...], kind: str = "arith") -> V:
        """Record 64-bit integer work and tag the value, so that an access it reaches marks it as
        index math (`_access`)."""
        if value.kind not in ("int", "bool") or (value.kind == "int" and value.bits != 64):
            return value
        key = self._record_key("int64", node)
        if key not in self._records:
            record = Int64Op(id(node), getattr(node, "lineno", 0), bool(shape), tuple(self.loop_stack),
                             self.module.segment(node)[:120], kind, "load" in value.deps)
            self._records[key] = record
            self.report.int64_ops.append(record)
            self._int64_by_tag[f"i64:{id(node)}"] = record
        return replace(value, deps=value.deps | {f"i64:{id(node)}"})

    def _record_divmod(self, node: ast.AST, op: str, a: V, b: V) -> None:
        key = self._record_key("divmod", node)
        if key in self._records:
            return
        divisor = b.info.constant if b.info is not None and b.info.constant is not None else (b.py if isinstance(b.py, int) else None)
        per_element = a.is_tensor or b.is_tensor
        record = DivMod(id(node), getattr(node, "lineno", 0), op, per_element, tuple(self.loop_stack), divisor,
                        shape=broadcast_shape(a.shape, b.shape))
        self._records[key] = record
        self.report.divmods.append(record)

    def _layout_op(self, op: str, value: V, node: ast.AST, shape: tuple[int, ...]) -> V:
        key = self._record_key("layout", node)
        if key not in self._records:
            record = LayoutOp(id(node), getattr(node, "lineno", 0), op, tuple(self.loop_stack), value.origins)
            self._records[key] = record
            self.report.layout_ops.append(record)
        return V(value.kind, shape, AxisInfo.pessimistic(max(len(shape), 1)) if value.info else None, value.bits,
                 deps=value.deps | {"layout", f"layout:{id(node)}"}, base=value.base, origins=value.origins)

    def _mark_layout_use(self, value: V, use: str) -> None:
        ids = {int(tag.split(":")[1]) for tag in value.deps if tag.startswith("layout:")}
        for record in self.report.layout_ops:
            if record.node_id in ids:
                setattr(record, use, True)

    # ------------------------------------------------------------- methods
    def _method(self, attr: str, receiver: V, node: ast.Call, env: dict[str, V]) -> V:
        args = [self._eval(a, env) for a in node.args]
        if attr == "to":
            target = args[0] if args else (self._eval(self._kw(node, "dtype"), env))
            return self._cast(receiver, dtype_name(target), node)
        if attr in REDUCTIONS or attr in SCANS:
            axis_node = self._kw(node, "axis", 0)
            axis = self._eval(axis_node, env).py if axis_node is not None else None
            return self._reduce(attr, receiver, axis, node)
        if attr in ("trans", "permute"):
            return self._layout_op("trans", receiver, node, tuple(reversed(receiver.shape)))
        if attr in ("reshape", "view"):
            shape = tuple(a.py for a in args) if args and all(isinstance(a.py, int) for a in args) else receiver.shape
            if len(args) == 1 and args[0].kind == "tuple" and args[0].py is not None:
                shape = tuple(args[0].py)
            return self._layout_op("reshape", receiver, node, shape)
        if attr in ("item",):
            return receiver
        return replace(unknown_from([receiver] + args), kind=receiver.kind if receiver.kind in ("float", "int") else "unknown")

    def _cast(self, value: V, dtype: Optional[str], node: ast.AST) -> V:
        if dtype is None:
            return value
        bits = DTYPE_BITS.get(dtype, 32)
        if dtype in FLOAT_DTYPES:
            return V("float", value.shape, None, bits, deps=value.deps | ({"cast_float"} if value.kind in ("int", "bool") else set()),
                     origins=value.origins, dims=value.dims)
        if value.kind in ("int", "bool", "unknown"):
            result = V("int", value.shape, value.info or AxisInfo.pessimistic(max(value.rank, 1)), bits, value.conc,
                       deps=value.deps, origins=value.origins, dims=value.dims)
            if bits == 64:
                result = self._note_int64(node, result, value.shape, "cast")
            return result
        return V("int", value.shape, AxisInfo.pessimistic(max(value.rank, 1)), bits, deps=value.deps, origins=value.origins)

    # ------------------------------------------------------------- builtins
    def _builtin(self, name: str, short: str, node: ast.Call, env: dict[str, V]) -> V:
        if name == "tl.program_id":
            axis = self._eval(self._kw(node, "axis", 0), env).py or 0
            return V("int", (), AxisInfo.scalar(1), 32, conc=self.pid[int(axis)], deps=frozenset({"pid", f"pid{axis}"}))
        if name == "tl.num_programs":
            axis = self._eval(self._kw(node, "axis", 0), env).py or 0
            return V("int", (), AxisInfo.scalar(1), 32, conc=self.grid[int(axis)], deps=frozenset({"num_programs"}))
        if name == "tl.arange":
            start_v = self._eval(self._kw(node, "start", 0), env)
            end_v = self._eval(self._kw(node, "end", 1), env)
            self._note_tile_params(start_v, end_v)
            start, end = start_v.py, end_v.py
            if not isinstance(start, int) or not isinstance(end, int):
                return V("int", (), AxisInfo.pessimistic(), 32, deps=frozenset({"arange"}))
            return V("int", (end - start,), AxisInfo.make_range(start, end), 32,
                     conc=np.arange(start, end, dtype=np.int64), deps=frozenset({"arange"}),
                     dims=(self._constexpr_deps(end_v),))
        if name in ("tl.zeros", "tl.full"):
            shape_v = self._eval(self._kw(node, "shape", 0), env)
            self._note_tile_params(*shape_v.items)
            shape = tuple(shape_v.py) if shape_v.kind == "tuple" and shape_v.py is not None else ()
            dtype = dtype_name(self._eval(self._kw(node, "dtype", 2 if short == "full" else 1), env)) or "fp32"
            value = self._eval(self._kw(node, "value", 1), env).py if short == "full" else 0
            if shape:
                self.report.tiles.append(Tile(node.lineno, shape, DTYPE_BITS.get(dtype, 32), "zeros"))
            if dtype in FLOAT_DTYPES:
                return V("float", shape, None, DTYPE_BITS.get(dtype, 32))
            const = value if isinstance(value, int) else None
            info = AxisInfo.of_constant(const, shape) if const is not None else AxisInfo.pessimistic(max(len(shape), 1))
            conc = np.full(shape, const, dtype=np.int64) if const is not None and shape else const
            return V("int", shape, info, DTYPE_BITS.get(dtype, 32), conc)
        if name in ("tl.load",):
            return self._load(node, env)
        if name in ("tl.store",):
            return self._store(node, env)
        if short in ATOMICS and name.startswith("tl."):
            return self._atomic(short, node, env)
        if name == "tl.dot":
            return self._dot(node, env)
        if short in REDUCTIONS or short in SCANS:
            value = self._eval(self._kw(node, "input", 0), env)
            axis_node = self._kw(node, "axis", 1)
            axis = self._eval(axis_node, env).py if axis_node is not None else None
            return self._reduce(short, value, axis, node)
        if name == "tl.where":
            cond = self._eval(self._kw(node, "condition", 0), env)
            a = self._eval(self._kw(node, "x", 1), env)
            b = self._eval(self._kw(node, "y", 2), env)
            return self._where(cond, a, b, node)
        if name == "tl.swizzle2d":
            self.report.pid_clamped = True
            args = [self._eval(a, env) for a in node.args]
            items = tuple(V("int", (), AxisInfo.scalar(1), 32, deps=frozenset({"pid"}).union(*(a.deps for a in args)))
                          for _ in range(2))
            return V("tuple", items=items)
        if name in ("tl.maximum", "tl.minimum"):
            a, b = self._eval(node.args[0], env), self._eval(node.args[1], env)
            if not a.is_tensor and not b.is_tensor and ("pid" in a.deps or "pid" in b.deps):
                self.report.pid_clamped = True
            if a.kind == "int" and b.kind == "int":
                shape = broadcast_shape(a.shape, b.shape)
                info = ax.binary("max" if short == "maximum" else "min", info_for(a, shape), info_for(b, shape), shape)
                conc = np_binary("max" if short == "maximum" else "min", a.conc, b.conc)
                return V("int", shape, info, max(a.bits, b.bits), conc, deps=a.deps | b.deps)
            return unknown_from([a, b])
        if name in ("tl.multiple_of", "tl.max_contiguous", "tl.max_constancy"):
            value = self._eval(node.args[0], env)
            hint = self._eval(node.args[1], env).py if len(node.args) > 1 else None
            if isinstance(hint, (list, tuple)):
                hint = tuple(hint) if all(isinstance(h, int) for h in hint) else None
            if value.info is None or not isinstance(hint, (int, tuple)):
                return value
            info = ax.with_hint(value.info, **{
                "tl.multiple_of": {"divisibility": hint},
                "tl.max_contiguous": {"contiguity": hint},
                "tl.max_constancy": {"constancy": hint},
            }[name])
            return replace(value, info=info, deps=value.deps | {"hint"})
        if name in ("tl.trans", "tl.permute"):
            value = self._eval(node.args[0], env)
            return self._layout_op("trans", value, node, tuple(reversed(value.shape)))
        if name in ("tl.reshape", "tl.view"):
            value = self._eval(node.args[0], env)
            shape_v = self._eval(self._kw(node, "shape", 1), env)
            shape = tuple(shape_v.py) if shape_v.kind == "tuple" and shape_v.py is not None else value.shape
            return self._layout_op("reshape", value, node, shape)
        if name == "tl.broadcast_to":
            value = self._eval(node.args[0], env)
            shape_v = self._eval(node.args[1], env) if len(node.args) > 1 else V("none")
            shape = tuple(shape_v.py) if shape_v.kind == "tuple" and shape_v.py is not None else value.shape
            info = info_for(value, shape) if value.info is not None else None
            conc = np.broadcast_to(value.conc, shape) if isinstance(value.conc, np.ndarray) else value.conc
            return replace(value, shape=shape, info=info, conc=conc)
        if name in ("tl.cdiv", "triton.cdiv"):
            a, b = self._eval(node.args[0], env), self._eval(node.args[1], env)
            if isinstance(a.py, int) and isinstance(b.py, int) and b.py:
                return python_value(-(-a.py // b.py))
            conc = -(-a.conc // b.conc) if isinstance(a.conc, (int, np.integer)) and isinstance(b.conc, (int, np.integer)) and b.conc else None
            return V("int", (), AxisInfo.scalar(1), max(a.bits, b.bits), conc, deps=a.deps | b.deps)
        if name in ("triton.next_power_of_2",):
            value = self._eval(node.args[0], env).py
            return python_value(1 << (int(value) - 1).bit_length() if isinstance(value, int) and value > 0 else None)
        if name == "tl.make_block_ptr":
            base = self._eval(self._kw(node, "base", 0), env)
            block_shape = self._eval(self._kw(node, "block_shape", 4), env)
            shape = tuple(block_shape.py) if block_shape.kind == "tuple" and block_shape.py is not None else ()
            strides = self._eval(self._kw(node, "strides", 2), env)
            order = self._eval(self._kw(node, "order", 5), env)
            args = [self._eval(a, env) for a in node.args[1:]] + [self._eval(k.value, env) for k in node.keywords]
            deps = base.deps.union(*(a.deps for a in args)) if args else base.deps
            concrete = tuple(int(i.conc) if isinstance(i.conc, (int, np.integer)) else None for i in strides.items)
            return V("blockptr", shape, None, base.bits, deps=deps, base=base.base, py=base.py,
                     strides=concrete if len(concrete) == len(shape) else (),
                     order=tuple(order.py) if order.kind == "tuple" and order.py is not None else ())
        if name == "tl.advance":
            return self._eval(node.args[0], env)
        if name in ("tl.static_assert", "tl.device_print", "tl.debug_barrier", "tl.static_print", "tl.device_assert"):
            return V("none")
        if name in ("tl.cast",):
            value = self._eval(node.args[0], env)
            return self._cast(value, dtype_name(self._eval(self._kw(node, "dtype", 1), env)), node)
        args = [self._eval(a, env) for a in node.args] + [self._eval(k.value, env) for k in node.keywords]
        result = unknown_from(args)
        if short in ELEMENTWISE or name.startswith("tl.math") or name.startswith("tl.extra"):
            return replace(result, kind="float", info=None)
        return result

    def _note_bounds(self, a: V, b: V) -> None:
        """`offs < n`: the tile constexprs sizing `offs` are masked against the argument `n`."""
        for tensor, scalar in ((a, b), (b, a)):
            if not tensor.is_tensor or scalar.is_tensor:
                continue
            tiles = frozenset().union(*tensor.dims) if tensor.dims else frozenset()
            sizes = {tag[len("param:"):] for tag in scalar.deps if tag.startswith("param:")}
            for size in sizes:
                param = self.kernel.param(size)
                if param is not None and not param.constexpr:
                    self.report.bounds.update((tile, size) for tile in tiles)

    def _constexpr_deps(self, value: V) -> frozenset:
        names = {tag[len("param:"):] for tag in value.deps if tag.startswith("param:")}
        return frozenset(n for n in names if (p := self.kernel.param(n)) is not None and p.constexpr)

    def _note_tile_params(self, *values: V) -> None:
        for value in values:
            for tag in value.deps:
                if tag.startswith("param:"):
                    name = tag[len("param:"):]
                    param = self.kernel.param(name)
                    if param is not None and param.constexpr:
                        self.report.tile_params.add(name)

    def _where(self, cond: V, a: V, b: V, node: ast.Call) -> V:
        shape = broadcast_shape(cond.shape, broadcast_shape(a.shape, b.shape))
        key = self._record_key("where", node)
        if key not in self._records:
            record = Where(id(node), node.lineno, "cmp_int" in cond.deps, shape)
            self._records[key] = record
            self.report.wheres.append(record)
        if a.kind == "int" and b.kind in ("int",) or (a.kind == "int" and b.py is not None and isinstance(b.py, int)):
            info = ax.select(info_for(cond, shape), info_for(a, shape), info_for(b, shape), len(shape))
            conc = None
            if cond.conc is not None and a.conc is not None and b.conc is not None:
                try:
                    conc = np.where(cond.conc, a.conc, b.conc)
                except ValueError:
                    conc = None
            return V("int", shape, info, max(a.bits, b.bits), conc, deps=cond.deps | a.deps | b.deps,
                     origins=a.origins | b.origins, dims=merge_dims(shape, cond, a, b))
        kind = "float" if "float" in (a.kind, b.kind) else a.kind
        return V(kind, shape, None, 32, deps=cond.deps | a.deps | b.deps, origins=a.origins | b.origins | cond.origins,
                 dims=merge_dims(shape, cond, a, b))

    def _reduce(self, op: str, value: V, axis: Optional[int], node: ast.Call) -> V:
        shape = value.shape
        if axis is None or not shape:
            out_shape: tuple[int, ...] = ()
        else:
            axis = axis % len(shape) if shape else 0
            out_shape = shape[:axis] + shape[axis + 1:] if op not in SCANS else shape
        cross_warp = self._cross_warp(value, axis)
        key = self._record_key("reduce", node)
        if (value.op == "outer_dot" and op == "sum" and axis == 1 and len(shape) == 3 and shape[0] >= 16
                and shape[2] >= 16 and value.bits <= 32):
            return self._combined_dot(value, node)
        if key not in self._records:
            record = Reduction(id(node), node.lineno, op, axis, shape, tuple(self.loop_stack), cross_warp,
                               from_dot="dot" in value.deps, outer_product=value.op.startswith("outer"),
                               pairwise=op == "sum" and f"pairwise:{axis}" in value.deps,
                               shared_matvec=op == "sum" and value.op == f"matvec:{axis}")
            self._mark_layout_use(value, "feeds_other")
            self._records[key] = record
            self.report.reductions.append(record)
            self._reductions_by_tag[f"reduce:{id(node)}"] = record
        kind = "int" if op in ("argmax", "argmin") else value.kind
        dims = dims_for(value, shape)
        out_dims = dims if op in SCANS else (() if axis is None else dims[:axis] + dims[axis + 1:])
        return V(kind, out_shape, AxisInfo.pessimistic(max(len(out_shape), 1)) if kind == "int" else None,
                 32 if kind == "int" else value.bits, deps=value.deps | {"reduce", f"reduce:{id(node)}"},
                 origins=value.origins,
                 dims=out_dims)

    def _combined_dot(self, product: V, node: ast.Call) -> V:
        """tl.sum(a[:, :, None] * b[None, :, :], axis=1): the Combine pass (CombineBroadcastMulReduce
        in lib/Dialect/Triton/Transforms/Combine.cpp) rewrites it into a tf32 tt.dot."""
        m, k, n = product.shape
        dims = dims_for(product, product.shape)
        key = self._record_key("dot", node)
        if key not in self._records:
            record = Dot(id(node), node.lineno, (m, k), (k, n), product.bits, product.bits, "tf32",
                         tuple(self.loop_stack), product.origins, m_params=dims[0], n_params=dims[2], k_params=dims[1])
            self._records[key] = record
            self.report.dots.append(record)
        self.report.tiles.append(Tile(node.lineno, (m, n), 32, "acc"))
        return V("float", (m, n), None, 32, deps=product.deps | {"dot"}, dims=(dims[0], dims[2]))

    def _cross_warp(self, value: V, axis: Optional[int]) -> bool:
        """Does reducing `value` along `axis` need shared memory and a barrier between warps?"""
        shape = value.shape
        if not shape or self.num_warps <= 1:
            return False
        if "dot" in value.deps and len(shape) == 2:
            # MMA accumulators tile M across warps (warpsPerTile along dim 0 on Hopper).
            return axis is None or axis == 0
        width_order = None
        for origin in value.origins:
            access = self._accesses.get(origin)
            if access is not None and access.shape == shape:
                width_order = (list(access.width.order), access.width.per_thread)
                break
        order, per_thread = width_order or (list(reversed(range(len(shape)))), 1)
        size_per_thread = [1] * len(shape)
        size_per_thread[order[0]] = per_thread
        _, wpc = ax.blocked_layout(shape, size_per_thread, order, self.num_warps)
        if axis is None:
            return math.prod(wpc) > 1
        return wpc[axis] > 1

    def _dot(self, node: ast.Call, env: dict[str, V]) -> V:
        a = self._eval(self._kw(node, "input", 0), env)
        b = self._eval(self._kw(node, "other", 1), env)
        acc_node = self._kw(node, "acc", 2)
        acc = self._eval(acc_node, env) if acc_node is not None else None
        precision = None
        prec_node = self._kw(node, "input_precision")
        if prec_node is not None:
            precision = self._eval(prec_node, env).py
        tf32_node = self._kw(node, "allow_tf32")
        if tf32_node is not None and self._eval(tf32_node, env).py is False:
            precision = "ieee"
        a_shape, b_shape = a.shape, b.shape
        out_shape = a_shape[:-1] + b_shape[-1:] if a_shape and b_shape else ()
        key = self._record_key("dot", node)
        origins = a.origins | b.origins
        if key not in self._records:
            record = Dot(id(node), node.lineno, a_shape, b_shape, a.bits, b.bits, precision, tuple(self.loop_stack),
                         origins, a.origins, *self._dot_dims(a, b))
            self._records[key] = record
            self.report.dots.append(record)
        else:
            self._records[key].operand_origins |= origins
        if out_shape:
            self.report.tiles.append(Tile(node.lineno, out_shape, 32, "acc"))
        self._mark_layout_use(a, "feeds_dot")
        self._mark_layout_use(b, "feeds_dot")
        self._mark_reductions_used(a)
        self._mark_reductions_used(b)
        # The product is a new tensor in the MMA layout: how its operands were laid out (a tl.trans
        # feeding the dot) says nothing about what happens where it is stored.
        operands = frozenset(d for d in a.deps | b.deps if not d.startswith("layout"))
        deps = operands | {"dot"} | (acc.deps if acc is not None else frozenset())
        m, n, _ = self._dot_dims(a, b)
        return V("float", out_shape, None, 32, deps=deps, dims=(m, n) if len(out_shape) == 2 else ())

    def _mark_reductions_used(self, value: V) -> None:
        """A reduction whose value a store, dot or atomic consumes within the reduction's own loop
        (directly or through state carried to the next iteration) is needed every iteration: an
        online softmax's row max feeding the P @ V dot, a scan's running carry."""
        for tag in value.deps:
            record = self._reductions_by_tag.get(tag)
            if record is not None and record.loops and record.loops[-1] in self.loop_stack:
                record.used_in_loop = True

    def _dot_dims(self, a: V, b: V) -> tuple[frozenset, frozenset, frozenset]:
        a_dims, b_dims = dims_for(a, a.shape), dims_for(b, b.shape)
        if len(a_dims) < 2 or len(b_dims) < 2:
            return frozenset(), frozenset(), frozenset()
        return a_dims[-2], b_dims[-1], a_dims[-1] | b_dims[-2]

    def _load(self, node: ast.Call, env: dict[str, V]) -> V:
        ptr = self._eval(self._kw(node, "pointer", 0), env)
        mask_node = self._kw(node, "mask", 1)
        other_node = self._kw(node, "other", 2)
        mask = self._eval(mask_node, env) if mask_node is not None else None
        care = self._kw(node, "care_padding")
        care_padding = None
        if care is not None:
            care_padding = bool(self._eval(care, env).py)
        access = self._access(node, "load", ptr, mask, other_node is not None, care_padding)
        dtype = ptr.py if isinstance(ptr.py, str) else "fp32"
        bits = DTYPE_BITS.get(dtype, 32)
        shape = ptr.shape
        if shape and access is not None:
            self.report.tiles.append(Tile(node.lineno, shape, bits, "load"))
        deps = ptr.deps | {"load"} | (mask.deps if mask is not None else frozenset())
        origins = frozenset({id(node)})
        if dtype in FLOAT_DTYPES:
            return V("float", shape, None, bits, deps=deps, origins=origins, dims=ptr.dims)
        info = AxisInfo.pessimistic(max(len(shape), 1))
        return V("int", shape, info, bits, deps=deps, origins=origins, dims=ptr.dims)

    def _store(self, node: ast.Call, env: dict[str, V]) -> V:
        ptr = self._eval(self._kw(node, "pointer", 0), env)
        value = self._eval(self._kw(node, "value", 1), env)
        mask_node = self._kw(node, "mask", 2)
        mask = self._eval(mask_node, env) if mask_node is not None else None
        access = self._access(node, "store", ptr, mask, False, None)
        if access is not None:
            access.from_dot = access.from_dot or "dot" in value.deps
        self._mark_reductions_used(value)
        self._mark_layout_use(value, "feeds_store")
        return V("none")

    def _atomic(self, op: str, node: ast.Call, env: dict[str, V]) -> V:
        ptr = self._eval(self._kw(node, "pointer", 0), env)
        if op == "atomic_cas":
            mask = None
            self._eval(self._kw(node, "cmp", 1), env)
            self._eval(self._kw(node, "val", 2), env)
        else:
            self._mark_reductions_used(self._eval(self._kw(node, "val", 1), env))
            mask_node = self._kw(node, "mask", 2)
            mask = self._eval(mask_node, env) if mask_node is not None else None
        sem_node = self._kw(node, "sem")
        sem = self._eval(sem_node, env).py if sem_node is not None else None
        self._access(node, "atomic", ptr, mask, False, None)
        distinct = None
        if isinstance(ptr.conc, np.ndarray):
            distinct = int(np.unique(ptr.conc).size)
        elif isinstance(ptr.conc, (int, np.integer)):
            distinct = 1
        key = self._record_key("atomic", node)
        if key not in self._records:
            record = Atomic(id(node), node.lineno, op, sem, tuple(self.loop_stack), "pid" in ptr.deps, distinct, ptr.shape,
                            "load" in ptr.deps, ptr.base)
            self._records[key] = record
            self.report.atomics.append(record)
        return V("float", ptr.shape, None, ptr.bits, deps=ptr.deps | {"load"})

    def _access(self, node: ast.Call, op: str, ptr: V, mask: Optional[V], has_other: bool,
                care_padding: Optional[bool]) -> Optional[Access]:
        node_id = id(node)
        bits = DTYPE_BITS.get(ptr.py, 32) if isinstance(ptr.py, str) else ptr.bits
        if ptr.kind == "blockptr":
            access = self._accesses.get(node_id)
            if access is None:
                width = ax.AccessWidth(tuple(reversed(range(len(ptr.shape)))), max(128 // bits, 1), 128, ())
                access = Access(node_id, node.lineno, op, ptr.base, ptr.shape, bits, mask is not None, has_other,
                                tuple(self.loop_stack), AxisInfo.pessimistic(max(len(ptr.shape), 1)), width,
                                ptr.deps, block_ptr=True, care_padding=care_padding,
                                end_line=getattr(node, "end_lineno", None),
                                true_strides=ptr.strides or None, block_order=ptr.order or None)
                self._accesses[node_id] = access
            return access
        if ptr.kind != "ptr":
            return None
        for tag in ptr.deps:
            if tag in self._int64_by_tag:
                self._int64_by_tag[tag].feeds_address = True
        shape = ptr.shape
        info = ptr.info or AxisInfo.pessimistic(max(len(shape), 1))
        mask_info = info_for(mask, shape) if mask is not None and mask.info is not None and shape else None
        width = ax.access_width(info, shape, bits, self.num_warps, mask_info, op != "load")
        access = self._accesses.get(node_id)
        if access is None:
            access = Access(node_id, node.lineno, op, ptr.base, shape, bits, mask is not None, has_other,
                            tuple(self.loop_stack), info, width, ptr.deps, care_padding=care_padding,
                            end_line=getattr(node, "end_lineno", None), dims=dims_for(ptr, shape))
            self._accesses[node_id] = access
        else:
            # A later pass of a loop body: keep the joined (fixpoint) abstract state.
            access.info, access.width, access.deps = info, width, access.deps | ptr.deps
        if mask_info is not None:
            fastest = width.order[0] if width.order else 0
            access.mask_constancy = mask_info.constancy[min(fastest, len(mask_info.constancy) - 1)]
        if isinstance(ptr.conc, np.ndarray) and shape:
            mask_conc = mask.conc if mask is not None and isinstance(mask.conc, np.ndarray) else None
            self._concrete_offsets.setdefault(node_id, []).append((ptr.conc, mask_conc, bits))
            if access.sample_offsets is None:
                access.sample_offsets = ptr.conc
        return access

    def _finish_access(self, access: Access) -> None:
        samples = self._concrete_offsets.get(access.node_id)
        if not samples or not access.shape:
            return
        binding = self.bindings.get(access.base or "")
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


def _shared_matvec_axis(a: V, b: V) -> Optional[int]:
    """The axis a vector spans when one operand is a loaded 2-D matrix whose address does not
    depend on the program id and the other that vector broadcast along the matrix's other axis
    (W * v[None, :]): summed over that axis, every program multiplies the same matrix by its own
    vector, which together is a matrix product (W @ V) done as GEMVs on CUDA cores."""
    for matrix, vector in ((a, b), (b, a)):
        if len(matrix.shape) != 2 or len(vector.shape) != 2 or min(matrix.shape) <= 1:
            continue
        if "load" not in matrix.deps or "pid" in matrix.deps:
            continue
        spans = [d for d, (m, v) in enumerate(zip(matrix.shape, vector.shape)) if v == m]
        if len(spans) == 1 and vector.shape[1 - spans[0]] == 1:
            return spans[0]
    return None


def _is_outer_product(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Both operands are broadcast along a dim the other one spans: a[:, None] * b[None, :]."""
    if len(a) < 2 or len(b) < 2 or len(a) != len(b):
        return False
    a_only = any(x > 1 and y == 1 for x, y in zip(a, b))
    b_only = any(y > 1 and x == 1 for x, y in zip(a, b))
    return a_only and b_only


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


_PYOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Div: lambda a, b: a / b,
    ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b, ast.Pow: lambda a, b: a ** b,
    ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
}
_OPNAMES = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "div", ast.Mod: "rem",
    ast.LShift: "shl", ast.RShift: "shr", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
    ast.Div: "fdiv",
}
_CMPOPS = {
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
}


def walk_kernel(module: SourceModule, kernel: Kernel, bindings: dict[str, Binding], num_warps: int = 4,
                grid: tuple[int, int, int] = (1, 1, 1),
                pids: Optional[list[tuple[int, int, int]]] = None) -> KernelReport:
    """Walk `kernel` for a few sampled program ids and merge what the samples say.

    The abstract part of the report does not depend on the program id; the concrete part keeps,
    for each access, the narrowest vector any sampled program allows.
    """
    pids = pids or sample_pids(grid)
    reports = [KernelWalker(module, kernel, bindings, num_warps, pid, grid).run() for pid in pids]
    merged = reports[0]
    for other in reports[1:]:
        by_id = {a.node_id: a for a in other.accesses}
        for access in merged.accesses:
            twin = by_id.get(access.node_id)
            if twin is None:
                continue
            if twin.true_vec is not None:
                access.true_vec = twin.true_vec if access.true_vec is None else min(access.true_vec, twin.true_vec)
            if twin.true_strides is not None and access.true_strides is not None:
                access.true_strides = tuple(a if a == b else None for a, b in zip(access.true_strides, twin.true_strides))
        by_atomic = {a.node_id: a for a in other.atomics}
        for atomic in merged.atomics:
            twin = by_atomic.get(atomic.node_id)
            if twin is not None and twin.distinct_addresses is not None and atomic.distinct_addresses is not None:
                atomic.distinct_addresses = min(atomic.distinct_addresses, twin.distinct_addresses)
    return merged


def sample_pids(grid: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """First, second, middle and last program along each grid axis (tails differ from the body)."""
    samples = set()
    axes = []
    for size in grid:
        size = max(int(size), 1)
        axes.append(sorted({0, min(1, size - 1), size // 2, size - 1}))
    for x in axes[0]:
        samples.add((x, axes[1][0], axes[2][0]))
        samples.add((x, axes[1][-1], axes[2][-1]))
    for y in axes[1]:
        samples.add((axes[0][0], y, axes[2][0]))
    return sorted(samples)[:12]
