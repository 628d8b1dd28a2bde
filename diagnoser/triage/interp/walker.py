"""`KernelWalker` evaluates one kernel for one launch configuration and one sampled program id;
`walk_kernel` runs it for a few sampled program ids and merges what they say.

The walker holds the walk's state (the launch, the loop stack, what has been recorded so far);
statements, expressions and builtins are functions of it (`statements`, `expressions`,
`language`), reaching each other through `KernelWalker.eval`.
"""
from __future__ import annotations

import ast
from typing import Any, Optional

from ..source import Kernel, SourceModule
from .expressions import EVALUATORS
from .memory import finish_access
from .params import param_value
from .report import Access, Int64Op, KernelReport, Reduction
from .statements import Return, exec_body
from .values import UNKNOWN, Binding, V


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
        # Keyed by call site, so that a loop body's second pass updates its records instead of
        # adding them again.
        self.accesses: dict[int, Access] = {}
        self.records: dict[tuple[str, int], Any] = {}
        self.concrete_offsets: dict[int, list[tuple[Any, Any, int]]] = {}
        self.int64_by_tag: dict[str, Int64Op] = {}
        self.reductions_by_tag: dict[str, Reduction] = {}

    def run(self) -> KernelReport:
        env = {name: param_value(self, name) for name in (p.name for p in self.kernel.params)}
        try:
            exec_body(self, self.kernel.node.body, env)
        except Return:
            pass
        except _Budget:
            self.report.errors.append("walk stopped: step budget exhausted")
        except RecursionError:
            self.report.errors.append("walk stopped: recursion limit")
        self.report.accesses = list(self.accesses.values())
        for access in self.report.accesses:
            finish_access(self, access)
        dot_origins = frozenset().union(*(d.operand_origins for d in self.report.dots)) if self.report.dots else frozenset()
        for access in self.report.accesses:
            access.dot_operand = access.node_id in dot_origins
        for loop in self.report.loops.values():
            loop.loads = sum(1 for a in self.report.accesses if a.op == "load" and loop.loop_id in a.loops)
            loop.has_dot = any(loop.loop_id in d.loops for d in self.report.dots)
        return self.report

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.MAX_STEPS:
            raise _Budget()

    def eval(self, node: Optional[ast.expr], env: dict[str, V]) -> V:
        self.tick()
        if node is None:
            return V("none")
        evaluate = EVALUATORS.get(type(node))
        if evaluate is None:
            return UNKNOWN
        try:
            return evaluate(self, node, env)
        except (Return, _Budget, RecursionError):
            raise
        except Exception as error:  # a construct this walk does not model: stay pessimistic
            self.report.errors.append(f"line {getattr(node, 'lineno', '?')}: {type(error).__name__}: {error}")
            return UNKNOWN

    def record_key(self, kind: str, node: ast.AST) -> tuple[str, int]:
        return (kind, id(node))


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
