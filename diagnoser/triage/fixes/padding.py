"""nv.scalar-access on a GEMM whose sizes are not multiples of 16 -> the GEMM runs on zero-padded operands.

Triton's JIT specializes an integer argument on one property: divisible by 16. With M, N or K at
3000, 3333 or 4095 neither the row strides nor the masks `k < K`, `n < N` along the contiguous
axis are provably aligned, so every load and store of the GEMM stays scalar (16-bit accesses in
the sm90 PTX where the aligned cases get 128-bit `cp.async`); on the H200 those cases run at
11-19% of their roofline against 75-91% for the aligned ones. Padding only the strides is not
enough: the masks still compare against the unaligned sizes.

What the rewrite does, and why it computes the same result: each input of the launch is copied
(a small Triton kernel, so the hot path stays Triton) into a buffer whose last two dimensions are
rounded up to multiples of 16 and filled with zeros beyond the data; the output is allocated with
its last two dimensions rounded up the same way; the launch gets the rounded sizes; the forward
returns the output's original extent. The padded rows and columns of the inputs are zeros, so
each kept output element sums exactly the products it summed before; the padded part of the
output is never returned. An output the forward does not return but passes on to later launches
(a row sum or a norm after the GEMM) stays padded: they receive its strides and the sizes they
were given, so they read its kept extent only; any other read of it is refused. This holds only
for a kernel whose one cross-element operation is the dot, so the fix refuses any kernel that reduces, scans, sorts or uses atomics, any launch passing
a tensor that is neither an input, one of the module's own tensors (a weight, a bias: padded like
the inputs) nor the returned output, and any matrix the kernel does not index through its strides. Inputs already aligned are passed as they
are: an aligned case costs one check per input.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from ..source import LaunchSite
from .common import context_for, target_kernels, tl_name
from .edit import Edit, NotApplicable, apply, indentation, insert_before_line, replace, segment, span

ALIGN = 16  # what the JIT's divisibility specialization tests integers for
PAD, ROUND = "_zero_padded", "_up16"
# Operations across elements other than the dot: over a padded axis they would see the zeros.
ACROSS = {"sum", "max", "min", "reduce", "cumsum", "cumprod", "associative_scan", "argmax", "argmin", "sort",
          "histogram", "xor_sum", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
          "atomic_xor", "atomic_xchg", "atomic_cas", "gather", "topk", "flip"}

HELPERS = '''

@{triton}.jit
def _zero_pad_kernel(src_ptr, dst_ptr, rows, cols, rows_padded, cols_padded, stride_sb, stride_sr, stride_sc,
                     BLOCK: {tl}.constexpr):
    """One row of the padded copy: the source's row where it has one, zeros past its extent."""
    program = {tl}.program_id(0).to({tl}.int64)
    batch, row = program // rows_padded, program % rows_padded
    offs = {tl}.program_id(1) * BLOCK + {tl}.arange(0, BLOCK)
    inside = (row < rows) & (offs < cols)
    value = {tl}.load(src_ptr + batch * stride_sb + row * stride_sr + offs * stride_sc, mask=inside, other=0)
    {tl}.store(dst_ptr + program * cols_padded + offs, value, mask=offs < cols_padded)


