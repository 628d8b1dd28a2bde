"""What a launch site fixes its kernel's tile sizes and options to, and where those values live in
the source (a keyword literal, a local assignment, the grid expression), so that fixes can change
or free them consistently."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Optional

from ..source import Kernel, LaunchSite, SourceModule, dotted
from .edit import NotApplicable, span


@dataclass
class TileParam:
    name: str                         # the kernel's constexpr parameter
    value: Any                        # its value, when the source fixes it
    keyword: ast.expr                 # the expression passed at the launch site
    sources: list[ast.AST]            # nodes that hold the literal value (to change it)
    grid_refs: list[ast.AST]          # nodes in the grid expression that stand for it
    loop_tiled: bool = False          # a loop in the kernel steps over the axis by this size

    @property
    def static(self) -> bool:
        return self.value is not None and bool(self.sources)

    @property
    def tiling(self) -> bool:
        """Changing it keeps the kernel correct: the grid or a loop covers the axis it tiles."""
        return bool(self.grid_refs) or self.loop_tiled


@dataclass
class LaunchPlan:
    site: LaunchSite
    kernel: Kernel
    grid: ast.expr                    # the grid expression (resolved through a local name)
    grid_assign: Optional[ast.Assign]
    params: dict[str, TileParam] = field(default_factory=dict)
    options: dict[str, ast.expr] = field(default_factory=dict)


def _assignments(function: Optional[ast.AST], before: int) -> list[ast.Assign]:
    if function is None:
        return []
    found = [n for n in ast.walk(function) if isinstance(n, ast.Assign) and n.lineno < before]
    return sorted(found, key=lambda n: n.lineno)


def _bound_node(assign: ast.Assign, name: str) -> Optional[ast.AST]:
    """The expression assigned to `name` by `assign` (through tuple unpacking)."""
    for target in assign.targets:
        if isinstance(target, ast.Name) and target.id == name:
            return assign.value
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(assign.value, (ast.Tuple, ast.List)):
            for element, value in zip(target.elts, assign.value.elts):
                if isinstance(element, ast.Name) and element.id == name:
                    return value
    return None


def resolve_value(module: SourceModule, site: LaunchSite, node: ast.expr) -> tuple[Any, list[ast.AST]]:
    """(value, literal nodes holding it) for a launch argument; (None, []) when not static."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value, [node]
    if isinstance(node, ast.Name):
        for assign in reversed(_assignments(site.function, site.line)):
            bound = _bound_node(assign, node.id)
            if bound is not None:
                if isinstance(bound, ast.Constant) and isinstance(bound.value, int):
                    return bound.value, [bound]
                return None, []
        for statement in module.tree.body:
            if isinstance(statement, ast.Assign):
                bound = _bound_node(statement, node.id)
                if isinstance(bound, ast.Constant) and isinstance(bound.value, int):
                    return bound.value, [bound]
    return None, []


def grid_expression(site: LaunchSite) -> tuple[ast.expr, Optional[ast.Assign]]:
    """The grid of a launch, through a local name it was assigned to (and that assignment)."""
    grid = site.grid
    if isinstance(grid, ast.Name):
        for assign in reversed(_assignments(site.function, site.line)):
            bound = _bound_node(assign, grid.id)
            if bound is not None:
                return bound, assign
    return grid, None


def _grid_divisions(expr: ast.AST) -> list[tuple[ast.expr, ast.Constant]]:
    """(size expression, literal tile) for every cdiv(size, literal) and size // literal in a grid."""
    found = []
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and (dotted(node.func) or "").endswith("cdiv") and len(node.args) == 2:
            if isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, int):
                found.append((node.args[0], node.args[1]))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            if isinstance(node.right, ast.Constant) and isinstance(node.right.value, int):
                found.append((node.left, node.right))
    return found


def _argument_for(site: LaunchSite, kernel: Kernel, expr: ast.expr) -> Optional[str]:
    """The kernel parameter the launch passes `expr` to (matched by source text)."""
    text = ast.unparse(expr)
    for param, arg in zip(kernel.params, site.args):
        if ast.unparse(arg) == text:
            return param.name
    for name, arg in site.keywords.items():
        if ast.unparse(arg) == text:
            return name
    return None


