"""The driver shared by the rewrites that fuse two passes over a row into one (``online``,
``moments``): find each loop followed in its block by a second one over the same range, let the
rewrite match and edit the pair, and refuse with the most telling reason when no pair fits."""
from __future__ import annotations

import ast
from typing import Any, Callable, Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..source import Kernel
from .common import context_for, target_kernels, tl_name
from .edit import Edit, NotApplicable, apply
from .syntax import loop_header, statement_blocks

# (block, first loop, tl) -> the matched form, or NotApplicable with what is missing
Match = Callable[[list[ast.stmt], ast.For, str], Any]
# (source, context, kernel, tl, form) -> the edits
Fuse = Callable[[str, TriageContext, Kernel, str, Any], list[Edit]]


def fuse_pass_pairs(source: str, finding: Optional[Finding], ctx: Optional[TriageContext], pattern: str,
                    match: Match, fuse: Fuse, nothing: str) -> str:
    """The source with every pair ``match`` accepts fused (only the pair a finding points into, when
    given one); NotApplicable with the first refusal, or ``nothing`` when no loop had a pair."""
    ctx = context_for(source, ctx)
    tl = tl_name(ctx)
    edits: list[Edit] = []
    refused: list[str] = []
    for kernel in target_kernels(ctx, finding, pattern):
        for block in statement_blocks(kernel.node):
            for first in (s for s in block if isinstance(s, ast.For)):
                if finding is not None and finding.line and not first.lineno <= finding.line <= _pair_end(block, first):
                    continue
                try:
                    edits += fuse(source, ctx, kernel, tl, match(block, first, tl))
                except NotApplicable as reason:
                    refused.append(f"line {first.lineno}: {reason}")
    if not edits:
        refused = [r for r in refused if "no loop after it" not in r] or refused
        raise NotApplicable(f"{pattern}: {refused[0] if refused else nothing}")
    return apply(source, edits)


def second_pass(block: list[ast.stmt], first: ast.For) -> ast.For:
    """The next loop of the block, which must walk ``first``'s range."""
    second = _next_loop(block, first)
    if second is None:
        raise NotApplicable("no loop after it")
    if loop_header(second) != loop_header(first):
        raise NotApplicable("the next loop walks another range")
    return second


def _next_loop(block: list[ast.stmt], loop: ast.For) -> Optional[ast.For]:
    return next((s for s in block[block.index(loop) + 1:] if isinstance(s, ast.For)), None)


def _pair_end(block: list[ast.stmt], loop: ast.For) -> int:
    """The last line a finding on this loop's pair can point at: the end of the next loop."""
    return (_next_loop(block, loop) or loop).end_lineno
