"""What every fix needs: the triage context of the exact source being rewritten, and the kernel
and walks a finding is about."""
from __future__ import annotations

import ast
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import LaunchAnalysis, TriageContext
from ..interp.report import KernelReport
from ..source import Kernel
from .edit import NotApplicable


def context_for(source: str, ctx: Optional[TriageContext]) -> TriageContext:
    """`ctx` if it describes `source`, else a fresh one (same problem file) that does."""
    if ctx is not None and ctx.source.text == source:
        return ctx
    from .. import build_context

    return build_context(ctx.solution_path if ctx else None, source, ctx.problem_path if ctx else None,
                         None, None, ctx.target if ctx else None)


def target_kernels(ctx: TriageContext, finding: Optional[Finding], pattern: str) -> list[Kernel]:
    """The kernel the finding names, or every launched kernel when there is no finding."""
    if finding is not None and finding.kernel:
        kernel = ctx.source.kernels.get(finding.kernel)
        if kernel is None:
            raise NotApplicable(f"{pattern}: kernel {finding.kernel} is not in this file")
        return [kernel]
    kernels = ctx.source.launched_kernels()
    if not kernels:
        raise NotApplicable(f"{pattern}: no launched kernel in this file")
    return kernels


def analyses_of(ctx: TriageContext, kernel: str) -> list[LaunchAnalysis]:
    return [a for a in ctx.analyses if a.kernel.name == kernel]


def reports_of(ctx: TriageContext, kernel: str) -> list[KernelReport]:
    reports = [a.report for a in analyses_of(ctx, kernel)]
    if not reports and kernel in ctx.static:
        reports = [ctx.static[kernel]]
    return reports


def fresh_name(ctx: TriageContext, kernel: Kernel, wanted: str) -> str:
    """`wanted`, or `wanted_2`... if the kernel already uses that name."""
    return unused_name(kernel.node, wanted, {p.name for p in kernel.params})


def unused_name(scope: ast.AST, wanted: str, taken: set[str] = frozenset()) -> str:
    """`wanted`, or `wanted_2`..., whichever no name, function or class in `scope` (nor `taken`) is."""
    used = set(taken) | {n.id for n in ast.walk(scope) if isinstance(n, ast.Name)} | \
        {n.name for n in ast.walk(scope) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    name, index = wanted, 2
    while name in used:
        name, index = f"{wanted}_{index}", index + 1
    return name


def tl_name(ctx: TriageContext) -> str:
    """How this file names triton.language (`tl` in almost every kernel)."""
    return min(ctx.source.tl_aliases) if ctx.source.tl_aliases else "triton.language"


def names_reaching(kernel: Kernel, node: ast.AST) -> set[str]:
    """The names `node` is computed from inside the kernel, transitively through its assignments
    (`+=` included), with `node`'s own names: what an address or a value depends on."""
    definitions: dict[str, list[ast.AST]] = {}
    for sub in ast.walk(kernel.node):
        if isinstance(sub, ast.Assign):
            for target in sub.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        definitions.setdefault(name.id, []).append(sub.value)
        elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
            definitions.setdefault(sub.target.id, []).append(sub.value)
    seen: set[str] = set()
    todo = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for value in definitions.get(name, []):
            todo.extend(n.id for n in ast.walk(value) if isinstance(n, ast.Name))
    return seen
