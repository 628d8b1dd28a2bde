"""nv.small-grid -> split-K: a reduction loop shared out over a second grid axis, the partial sums
added into a zeroed output with atomics.

A kernel whose programs each walk a long reduction axis (a matrix-vector product over K, a row sum)
fills few SMs when there are few rows. Each program of the new grid axis walks one chunk of the
loop's range (a multiple of its step, so the chunks tile the range exactly); the store of the
result becomes ``tl.atomic_add`` into an output the forward now allocates with ``torch.zeros``:

    acc = tl.zeros((BLOCK_M,), tl.float32)
    for k in range(0, K, BLOCK_K):
        acc += tl.sum(a * x[None, :], axis=1)
    tl.store(y_ptr + rows, acc, mask=rows < M)

becomes

    acc = tl.zeros((BLOCK_M,), tl.float32)
    split_chunk = tl.cdiv(tl.cdiv(K, tl.num_programs(1)), BLOCK_K) * BLOCK_K
    split_start = tl.program_id(1) * split_chunk
    for k in range(split_start, tl.minimum(split_start + split_chunk, K), BLOCK_K):
        acc += tl.sum(a * x[None, :], axis=1)
    tl.atomic_add(y_ptr + rows, acc, mask=rows < M, sem="relaxed")

The number of splits is chosen per launch: about two programs per SM, and at least four steps of
the loop per program. Applied only where it is exact up to the order of float32 additions: one
top-level loop from 0 whose only carried state is one accumulator updated by ``+=``; after it, the
accumulator only reaches one ``tl.store`` through sums, casts and scaling by values the split does
not change (a sum of partial sums is the sum); the output is written nowhere else, never read, and
allocated by ``torch.empty`` in the forward; the grid has one axis; an autotuned kernel zeroes the
output before each trial.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..detectors.source.measures import device
from ..source import Kernel, LaunchSite
from .common import analyses_of, context_for, fresh_name, names_reaching, target_kernels, tl_name, unused_name
from .edit import Edit, NotApplicable, apply, indentation, insert_before_line, replace, segment, span
from .launch import _assignments, _bound_node, grid_expression, sites_for
from .syntax import added_to, assigned_names, enclosing_block, is_tl_call, reads, reads_any, writes, writes_memory

PATTERN = "nv.small-grid"
PROGRAMS_PER_SM = 2
MIN_STEPS_PER_PROGRAM = 4
CAST_BLOCK = 1024


@dataclass
class Reduction:
    """The kernel's one reduction loop and the store its result reaches."""

    loop: ast.For
    accumulator: str
    end: str               # the kernel parameter the loop runs to (K)
    step: str              # the constexpr it steps by (BLOCK_K)
    store: ast.Call
    output: str            # the pointer parameter the store writes