def _loop_tiled(kernel: Kernel, name: str) -> bool:
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            for arg in list(node.iter.args) + [k.value for k in node.iter.keywords]:
                if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(arg)):
                    return True
    return False


def plan(module: SourceModule, site: LaunchSite, bounds: Optional[set[tuple[str, str]]] = None) -> LaunchPlan:
    """The launch's tile parameters and options. `bounds` ((tile constexpr, size argument) pairs
    from the kernel walk) tells which literal in `cdiv(M, 64) * cdiv(N, 64)` belongs to which
    tile when several tiles share a value; without it, shared values are left alone."""
    kernel = module.kernels[site.kernel]
    grid, grid_assign = grid_expression(site)
    result = LaunchPlan(site, kernel, grid, grid_assign)
    divisions = _grid_divisions(grid)
    positional = {kernel.params[i].name for i in range(min(len(site.args), len(kernel.params)))}
    for name, node in site.keywords.items():
        param = kernel.param(name)
        if param is None:
            if name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
                result.options[name] = node
            continue
        if not param.constexpr or name in positional:
            continue
        value, sources = resolve_value(module, site, node)
        refs: list[ast.AST] = []
        if isinstance(node, ast.Name):
            refs = [n for n in ast.walk(grid) if isinstance(n, ast.Name) and n.id == node.id]
        elif value is not None:
            refs = [literal for size, literal in divisions if literal.value == value]
        result.params[name] = TileParam(name, value, node, sources, refs, _loop_tiled(kernel, name))
    _disambiguate(result, site, kernel, divisions, bounds or set())
    return result


def _disambiguate(result: LaunchPlan, site: LaunchSite, kernel: Kernel,
                  divisions: list[tuple[ast.expr, ast.Constant]], bounds: set[tuple[str, str]]) -> None:
    """A grid literal claimed by several tiles goes to the one masked against that division's
    size argument (cdiv(M, 64) -> the tile compared with M); if that is not known, to none."""
    for size, literal in divisions:
        owners = [p for p in result.params.values() if any(r is literal for r in p.grid_refs)]
        if len(owners) < 2:
            continue
        argument = _argument_for(site, kernel, size)
        chosen = [p for p in owners if argument is not None and (p.name, argument) in bounds]
        for param in owners:
            if not (len(chosen) == 1 and param is chosen[0]):
                param.grid_refs = [r for r in param.grid_refs if r is not literal]


def sites_for(module: SourceModule, kernel: str) -> list[LaunchSite]:
    sites = [s for s in module.launches if s.kernel == kernel]
    if not sites:
        raise NotApplicable(f"no launch of {kernel} in this file")
    return sites


def render(source: str, node: ast.AST, replacements: dict[int, str]) -> str:
    """The source text of `node` with the sub-nodes in `replacements` (by id) replaced."""
    start, end = span(source, node)
    pieces = []
    for sub in ast.walk(node):
        if id(sub) in replacements:
            s, e = span(source, sub)
            pieces.append((s, e, replacements[id(sub)]))
    text = source[start:end]
    for s, e, new in sorted(pieces, reverse=True):
        text = text[: s - start] + new + text[e - start:]
    return text


def keyword_span(source: str, call: ast.Call, name: str) -> tuple[int, int]:
    """Span of `name=value` in a call, including the comma and spacing before it (or after it
    when it is the first argument), so removing it leaves a well-formed argument list."""
    keyword = next(k for k in call.keywords if k.arg == name)
    start, end = span(source, keyword)
    head = start
    while head > 0 and source[head - 1] in " \t\n":
        head -= 1
    if head > 0 and source[head - 1] == ",":
        return head - 1, end
    tail = end
    while tail < len(source) and source[tail] in " \t":
        tail += 1
    if tail < len(source) and source[tail] == ",":
        tail += 1
        while tail < len(source) and source[tail] in " \t":
            tail += 1
    return start, tail
