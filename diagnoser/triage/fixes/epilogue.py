"""nv.unfused-epilogue -> the elementwise kernel's work applied in the producing kernel, before its store.

The case this rewrites: the forward launches a producer (a GEMM, say) that writes a tensor ``h``
with one store, then an elementwise kernel that reads ``h`` once per element and writes a fresh
``y = torch.empty_like(h)``, computing each output element from the loaded value and scalars only
(no position, no other load, no reduction). Then the elementwise statements move into the
producer, applied to the value it was about to store (in its own precision: the intermediate is no
longer rounded to ``h``'s dtype), the scalars become parameters of the producer, the producer's
launch passes them, and the second launch, the ``y`` allocation and the elementwise kernel go;
what the forward returned as ``y`` is ``h``. Anything else (a row reduction, a consumer of part of
``h``, ``h`` used after the second launch) is not mechanical: ``NotApplicable`` says why.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..source import Kernel, LaunchSite, SourceModule, parse_module
from .common import names_reaching
from .edit import Edit, NotApplicable, apply, indentation, insert_before_line, line_offsets, remove_statement, replace, span
from .syntax import argument

PATTERN = "nv.unfused-epilogue"
# triton.language functions that act on each element alone (a reduction, a scan, a load, an index
# or a shape change would tie an output element to others or to its position).
ELEMENTWISE = {"where", "maximum", "minimum", "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "abs",
               "sigmoid", "fdiv", "div_rn", "erf", "cos", "sin", "floor", "ceil", "fma", "clamp", "cast",
               "umulhi", "softplus"}
ELEMENTWISE_MODULES = ("tl.math.", "tl.extra.cuda.libdevice.", "tl.extra.libdevice.", "libdevice.")


@dataclass
class Elementwise:
    """What the consumer computes per element: its statements (with the load still in them), the
    value it stores, and which parameters play which part."""

    kernel: Kernel
    load: ast.Call
    statements: list[ast.stmt]
    value: ast.expr
    source_param: str
    output_param: str
    scalars: list[str]


def fix_unfused_epilogue(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    module = ctx.source if ctx is not None and ctx.source.text == source else parse_module(source)
    names = [finding.kernel] if finding is not None and finding.kernel else [k.name for k in module.launched_kernels()]
    reasons = []
    for name in names:
        try:
            return apply(source, _fuse(source, module, name))
        except NotApplicable as why:
            reasons.append(str(why))
    raise NotApplicable(f"{PATTERN}: " + ("; ".join(reasons) or "no second kernel to fuse"))


def _fuse(source: str, module: SourceModule, consumer_name: str) -> list[Edit]:
    consumer_site = _only_launch(module, consumer_name)
    forward = consumer_site.function
    body = forward.body
    at = next((i for i, s in enumerate(body) if isinstance(s, ast.Expr) and s.value is consumer_site.node), None)
    if at is None:
        raise NotApplicable(f"{consumer_name} is not launched as a statement of its own")
    producer_site = _previous_launch(module, body, at)
    if producer_site.kernel == consumer_name:
        raise NotApplicable(f"{consumer_name} consumes its own output")
    _only_launch(module, producer_site.kernel)
    epilogue = _elementwise(module, module.kernels[consumer_name])
    consumer_args = _bound(module.kernels[consumer_name], consumer_site)
    intermediate = consumer_args.get(epilogue.source_param)
    output = consumer_args.get(epilogue.output_param)
    if not (isinstance(intermediate, ast.Name) and isinstance(output, ast.Name)):
        raise NotApplicable(f"{consumer_name} does not read and write plain tensors of the forward")
    producer = module.kernels[producer_site.kernel]
    store, stored_param = _single_store(module, producer, _bound(producer, producer_site), intermediate.id)
    _check_forward(module, forward, at, intermediate.id, output.id, consumer_args)
    scalars = {name: consumer_args.get(name) for name in epilogue.scalars}
    for name, value in scalars.items():
        if value is None:
            raise NotApplicable(f"{consumer_name}'s {name} is not passed at its launch")
        if _names(value) & _assigned_between(body, producer_site, at):
            raise NotApplicable(f"{consumer_name}'s {name} is computed after {producer.name} is launched")
    used = {n.id for n in ast.walk(producer.node) if isinstance(n, ast.Name)} | {p.name for p in producer.params}
    renames = _renames(epilogue, used)
    renames[epilogue.output_param] = stored_param
    return (_producer_edits(source, producer, store, epilogue, renames)
            + _launch_edits(source, producer_site, {renames[n]: v for n, v in scalars.items()})
            + _forward_edits(source, forward, at, intermediate.id, output.id, consumer_args)
            + _remove_kernel(source, module.kernels[consumer_name]))


# ---------------------------------------------------------------------------------- the consumer


def _elementwise(module: SourceModule, kernel: Kernel) -> Elementwise:
    """The consumer's per-element computation, or NotApplicable when it is anything more."""
    if kernel.autotune is not None or kernel.heuristics:
        raise NotApplicable(f"{kernel.name} is autotuned or has heuristics")
    statements = [s for s in kernel.node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not statements or not all(_simple_assign(s) for s in statements[:-1]):
        raise NotApplicable(f"{kernel.name} is not straight-line assignments ending in one store")
    store = statements[-1]
    if not (isinstance(store, ast.Expr) and _is(module, store.value, "tl.store")):
        raise NotApplicable(f"{kernel.name} does not end in its store")
    loads = [n for n in ast.walk(kernel.node) if _is(module, n, "tl.load")]
    if len(loads) != 1 or sum(1 for n in ast.walk(kernel.node) if _is(module, n, "tl.store")) != 1:
        raise NotApplicable(f"{kernel.name} does not load one tensor and store one")
    load = loads[0]
    source_param, offsets = _base_and_offsets(load, "load")
    output_param, store_offsets = _base_and_offsets(store.value, "store")
    params = {p.name for p in kernel.params}
    if offsets != store_offsets or {source_param, output_param} - params:
        raise NotApplicable(f"{kernel.name} does not load and store the same positions of two pointer arguments")
    masks = set().union(*(_names(argument(call, "mask", 2)) for call in (load, store.value)))
    index = _closure(statements[:-1], {offsets} | masks)
    kept = [s for s in statements[:-1] if s.targets[0].id not in index]
    for statement in statements[:-1]:
        if statement.targets[0].id in index and _contains(statement.value, load):
            raise NotApplicable(f"{kernel.name}'s offsets depend on the loaded data")
    value = argument(store.value, "value", 1)
    index_params = {n for s in statements[:-1] if s.targets[0].id in index for n in _names(s.value)} & params
    allowed_locals = {s.targets[0].id for s in kept}
    scalars = []
    for node in [s.value for s in kept] + [value]:
        for name in _names(node, skip=load):
            if name in index or name in index_params or name == source_param:
                raise NotApplicable(f"{kernel.name} computes with `{name}`, not only with the loaded value")
            if name in params and name != output_param and name not in scalars:
                scalars.append(name)
            elif name not in params | allowed_locals | module.tl_aliases | module.triton_aliases:
                raise NotApplicable(f"{kernel.name} reads `{name}` from outside the kernel")
        for call in _walk(node, skip=load):
            if isinstance(call, ast.Call) and not _elementwise_call(module, call):
                raise NotApplicable(f"{kernel.name} calls {ast.unparse(call.func)}, which is not elementwise")
    if not _contains(value, load) and not any(_contains(s.value, load) for s in kept):
        raise NotApplicable(f"{kernel.name} does not use what it loads")
    return Elementwise(kernel, load, kept, value, source_param, output_param, scalars)


def _simple_assign(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)


def _base_and_offsets(call: ast.Call, what: str) -> tuple[str, str]:
    pointer = argument(call, "pointer", 0)
    if isinstance(pointer, ast.BinOp) and isinstance(pointer.op, ast.Add):
        sides = [pointer.left, pointer.right]
        if all(isinstance(side, ast.Name) for side in sides):
            return sides[0].id, sides[1].id  # `ptr + offs` (the pointer written first, as kernels do)
    raise NotApplicable(f"the {what} address is not `pointer + offsets`")


def _closure(statements: list[ast.Assign], names: set[str]) -> set[str]:
    """The locals `names` are computed from, transitively (themselves included)."""
    defined = {s.targets[0].id: s.value for s in statements}
    found, todo = set(), [n for n in names if n in defined]
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo += [n for n in _names(defined[name]) if n in defined]
    return found


def _elementwise_call(module: SourceModule, call: ast.Call) -> bool:
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to":
        return True
    name = module.canonical(call.func) or ""
    return (name.startswith("tl.") and name[3:] in ELEMENTWISE) or name.startswith(ELEMENTWISE_MODULES)


# ---------------------------------------------------------------------------------- the producer


def _single_store(module: SourceModule, producer: Kernel, args: dict[str, ast.expr], intermediate: str):
    """The producer's one store (a statement of its body, not in a loop), and the parameter it
    stores through, which must be the one the forward passes the intermediate to."""
    stores = [n for n in ast.walk(producer.node) if _is(module, n, "tl.store")]
    if len(stores) != 1:
        raise NotApplicable(f"{producer.name} stores {len(stores)} times, not once")
    statement = next((s for s in producer.node.body if isinstance(s, ast.Expr) and s.value is stores[0]), None)
    if statement is None:
        raise NotApplicable(f"{producer.name}'s store is inside a loop or a branch")
    passed = [name for name, value in args.items() if isinstance(value, ast.Name) and value.id == intermediate]
    if len(passed) != 1:
        raise NotApplicable(f"{producer.name} does not take `{intermediate}` as one argument")
    if passed[0] not in names_reaching(producer, argument(stores[0], "pointer", 0)):
        raise NotApplicable(f"{producer.name} does not store to `{intermediate}`")
    return statement, passed[0]


def _renames(epilogue: Elementwise, used: set[str]) -> dict[str, str]:
    """New names for the consumer's locals and scalars that the producer already uses."""
    renames, taken = {}, set(used)
    for name in [s.targets[0].id for s in epilogue.statements] + epilogue.scalars:
        new, index = name, 2
        while new in taken:
            new, index = f"{name}_{index}", index + 1
        renames[name], taken = new, taken | {new}
    return renames


def _producer_edits(source: str, producer: Kernel, store: ast.Expr, epilogue: Elementwise,
                    renames: dict[str, str]) -> list[Edit]:
    stored = argument(store.value, "value", 1)
    computed = stored.func.value if _is_cast(stored) else stored  # the value before its cast to the output dtype
    loaded = ast.parse(f"({source[slice(*span(source, computed))]})", mode="eval").body
    indent = indentation(source, store.lineno)
    lines = [f"{indent}{ast.unparse(_rewritten(s, epilogue.load, loaded, renames))}\n" for s in epilogue.statements]
    edits = [insert_before_line(source, store.lineno, "".join(lines)),
             replace(source, stored, ast.unparse(_rewritten(epilogue.value, epilogue.load, loaded, renames)))]
    params = [renames[name] + _annotation(epilogue.kernel, name) for name in epilogue.scalars]
    if params:
        edits.append(_add_params(source, producer, params))
    return edits


def _rewritten(node: ast.AST, load: ast.Call, loaded: ast.expr, renames: dict[str, str]) -> ast.AST:
    class Rewrite(ast.NodeTransformer):
        def visit(self, sub):  # noqa: D401 - the load is matched by position, the rest by name
            if isinstance(sub, ast.Call) and _position(sub) == _position(load):
                return copy.deepcopy(loaded)
            return super().visit(sub)

        def visit_Name(self, sub):
            return ast.copy_location(ast.Name(renames.get(sub.id, sub.id), sub.ctx), sub)

    return Rewrite().visit(copy.deepcopy(node))


def _annotation(kernel: Kernel, name: str) -> str:
    arg = next(a for a in kernel.node.args.args if a.arg == name)
    return f": {ast.unparse(arg.annotation)}" if arg.annotation is not None else ""


def _add_params(source: str, kernel: Kernel, params: list[str]) -> Edit:
    """The new parameters before the first one with a default (so none follows a default), else last."""
    args = kernel.node.args
    first_default = len(args.args) - len(args.defaults)
    if args.defaults:
        start = span(source, args.args[first_default])[0]
        return Edit(start, start, "".join(f"{p}, " for p in params))
    last = args.args[-1]
    end = span(source, last.annotation if last.annotation is not None else last)[1]
    return Edit(end, end, "".join(f", {p}" for p in params))


# ---------------------------------------------------------------------------------- the forward


def _only_launch(module: SourceModule, kernel: str) -> LaunchSite:
    sites = [s for s in module.launches if s.kernel == kernel]
    if len(sites) != 1 or sites[0].loops or sites[0].function is None:
        raise NotApplicable(f"{kernel} is not launched exactly once, outside loops, from a function")
    return sites[0]


def _previous_launch(module: SourceModule, body: list[ast.stmt], at: int) -> LaunchSite:
    for statement in reversed(body[:at]):
        if isinstance(statement, ast.Expr):
            site = next((s for s in module.launches if s.node is statement.value), None)
            if site is not None:
                return site
        if not _simple_assign(statement):
            break
    raise NotApplicable("no kernel launch right before it (only assignments may come between)")


def _bound(kernel: Kernel, site: LaunchSite) -> dict[str, ast.expr]:
    """Each kernel parameter's argument at the launch."""
    bound = {kernel.params[i].name: arg for i, arg in enumerate(site.args) if i < len(kernel.params)}
    bound.update({k: v for k, v in site.keywords.items() if kernel.param(k) is not None})
    return bound


def _check_forward(module: SourceModule, forward: ast.FunctionDef, at: int, intermediate: str, output: str,
                   consumer_args: dict[str, ast.expr]) -> None:
    """The intermediate lives only for the two launches, the output is a fresh tensor like it, and
    the consumer runs over all of it."""
    after = [n for s in forward.body[at + 1:] for n in ast.walk(s)]
    if any(isinstance(n, ast.Name) and n.id == intermediate for n in after):
        raise NotApplicable(f"`{intermediate}` is used after the second launch")
    allocations = [s for s in forward.body if _simple_assign(s) and s.targets[0].id == output]
    if len(allocations) != 1 or not _empty_like(module, allocations[0].value, intermediate):
        raise NotApplicable(f"`{output}` is not one `torch.empty_like({intermediate})`")
    before = [n for s in forward.body[:at] for n in ast.walk(s) if s is not allocations[0]]
    if any(isinstance(n, ast.Name) and n.id == output for n in before):
        raise NotApplicable(f"`{output}` is used before the second launch")
    if sum(1 for n in ast.walk(forward) if isinstance(n, ast.Name) and n.id == intermediate
           and isinstance(n.ctx, ast.Store)) != 1:
        raise NotApplicable(f"`{intermediate}` is not assigned exactly once")
    if not any(_numel_of(forward, arg, intermediate) for arg in consumer_args.values()):
        raise NotApplicable(f"the second kernel is not told `{intermediate}.numel()` elements")


def _empty_like(module: SourceModule, value: ast.expr, of: str) -> bool:
    return (isinstance(value, ast.Call) and module.canonical(value.func) == "torch.empty_like" and not value.keywords
            and len(value.args) == 1 and isinstance(value.args[0], ast.Name) and value.args[0].id == of)


def _numel_of(forward: ast.FunctionDef, arg: ast.expr, tensor: str) -> bool:
    def is_numel(node: ast.expr) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numel"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == tensor and not node.args)

    if is_numel(arg):
        return True
    if isinstance(arg, ast.Name):
        defined = [s.value for s in forward.body if _simple_assign(s) and s.targets[0].id == arg.id]
        return len(defined) == 1 and is_numel(defined[0])
    return False


def _assigned_between(body: list[ast.stmt], producer: LaunchSite, at: int) -> set[str]:
    start = next(i for i, s in enumerate(body) if isinstance(s, ast.Expr) and s.value is producer.node)
    return {s.targets[0].id for s in body[start + 1:at] if _simple_assign(s)}


def _launch_edits(source: str, site: LaunchSite, scalars: dict[str, ast.expr]) -> list[Edit]:
    if not scalars:
        return []
    call = site.node
    last = (call.args + [k.value for k in call.keywords])[-1]
    end = span(source, last)[1]
    return [Edit(end, end, "".join(f", {name}={source[slice(*span(source, value))]}" for name, value in scalars.items()))]


def _forward_edits(source: str, forward: ast.FunctionDef, at: int, intermediate: str, output: str,
                   consumer_args: dict[str, ast.expr]) -> list[Edit]:
    """The second launch and the output's allocation go (the element count too, when nothing else
    reads it); the forward's later uses of the output read the intermediate instead."""
    body = forward.body
    edits = [remove_statement(source, body[at])]
    edits += [remove_statement(source, s) for s in body[:at] if _simple_assign(s) and s.targets[0].id == output]
    counted = [a.id for a in consumer_args.values() if isinstance(a, ast.Name) and a.id not in (intermediate, output)]
    for name in counted:
        readers = [n for s in body if s is not body[at] for n in ast.walk(s)
                   if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        defined = [s for s in body[:at] if _simple_assign(s) and s.targets[0].id == name]
        if not readers and len(defined) == 1 and _numel_of(forward, ast.Name(name, ast.Load()), intermediate):
            edits.append(remove_statement(source, defined[0]))
    for statement in body[at + 1:]:
        edits += [replace(source, n, intermediate) for n in ast.walk(statement)
                  if isinstance(n, ast.Name) and n.id == output]
    return edits


def _remove_kernel(source: str, kernel: Kernel) -> list[Edit]:
    """The consumer's definition (decorators included) and the blank lines after it."""
    offsets = line_offsets(source)
    first = min([d.lineno for d in kernel.node.decorator_list] + [kernel.node.lineno])
    last = kernel.node.end_lineno
    lines = source.splitlines(keepends=True)
    while last < len(lines) and not lines[last].strip():
        last += 1
    return [Edit(offsets[first - 1], offsets[last], "")]


# ---------------------------------------------------------------------------------- helpers


def _position(node: ast.AST) -> tuple[int, int, int, int]:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def _is(module: SourceModule, node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and module.canonical(node.func) == name


def _is_cast(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"
            and len(node.args) == 1)


def _walk(node: Optional[ast.AST], skip: Optional[ast.AST] = None) -> list[ast.AST]:
    """Every node under `node` except those under `skip` (the load, whose arguments are replaced)."""
    found, todo = [], [node] if node is not None else []
    while todo:
        sub = todo.pop()
        if sub is not skip:
            found.append(sub)
            todo += list(ast.iter_child_nodes(sub))
    return found


def _names(node: Optional[ast.AST], skip: Optional[ast.AST] = None) -> set[str]:
    return {sub.id for sub in _walk(node, skip) if isinstance(sub, ast.Name)}


def _contains(node: ast.AST, target: ast.AST) -> bool:
    return any(sub is target for sub in ast.walk(node))