def fix_split_reduction(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    tl = tl_name(ctx)
    if not re.search(r"^import triton$", source, re.M):
        raise NotApplicable(f"{PATTERN}: the file does not `import triton`, which the new grid uses")
    edits: list[Edit] = []
    for kernel in target_kernels(ctx, finding, PATTERN):
        tensors = {name for analysis in analyses_of(ctx, kernel.name)
                   for name, arg in analysis.launch.args.items() if arg.kind == "tensor"}
        reduction = match(kernel, tl, tensors)
        cast_kernel = None
        if not _output_is_float32(ctx, kernel, reduction):
            cast_kernel = unused_name(ctx.source.tree, f"{kernel.name}_cast")
            edits.append(_cast_kernel(source, kernel, cast_kernel, tl))
        edits += _kernel_edits(source, ctx, kernel, tl, reduction)
        for site in sites_for(ctx.source, kernel.name):
            edits += _launch_edits(source, ctx, kernel, site, reduction, cast_kernel)
    if not edits:
        raise NotApplicable(f"{PATTERN}: no launched kernel to split")
    return apply(source, edits)


def match(kernel: Kernel, tl: str, tensors: set[str]) -> Reduction:
    """The split-K form of the kernel (``tensors``: its parameters that are tensors in the traced
    cases), or NotApplicable saying which part is missing."""
    body = kernel.node.body
    if any(_program_axis_other_than_0(node, tl) for node in ast.walk(kernel.node)):
        raise NotApplicable(f"{kernel.name}: the grid already has more than one axis (or reads its size)")
    loops = [s for s in body if isinstance(s, (ast.For, ast.While))]
    nested = [n for s in body if not isinstance(s, (ast.For, ast.While)) for n in ast.walk(s)
              if isinstance(n, (ast.For, ast.While, ast.If))]
    if len(loops) != 1 or not isinstance(loops[0], ast.For) or nested:
        raise NotApplicable(f"{kernel.name}: not one top-level loop and straight code around it")
    loop = loops[0]
    end, step = _range(kernel, loop, tl)
    accumulator = _accumulator(kernel, loop, tl)
    store = _the_store(kernel, loop, accumulator, tl)
    pointers = tensors & names_reaching(kernel, store.args[0])
    if len(pointers) != 1:
        raise NotApplicable(f"{kernel.name}: the store's address is not one tensor argument plus offsets")
    return Reduction(loop, accumulator, end, step, store, pointers.pop())


def _program_axis_other_than_0(node: ast.AST, tl: str) -> bool:
    if is_tl_call(node, tl, "num_programs"):
        return True
    if is_tl_call(node, tl, "program_id"):
        axis = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
        return not (isinstance(axis, ast.Constant) and axis.value == 0)
    return False


def _range(kernel: Kernel, loop: ast.For, tl: str) -> tuple[str, str]:
    """(end, step) of ``for k in range(0, END, STEP)``: END a size argument, STEP a constexpr."""
    call = loop.iter
    plain = isinstance(call, ast.Call) and (isinstance(call.func, ast.Name) and call.func.id == "range"
                                            or is_tl_call(call, tl, "range"))
    if not plain or len(call.args) != 3 or call.keywords or not isinstance(loop.target, ast.Name):
        raise NotApplicable(f"{kernel.name}: the loop is not `for k in range(0, K, BLOCK)`")
    start, end, step = call.args
    params = {p.name: p for p in kernel.params}
    if not (isinstance(start, ast.Constant) and start.value == 0):
        raise NotApplicable(f"{kernel.name}: the loop does not start at 0")
    if not (isinstance(end, ast.Name) and end.id in params and not params[end.id].constexpr):
        raise NotApplicable(f"{kernel.name}: the loop does not run to a size argument")
    if not (isinstance(step, ast.Name) and step.id in params and params[step.id].constexpr):
        raise NotApplicable(f"{kernel.name}: the loop does not step by a constexpr")
    if any(reads(s, loop.target.id) for s in kernel.node.body[kernel.node.body.index(loop) + 1:]):
        raise NotApplicable(f"`{loop.target.id}` is read after the loop")
    return end.id, step.id


def _accumulator(kernel: Kernel, loop: ast.For, tl: str) -> str:
    """The one name the loop carries from one iteration to the next, updated only by ``+=``."""
    updates = [found[0] for s in loop.body if (found := added_to(s)) is not None and not reads(found[1], found[0])]
    if len(updates) != 1:
        raise NotApplicable(f"{kernel.name}: not one running sum in the loop")
    accumulator = updates[0]
    assigned_in_loop = {name for s in loop.body for name in assigned_names(s)}
    assigned: set[str] = set()
    for statement in loop.body:
        read = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        carried = sorted((read & assigned_in_loop) - assigned - {accumulator})
        if carried:
            raise NotApplicable(f"`{carried[0]}` is carried from one iteration to the next")
        if writes_memory(statement, tl):
            raise NotApplicable("the loop stores: a chunk of it would store only its part")
        update = added_to(statement)
        if accumulator in read and not (update and update[0] == accumulator):
            raise NotApplicable(f"`{accumulator}` is read inside the loop")
        assigned |= assigned_names(statement)
    after = kernel.node.body[kernel.node.body.index(loop) + 1:]
    leaked = sorted(name for name in assigned - {accumulator} if any(reads(s, name) for s in after))
    if leaked:
        raise NotApplicable(f"`{leaked[0]}` of the loop is read after it")
    init = [s for s in kernel.node.body[:kernel.node.body.index(loop)] if writes(s, accumulator)]
    if len(init) != 1 or not is_tl_call(getattr(init[0], "value", None), tl, "zeros"):
        raise NotApplicable(f"`{accumulator}` does not start at zero")
    return accumulator


def _the_store(kernel: Kernel, loop: ast.For, accumulator: str, tl: str) -> ast.Call:
    """The one store after the loop, its value linear in the accumulator (and the only use of it)."""
    body = kernel.node.body
    if any(writes_memory(s, tl) for s in body[:body.index(loop)]):
        raise NotApplicable("something is stored before the loop")
    linear = {accumulator}
    store = None
    for statement in body[body.index(loop) + 1:]:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            name = statement.targets[0].id
            if _linear(statement.value, linear, tl):
                linear.add(name)
                continue
            if reads_any(statement.value, linear):
                raise NotApplicable(f"`{name}` is not a sum, cast or scaling of the partial result")
            linear.discard(name)
            continue
        call = statement.value if isinstance(statement, ast.Expr) else None
        if store is None and is_tl_call(call, tl, "store") and len(call.args) >= 2 \
                and all(k.arg == "mask" for k in call.keywords) and len(call.args) <= 3:
            if not _linear(call.args[1], linear, tl) or \
                    any(reads_any(a, linear) for a in [call.args[0], *call.args[2:], *(k.value for k in call.keywords)]):
                raise NotApplicable("the stored value is not the partial result summed, cast or scaled")
            store = call
            continue
        raise NotApplicable(f"line {statement.lineno} after the loop is not an assignment or the one store")
    if store is None:
        raise NotApplicable("nothing is stored after the loop")
    return store


def _linear(node: ast.expr, linear: set[str], tl: str) -> bool:
    """Whether ``node`` is a linear function of the names in ``linear`` (and reads one of them)."""
    if isinstance(node, ast.Name):
        return node.id in linear
    if is_tl_call(node, tl, "sum") and node.args:
        rest = [*node.args[1:], *node.keywords]
        return _linear(node.args[0], linear, tl) and not any(reads_any(a, linear) for a in rest)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        rest = [*node.args, *node.keywords]
        return _linear(node.func.value, linear, tl) and not any(reads_any(a, linear) for a in rest)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _linear(node.left, linear, tl) and _linear(node.right, linear, tl)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        constant = lambda side: not reads_any(side, linear)  # noqa: E731
        return (_linear(node.left, linear, tl) and constant(node.right)) or \
            (isinstance(node.op, ast.Mult) and constant(node.left) and _linear(node.right, linear, tl))
    return False


def _output_is_float32(ctx: TriageContext, kernel: Kernel, reduction: Reduction) -> bool:
    """Whether the output is float32 in every case (else the partial sums go to a float32 buffer
    first: atomics add in the output's precision); NotApplicable when the kernel reads it."""
    analyses = analyses_of(ctx, kernel.name)
    if not analyses:
        raise NotApplicable(f"{kernel.name}: no case was analysed, so the output's type is unknown")
    if any(a.base == reduction.output and a.op != "store" for analysis in analyses for a in analysis.report.accesses):
        raise NotApplicable(f"the kernel reads `{reduction.output}`")
    args = [analysis.launch.args.get(reduction.output) for analysis in analyses]
    if any(arg is None or arg.kind != "tensor" for arg in args):
        raise NotApplicable(f"`{reduction.output}` is not a tensor in every case")
    return all(arg.dtype == "fp32" for arg in args)


def _kernel_edits(source: str, ctx: TriageContext, kernel: Kernel, tl: str, reduction: Reduction) -> list[Edit]:
    chunk, start = fresh_name(ctx, kernel, "split_chunk"), fresh_name(ctx, kernel, "split_start")
    end, step, loop = reduction.end, reduction.step, reduction.loop
    pad = indentation(source, loop.lineno)
    header = (f"{pad}{chunk} = {tl}.cdiv({tl}.cdiv({end}, {tl}.num_programs(1)), {step}) * {step}\n"
              f"{pad}{start} = {tl}.program_id(1) * {chunk}\n")
    callee = segment(source, loop.iter.func)
    edits = [insert_before_line(source, loop.lineno, header),
             replace(source, loop.iter, f"{callee}({start}, {tl}.minimum({start} + {chunk}, {end}), {step})"),
             replace(source, reduction.store.func, f"{tl}.atomic_add"),
             # the additions may land in any order: no fence is needed around them
             Edit(span(source, reduction.store)[1] - 1, span(source, reduction.store)[1] - 1, ', sem="relaxed"')]
    if kernel.autotune is not None:
        edits.append(_reset_output(source, kernel, reduction.output))
    return edits


def _reset_output(source: str, kernel: Kernel, output: str) -> Edit:
    """``reset_to_zero`` for the output on the autotuner: each trial adds into it."""
    call = kernel.autotune.node
    given = next((k for k in call.keywords if k.arg == "reset_to_zero"), None)
    if given is None:
        closing = source.splitlines()[call.end_lineno - 1]
        if call.end_lineno > call.lineno and closing.strip() == ")":  # one keyword per line: one more line
            pad = indentation(source, call.keywords[-1].value.lineno) if call.keywords else closing[:-1] + "    "
            return insert_before_line(source, call.end_lineno, f"{pad}reset_to_zero=[{output!r}],\n")
        end = span(source, call)[1] - 1
        head = source[:end].rstrip()
        comma = "" if head.endswith((",", "(")) else ","
        return Edit(len(head), len(head), f"{comma} reset_to_zero=[{output!r}]")
    if not isinstance(given.value, (ast.List, ast.Tuple)):
        raise NotApplicable("the autotuner's reset_to_zero is not a literal list")
    names = [e.value for e in given.value.elts if isinstance(e, ast.Constant)]
    return replace(source, given.value, repr(sorted(set(names) | {output})))


def _launch_edits(source: str, ctx: TriageContext, kernel: Kernel, site: LaunchSite, reduction: Reduction,
                  cast_kernel: Optional[str]) -> list[Edit]:
    """The grid gains the split axis; the output is allocated zeroed, or (with ``cast_kernel``, for
    an output that is not float32) the kernel adds into a zeroed float32 buffer that the cast
    kernel writes into the output after the launch."""
    grid, assign = grid_expression(site)
    meta = None
    if isinstance(grid, ast.Lambda) and len(grid.args.args) == 1:
        meta, grid = grid.args.args[0].arg, grid.body
    if not (isinstance(grid, (ast.Tuple, ast.List)) and len(grid.elts) == 1):
        raise NotApplicable(f"line {site.line}: the grid is not a one-axis tuple")
    if assign is not None and sum(isinstance(n, ast.Name) and n.id == site.grid.id and isinstance(n.ctx, ast.Load)
                                  for n in ast.walk(site.function)) > 1:
        raise NotApplicable(f"line {site.line}: the grid's variable is read elsewhere")
    rows = segment(source, grid.elts[0])
    size, step = _argument(source, kernel, site, reduction.end), _step(source, kernel, site, reduction.step, meta)
    budget = PROGRAMS_PER_SM * device(ctx, "sm_count")
    splits = (f"max(1, min(triton.cdiv({budget}, {rows}), "
              f"triton.cdiv({size}, {MIN_STEPS_PER_PROGRAM} * {step})))")
    output, allocation = _allocation(source, kernel, site, reduction.output)
    edits = [replace(source, grid, f"({rows}, {splits})")]
    if cast_kernel is None:
        return edits + [replace(source, allocation.func, "torch." + allocation.func.attr.replace("empty", "zeros"))]
    buffer = unused_name(site.function, f"{output.id}_float32")
    found = enclosing_block(site.function, site.node)
    launch = found[0][found[1]]
    pad, out = indentation(source, launch.lineno), output.id
    cast = (f"{pad}{cast_kernel}[(triton.cdiv({out}.numel(), {CAST_BLOCK}),)]({buffer}, {out}, {out}.numel(), "
            f"BLOCK={CAST_BLOCK})\n")
    return edits + [insert_before_line(source, launch.lineno,
                                       f"{pad}{buffer} = torch.zeros_like({out}, dtype=torch.float32)\n"),
                    replace(source, output, buffer), insert_before_line(source, launch.end_lineno + 1, cast)]


def _cast_kernel(source: str, kernel: Kernel, name: str, tl: str) -> Edit:
    """A kernel that writes the float32 buffer into the output in the output's type, placed above
    the split kernel (the forward may not cast with torch)."""
    pad = indentation(source, kernel.node.lineno)
    text = (f"{pad}@triton.jit\n"
            f"{pad}def {name}(src_ptr, dst_ptr, n, BLOCK: {tl}.constexpr):\n"
            f'{pad}    """The float32 partial sums of {kernel.name}, in the output\'s type."""\n'
            f"{pad}    offsets = {tl}.program_id(0) * BLOCK + {tl}.arange(0, BLOCK)\n"
            f"{pad}    mask = offsets < n\n"
            f"{pad}    {tl}.store(dst_ptr + offsets, {tl}.load(src_ptr + offsets, mask=mask).to(dst_ptr.dtype.element_ty), "
            f"mask=mask)\n\n\n")
    return insert_before_line(source, min(d.lineno for d in kernel.node.decorator_list), text)


def _argument(source: str, kernel: Kernel, site: LaunchSite, name: str) -> str:
    param = next(p for p in kernel.params if p.name == name)
    if name in site.keywords:
        return segment(source, site.keywords[name])
    if param.index < len(site.args):
        return segment(source, site.args[param.index])
    raise NotApplicable(f"line {site.line}: `{name}` is not passed")


def _step(source: str, kernel: Kernel, site: LaunchSite, name: str, meta: Optional[str]) -> str:
    """The step as the launch knows it: its keyword, the autotuner's choice or the default."""
    if name in site.keywords:
        return segment(source, site.keywords[name])
    if kernel.autotune is not None and meta is not None:
        return f"{meta}[{name!r}]"
    param = next(p for p in kernel.params if p.name == name)
    if param.default is not None:
        return segment(source, param.default)
    raise NotApplicable(f"line {site.line}: the launch does not say what `{name}` is")


def _allocation(source: str, kernel: Kernel, site: LaunchSite, output: str) -> tuple[ast.Name, ast.Call]:
    """The local the launch passes as the output and its ``torch.empty`` / ``empty_like``: what the
    kernel does not store stays undefined either way, so zeroing it changes nothing."""
    param = next(p for p in kernel.params if p.name == output)
    passed = site.keywords.get(output) or (site.args[param.index] if param.index < len(site.args) else None)
    if not isinstance(passed, ast.Name):
        raise NotApplicable(f"line {site.line}: the output is not a local tensor")
    bound = next((b for a in reversed(_assignments(site.function, site.line))
                  if (b := _bound_node(a, passed.id)) is not None), None)
    if not (isinstance(bound, ast.Call) and isinstance(bound.func, ast.Attribute)
            and ast.unparse(bound.func.value) == "torch" and bound.func.attr in ("empty", "empty_like")):
        raise NotApplicable(f"`{passed.id}` is not allocated with torch.empty here: it could not be zeroed")
    between = [s for s in ast.walk(site.function) if isinstance(s, ast.stmt) and bound.lineno < s.lineno < site.line
               and not any(n is site.node for n in ast.walk(s))]
    if any(reads(s, passed.id) for s in between):
        raise NotApplicable(f"`{passed.id}` is used before the launch")
    return passed, bound