def {round}(n):
    """`n` rounded up to a multiple of {align}, the divisibility Triton's JIT specializes integers on."""
    return -(-n // {align}) * {align}


def {pad}(x):
    """`x` with its last two dimensions (a vector: its one) rounded up to multiples of {align}, zeros
    beyond its data (`x` itself when they already are): the GEMM's loads and masks become provably
    aligned, and the zeros add nothing to any product or epilogue value that is kept."""
    rows, cols = (x.shape[-2] if x.dim() > 1 else 1), x.shape[-1]
    rows_padded = {round}(rows) if x.dim() > 1 else 1
    if rows == rows_padded and cols % {align} == 0:
        return x
    shape = (*x.shape[:-2], rows_padded, {round}(cols)) if x.dim() > 1 else ({round}(cols),)
    out = torch.empty(shape, device=x.device, dtype=x.dtype)
    if x.numel():
        batches = x.numel() // (rows * cols)
        stride_b, stride_r = (x.stride(0) if x.dim() == 3 else 0), (x.stride(-2) if x.dim() > 1 else 0)
        block = 1024
        _zero_pad_kernel[(batches * rows_padded, {triton}.cdiv({round}(cols), block))](
            x, out, rows, cols, rows_padded, {round}(cols), stride_b, stride_r, x.stride(-1), BLOCK=block)
    return out
'''


def fix_padded_gemm(source: str, finding: Optional[Finding], ctx: Optional[TriageContext]) -> str:
    ctx = context_for(source, ctx)
    if PAD in source:
        raise NotApplicable("nv.scalar-access: the GEMM already runs on padded operands")
    if not ctx.traces or not any(t.launches for t in ctx.traces):
        raise NotApplicable("nv.scalar-access: padding needs the problem's cases (which of them are misaligned)")
    names = {kernel.name for kernel in target_kernels(ctx, finding, "nv.scalar-access")}
    sites = [site for site in ctx.source.launches if site.kernel in names and site.function is not None
             and "dot" in _calls(ctx.source.kernels[site.kernel])]
    if len(sites) != 1:
        raise NotApplicable(f"nv.scalar-access: padding rewrites one GEMM launch, the file has {len(sites)}")
    edits = _rewrite(source, ctx, sites[0])
    module = ctx.source.tree
    if "torch" not in {a.asname or a.name for n in module.body if isinstance(n, ast.Import) for a in n.names}:
        raise NotApplicable("nv.scalar-access: padding needs `import torch` in the file")
    first = min(min([n.lineno] + [d.lineno for d in n.decorator_list]) for n in module.body
                if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
    triton = min(ctx.source.triton_aliases) if ctx.source.triton_aliases else "triton"
    helpers = HELPERS.format(triton=triton, tl=tl_name(ctx), pad=PAD, round=ROUND, align=ALIGN)
    edits.append(insert_before_line(source, first, helpers.lstrip("\n") + "\n\n"))
    return apply(source, edits)


@dataclass
class GemmLaunch:
    """The one GEMM launch padding rewrites, and what the stages read of the forward around it."""

    source: str
    ctx: TriageContext
    site: LaunchSite
    kernel: Any
    forward: ast.FunctionDef
    launch: ast.stmt
    output: ast.Name           # the tensor the kernel writes
    returned: Optional[ast.Return]  # the forward's `return OUTPUT`; None for an output later launches read
    ranks: dict[str, int]      # tensor name -> its rank in the captured cases


@dataclass
class Operands:
    """What padding does to each argument of the launch."""

    inputs: list[str] = field(default_factory=list)       # the forward's own matrices: padded copies
    rounded: list[ast.expr] = field(default_factory=list)  # sizes of the last two dimensions: rounded up
    inline: list[ast.expr] = field(default_factory=list)   # the module's vectors (`self.bias`): padded in place
    bound: dict[str, str] = field(default_factory=dict)    # the module's matrices: padded once, bound to a name


def _rewrite(source: str, ctx: TriageContext, site: LaunchSite) -> list:
    """The edits, stage by stage; each stage refuses, with its reason, what it cannot keep exact."""
    gemm = _gemm_launch(source, ctx, site)
    operands = _operands(gemm)
    _refuse_unpaddable(gemm, operands)
    return _edits(gemm, operands)


def _calls(kernel) -> set[str]:
    """The `tl.X(...)`/`obj.X(...)` calls a kernel makes, by attribute name."""
    return {n.func.attr for n in ast.walk(kernel.node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}


def _gemm_launch(source: str, ctx: TriageContext, site: LaunchSite) -> GemmLaunch:
    """The launch, if its kernel's one cross-element operation is the dot."""
    kernel = ctx.source.kernels[site.kernel]
    calls = _calls(kernel)
    if "dot" not in calls:
        raise NotApplicable(f"nv.scalar-access: {site.kernel} has no tl.dot, and padding is only exact for a GEMM")
    if calls & ACROSS:
        raise NotApplicable(f"nv.scalar-access: {site.kernel} calls tl.{sorted(calls & ACROSS)[0]}, which would "
                            "see the padding's zeros")
    forward, launch = site.function, _statement_of(site)
    output, returned = _output(forward, launch, site)
    return GemmLaunch(source, ctx, site, kernel, forward, launch, output, returned, _ranks(ctx, site, kernel))


def _operands(gemm: GemmLaunch) -> Operands:
    """Each positional argument classified: an input, a module tensor, a size to round, or as it is."""
    source, ctx, site, kernel = gemm.source, gemm.ctx, gemm.site, gemm.kernel
    parameters = ({a.arg for a in gemm.forward.args.args} - {"self"}) | _module_tensors(gemm.forward, gemm.launch)
    strided = {_operand(n.func.value) for arg in [*site.args, *site.keywords.values()] for n in ast.walk(arg)
               if isinstance(n, ast.Call) and _is_stride(n)} - {None}
    sizes = _sizes(gemm.forward, gemm.launch)
    operands = Operands()
    for position, argument in enumerate(site.args):
        kind = _kind(ctx, site, kernel, position)
        if kind == "tensor" and _from_self(argument) and _rank_at(ctx, site, kernel, position) == 1:
            operands.inline.append(argument)  # `self.bias`, read as a vector: padded where it is passed
        elif kind == "tensor" and _from_self(argument):
            text = _operand(argument)  # `self.gemm.weight` with its strides: padded once, before the launch
            if text not in strided:
                raise NotApplicable(f"nv.scalar-access: `{text}` is passed without its strides (indexed as flat memory)")
            bound = operands.bound
            bound.setdefault(text, f"_padded_{argument.attr}" + (f"_{len(bound) + 1}" if bound else ""))
        elif kind == "tensor":
            if not isinstance(argument, ast.Name) or argument.id not in parameters | {gemm.output.id}:
                raise NotApplicable(f"nv.scalar-access: the launch passes `{segment(source, argument)}`, neither an input "
                                    "nor the returned output: padding would have to extend it too")
            if argument.id not in strided and gemm.ranks.get(argument.id, 2) > 1:
                raise NotApplicable(f"nv.scalar-access: `{argument.id}` is passed without its strides (indexed as flat memory)")
            if argument.id != gemm.output.id:
                operands.inputs.append(argument.id)
        elif kind == "int" and not (isinstance(argument, ast.Call) and _is_stride(argument)):
            origin = sizes.get(argument.id) if isinstance(argument, ast.Name) else None
            if origin is None:
                raise NotApplicable(f"nv.scalar-access: `{segment(source, argument)}` is not a size the forward reads "
                                    "off an input's shape")
            tensor, dim = origin
            rank = gemm.ranks.get(tensor, 2)
            if (dim + rank if dim < 0 else dim) >= rank - 2:  # one of the last two dimensions: padded
                operands.rounded.append(argument)
    for name in site.keywords:
        kinds = {launch.args[name].kind for launch in _records(ctx, site) if name in launch.args}
        if kinds & {"tensor", "int"}:
            raise NotApplicable(f"nv.scalar-access: `{name}=` passes a {sorted(kinds)[0]} by keyword; padding "
                                "rewrites positional operands and sizes only")
    return operands


def _refuse_unpaddable(gemm: GemmLaunch, operands: Operands) -> None:
    """Refuse a launch with nothing to pad, or whose padded inputs the forward reads again."""
    inputs = operands.inputs
    if not inputs and not operands.bound:
        raise NotApplicable("nv.scalar-access: the launch passes no matrix of the forward's own")
    used = sorted(_read_after(gemm.forward, gemm.launch) & set(inputs))
    if used:
        raise NotApplicable(f"nv.scalar-access: `{used[0]}` is used after the launch, where it would be the padded copy")
    if any(gemm.ranks.get(name, 2) not in (1, 2, 3) for name in inputs):
        raise NotApplicable("nv.scalar-access: padding copies operands of 1 to 3 dimensions only")
    if not _misaligned(gemm.ctx, gemm.site, gemm.kernel):
        raise NotApplicable("nv.scalar-access: every case's GEMM sizes are multiples of 16 already")


def _edits(gemm: GemmLaunch, operands: Operands) -> list:
    """The output allocated padded, the sizes rounded, the operands padded before the launch, and a
    returned output cut back to its extent."""
    source, output, inputs, bound = gemm.source, gemm.output, operands.inputs, operands.bound
    allocation = _allocation(gemm.forward, output, gemm.launch)
    dims = _dims(allocation)
    if any(isinstance(n, ast.Name) and n.id in inputs for d in dims for n in ast.walk(d)):
        raise NotApplicable(f"nv.scalar-access: `{output.id}`'s shape is read off an input that padding replaces")
    kept = [segment(source, d) for d in dims]
    padded_dims = kept[:-2] + [f"{ROUND}({d})" for d in kept[-2:]]
    if len(allocation.args) == 1:
        edits = [replace(source, allocation.args[0], f"({', '.join(padded_dims)})")]
    else:
        edits = [_replace_positional(source, allocation, padded_dims)]
    edits += [replace(source, argument, f"{ROUND}({segment(source, argument)})") for argument in operands.rounded]
    edits += [replace(source, argument, f"{PAD}({segment(source, argument)})") for argument in operands.inline]
    edits += [replace(source, node, bound[_operand(node)]) for argument in gemm.site.args for node in ast.walk(argument)
              if _operand(node) in bound]
    names, values = [*inputs, *bound.values()], [*(f"{PAD}({n})" for n in inputs), *(f"{PAD}({t})" for t in bound)]
    line = gemm.launch.lineno
    edits.append(insert_before_line(source, line, f"{indentation(source, line)}{', '.join(names)} = {', '.join(values)}\n"))
    if gemm.returned is not None:  # an output later launches read keeps its padding: they are given its strides
        extent = ", ".join([":"] * (len(kept) - 2) + [f":{d}" for d in kept[-2:]])
        edits.append(replace(source, gemm.returned.value, f"{output.id}[{extent}]"))
    return edits


def _module_tensors(forward: ast.FunctionDef, launch: ast.stmt) -> set[str]:
    """Names the forward binds to its module's own tensors before the launch (`w, b = self.linear.weight,
    self.linear.bias`): operands like its inputs, padded the same way."""
    names = set()
    for statement in forward.body[:forward.body.index(launch)]:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
            pairs = (zip(target.elts, value.elts) if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                     and len(target.elts) == len(value.elts) else [(target, value)])
            names |= {t.id for t, v in pairs if isinstance(t, ast.Name) and _from_self(v)}
    return names


def _operand(node: ast.AST) -> Optional[str]:
    """A tensor the forward names: `A`, or the module's `self.gemm.weight`, as its source text."""
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node) if _from_self(node) else None


def _from_self(node: ast.expr) -> bool:
    """`self.x`, `self.linear.weight`: one of the module's own tensors."""
    if not isinstance(node, ast.Attribute):
        return False
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _statement_of(site: LaunchSite) -> ast.stmt:
    """The forward's top-level statement that is the launch (a launch inside a block is left alone)."""
    for statement in site.function.body:
        if any(node is site.node for node in ast.walk(statement)):
            if not isinstance(statement, ast.Expr):
                raise NotApplicable("nv.scalar-access: the launch is inside a block; padding rewrites a plain launch")
            return statement
    raise NotApplicable("nv.scalar-access: the launch is not a statement of its function")


def _output(forward: ast.FunctionDef, launch: ast.stmt, site: LaunchSite) -> tuple[ast.Name, Optional[ast.Return]]:
    """The tensor the GEMM writes: the name the forward returns right after the launch, or else the one
    launch argument allocated before it that later launches read through its strides only (a GEMM
    whose output a row reduction or a norm reads next). Those launches keep the sizes they were
    given, so they read the kept extent of the padded buffer and never its padding."""
    last = forward.body[-1]
    passed = [argument for argument in site.args if isinstance(argument, ast.Name)]
    if isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and last.value.id in {a.id for a in passed}:
        return _returned_output(forward, launch)
    before = forward.body[:forward.body.index(launch)]
    allocated = {t.id for s in before if isinstance(s, ast.Assign) and _is_torch_empty(s.value)
                 for t in s.targets if isinstance(t, ast.Name)}
    written = [argument for argument in passed if argument.id in allocated]
    if len(written) != 1:
        raise NotApplicable("nv.scalar-access: padding needs a forward that ends in `return OUTPUT`, or an output "
                            "that only later launches read")
    _read_through_strides_only(forward, launch, written[0].id)
    return written[0], None


def _read_through_strides_only(forward: ast.FunctionDef, launch: ast.stmt, name: str) -> None:
    """Refuse an intermediate output read after the launch other than as a launch argument passed with
    its row stride, or through `.stride()` (its shape, a copy, a return would see the padding)."""
    for node, parents in _names_after(forward, launch):
        if node.id != name:
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.attr == "stride" and isinstance(parents.get(parent), ast.Call):
            continue
        if (isinstance(node.ctx, ast.Load) and isinstance(parent, ast.Call) and node in parent.args
                and isinstance(parent.func, ast.Subscript) and any(_is_row_stride(a, name) for a in parent.args)):
            continue
        raise NotApplicable(f"nv.scalar-access: `{name}` is read after the launch other than by a launch given "
                            f"its strides (line {node.lineno}): it would see the padding")


def _is_row_stride(node: ast.expr, name: str) -> bool:
    """`NAME.stride(0)` (or `NAME.stride(-2)` of a matrix)."""
    return (isinstance(node, ast.Call) and _is_stride(node) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name and len(node.args) == 1 and _literal_int(node.args[0]) in (0, -2))


def _is_torch_empty(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "empty"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch")


def _read_after(forward: ast.FunctionDef, launch: ast.stmt) -> set[str]:
    """Names the forward reads after the launch, leaving out `.device` and `.dtype`, which a padded
    copy shares with its original."""
    return {node.id for node, parents in _names_after(forward, launch)
            if not (isinstance(parents.get(node), ast.Attribute) and parents[node].attr in ("device", "dtype"))}


def _names_after(forward: ast.FunctionDef, launch: ast.stmt) -> Iterator[tuple[ast.Name, dict[ast.AST, ast.AST]]]:
    """Every name in the forward's statements after the launch, with its statement's child -> parent map."""
    for statement in forward.body[forward.body.index(launch) + 1:]:
        parents = {child: node for node in ast.walk(statement) for child in ast.iter_child_nodes(node)}
        yield from ((node, parents) for node in ast.walk(statement) if isinstance(node, ast.Name))


def _returned_output(forward: ast.FunctionDef, launch: ast.stmt) -> tuple[ast.Name, ast.Return]:
    """The output: the one name the forward returns right after the launch, used nowhere in between."""
    returns = [n for n in ast.walk(forward) if isinstance(n, ast.Return)]
    last = forward.body[-1]
    if len(returns) != 1 or returns[0] is not last or not isinstance(last.value, ast.Name):
        raise NotApplicable("nv.scalar-access: padding needs a forward that ends in `return OUTPUT`")
    between = forward.body[forward.body.index(launch) + 1:-1]
    if any(isinstance(n, ast.Name) and n.id == last.value.id for s in between for n in ast.walk(s)):
        raise NotApplicable(f"nv.scalar-access: `{last.value.id}` is used between the launch and the return")
    return last.value, last


def _allocation(forward: ast.FunctionDef, output: ast.Name, launch: ast.stmt) -> ast.Call:
    """`OUTPUT = torch.empty(...)`, the output's one assignment, before the launch."""
    assigned = [s for s in forward.body if isinstance(s, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == output.id for t in s.targets)]
    if len(assigned) != 1 or assigned[0].lineno > launch.lineno or len(assigned[0].targets) != 1:
        raise NotApplicable(f"nv.scalar-access: `{output.id}` is not assigned once before the launch")
    value = assigned[0].value
    if not (_is_torch_empty(value) and value.args):
        raise NotApplicable(f"nv.scalar-access: `{output.id}` is not a `torch.empty(shape, ...)`")
    return value


def _dims(allocation: ast.Call) -> list[ast.expr]:
    shape = allocation.args[0] if len(allocation.args) == 1 else None
    dims = list(shape.elts) if isinstance(shape, (ast.Tuple, ast.List)) else list(allocation.args)
    if len(dims) not in (2, 3) or any(isinstance(d, ast.Starred) for d in dims):
        raise NotApplicable("nv.scalar-access: the output is not allocated with 2 or 3 explicit dimensions")
    return dims


def _replace_positional(source: str, allocation: ast.Call, padded_dims: list[str]) -> Edit:
    """`torch.empty(M, N, ...)`: the dimensions as one tuple, the keywords kept."""
    start, _ = span(source, allocation.args[0])
    _, end = span(source, allocation.args[-1])
    return Edit(start, end, f"({', '.join(padded_dims)})")


def _sizes(forward: ast.FunctionDef, launch: ast.stmt) -> dict[str, tuple[str, int]]:
    """name -> (tensor, dimension) for sizes the forward reads off a tensor before the launch:
    `M, K = A.shape`, `N = B.shape[1]`, `N = B.size(-1)` (a negative dimension counts from the end)."""
    found: dict[str, tuple[str, int]] = {}
    for statement in forward.body[:forward.body.index(launch)]:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target, value = statement.targets[0], statement.value
        if isinstance(target, ast.Tuple) and _shape_of(value):
            rank = len(target.elts)
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Name):
                    found[element.id] = (_shape_of(value), index - rank)
        elif isinstance(target, ast.Name):
            indexed = _indexed_shape(value)
            if indexed:
                found[target.id] = indexed
            else:
                found.pop(target.id, None)
    return found


def _shape_of(node: ast.expr) -> Optional[str]:
    """`X.shape` or `X.size()` -> "X" (also `self.gemm.weight.shape` -> "self.gemm.weight")."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return _operand(node.value)
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute) and node.func.attr == "size":
        return _operand(node.func.value)
    return None


def _indexed_shape(node: ast.expr) -> Optional[tuple[str, int]]:
    """`X.shape[i]` or `X.size(i)` with a literal i -> ("X", i)."""
    if isinstance(node, ast.Subscript) and _shape_of(node.value) and _literal_int(node.slice) is not None:
        return _shape_of(node.value), _literal_int(node.slice)
    if (isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.func, ast.Attribute)
            and node.func.attr == "size" and _operand(node.func.value) and _literal_int(node.args[0]) is not None):
        return _operand(node.func.value), _literal_int(node.args[0])
    return None


def _literal_int(node: ast.expr) -> Optional[int]:
    """`1` -> 1, `-1` -> -1; anything else -> None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_int(node.operand)
        return None if inner is None else -inner
    return None


def _is_stride(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and node.func.attr == "stride"


def _records(ctx: TriageContext, site: LaunchSite):
    return [launch for trace in ctx.traces for launch in trace.launches
            if launch.kernel == site.kernel and launch.line == site.line]


def _kind(ctx: TriageContext, site: LaunchSite, kernel, position: int) -> Optional[str]:
    if position >= len(kernel.params):
        return None
    kinds = {launch.args[kernel.params[position].name].kind for launch in _records(ctx, site)
             if kernel.params[position].name in launch.args}
    return kinds.pop() if len(kinds) == 1 else None


def _rank_at(ctx: TriageContext, site: LaunchSite, kernel, position: int) -> Optional[int]:
    ranks = {len(launch.args[kernel.params[position].name].shape) for launch in _records(ctx, site)
             if position < len(kernel.params) and kernel.params[position].name in launch.args}
    return ranks.pop() if len(ranks) == 1 else None


def _ranks(ctx: TriageContext, site: LaunchSite, kernel) -> dict[str, int]:
    """The rank of each tensor the launch passes by name (`A`, `self.gemm.weight`), as the traced cases pass it."""
    return {_operand(argument): rank for position, argument in enumerate(site.args)
            if _operand(argument) and _kind(ctx, site, kernel, position) == "tensor"
            and (rank := _rank_at(ctx, site, kernel, position)) is not None}


def _misaligned(ctx: TriageContext, site: LaunchSite, kernel) -> bool:
    """Whether some traced case passes a tensor whose last two dimensions are not both multiples of 16."""
    return any(info.kind == "tensor" and len(info.shape) >= 2 and (info.shape[-1] % ALIGN or info.shape[-2] % ALIGN)
               for launch in _records(ctx, site) for info in launch.args.values())
