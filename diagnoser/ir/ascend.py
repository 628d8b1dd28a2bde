"""Fact extractors for Triton-Ascend kernels, read from the `ttadapter` stage (linalg/memref/HIVM).

They look for what Triton-Ascend's performance guide warns about (docs/en/migration_guide/
performance_guidelines.md and architecture_difference.md): loads and stores lowered to scalar loops
(TritonToUnstructure marks them `ExtractedLoadOrStore` / `DiscreteMemAccess`), the fill a masked
load performs before its copy (`scf.if {linalg.fill}` under `hivm.unlikely_condition`), int64
vector adds and integer vector compares (run as scalar code on A2/A3), on-chip buffers against the
192 KB unified buffer, tail axes that get padded, vector/cube mode, and grids against the core count.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Callable

from ladder.diagnoser.evidence import Fact
from ladder.diagnoser.ir.mlir import Module, Op, element_bits, tensor_types
from ladder.diagnoser.ir.view import Context, KernelView

CORE_MODES = {"aiv": "vector", "aic": "cube", "mix": "cube+vector"}


def _memref_shape(text: str) -> tuple[list[int], str] | None:
    """Static shape and element type of the `memref<...>` an op produces (`memref.alloc() : memref<..>`)."""
    match = re.search(r":\s*memref<((?:\d+x)*)([a-z]\w*)", text)
    if not match:
        return None
    dims = [int(dim) for dim in match.group(1).split("x") if dim]
    return dims, match.group(2)


def _bytes(dims: list[int], element: str) -> int:
    return math.prod(dims) * max(1, (element_bits(element) or 8) // 8)


def discrete_access(view: KernelView, context: Context) -> list[Fact]:
    """Loads/stores Triton-Ascend could not make contiguous: one scalar access per element, in a loop."""
    module = view.ttadapter
    if module is None:
        return []
    facts = []
    for loop in module.find("scf.for"):
        if "ExtractedLoadOrStore" not in loop.tail:
            continue
        inside = module.inside(loop)
        loads = [op for op in inside if op.name in ("memref.load", "tensor.extract")
                 and "DiscreteMemAccess" not in op.text]
        stores = [op for op in inside if op.name == "memref.store"]
        trip = re.search(r"to %c(\d+) ", loop.text)
        result = tensor_types(loop.text)
        value = {"op": "store" if stores and not loads else "load", "elements": int(trip.group(1)) if trip else None,
                 "dtype": result[0].element if result else None, "in_loop": loop.in_loop}
        facts.append(view.fact("discrete_access", value, frame=loop.frame, stage="ttadapter",
                               excerpt="\n".join([loop.text, *(op.text for op in inside[:4])])))
    return facts


def masked_load_fill(view: KernelView, context: Context) -> list[Fact]:
    """A masked load whose `other` (0 by default) is written over the whole buffer before the copy."""
    module = view.ttadapter
    if module is None:
        return []
    facts = []
    for branch in module.find("scf.if"):
        if "hivm.unlikely_condition" not in branch.tail:
            continue
        fills = [op for op in module.inside(branch) if op.name == "linalg.fill" and "memref<" in op.text]
        for fill in fills:
            constant = re.search(r"ins\((%[\w.]+)", fill.text)
            defined = module.definition(constant.group(1)) if constant else None
            fill_value = re.search(r"arith\.constant ([^:]+):", defined.text) if defined else None
            shape = _memref_shape(fill.text.replace("outs(", ": "))
            value = {"fill": fill_value.group(1).strip() if fill_value else None,
                     "shape": shape[0] if shape else None, "dtype": shape[1] if shape else None}
            facts.append(view.fact("masked_load_fill", value, frame=branch.frame or fill.frame, stage="ttadapter",
                                   excerpt="\n".join([branch.text, fill.text])))
    return facts


def int64_arith(view: KernelView, context: Context) -> list[Fact]:
    """int64 vector adds/subs: no vector instruction on A2/A3, so they run element by element."""
    return _vector_int_ops(view, ("arith.addi", "arith.subi"), ("i64",), "int64_arith")


def int_compare(view: KernelView, context: Context) -> list[Fact]:
    """int32/int64 vector compares (masks such as `cols < N`): scalar code on A2/A3."""
    return _vector_int_ops(view, ("arith.cmpi",), ("i32", "i64"), "int_compare")


def _vector_int_ops(view: KernelView, names: tuple[str, ...], elements: tuple[str, ...], kind: str) -> list[Fact]:
    module = view.ttadapter
    if module is None:
        return []
    groups: dict[tuple, list[Op]] = defaultdict(list)
    for op in module.find(*names):
        types = tensor_types(op.text.split(" loc(")[0])
        if types and types[-1].element in elements and op.frame:
            groups[(op.name, op.frame.file, op.frame.line)].append(op)
    facts = []
    for (name, _, _), ops in groups.items():
        shape = tensor_types(ops[0].text.split(" loc(")[0])[-1]
        value = {"op": name.split(".")[1], "dtype": shape.element, "shape": list(shape.shape),
                 "count": len(ops), "in_loop": any(op.in_loop for op in ops)}
        if name == "arith.cmpi":
            value["predicate"] = ops[0].text.split(name, 1)[1].split(",")[0].strip()
        facts.append(view.fact(kind, value, frame=ops[0].frame, stage="ttadapter", excerpt=ops[0].text))
    return facts


def _buffers(module: Module) -> list[tuple[Op, list[int], str]]:
    found = []
    for op in module.find("memref.alloc", "tensor.empty"):
        shape = _memref_shape(op.text) if op.name == "memref.alloc" else None
        if op.name == "tensor.empty" and (types := tensor_types(op.text.split(" loc(")[0])):
            shape = (list(types[-1].shape), types[-1].element)
        if shape and all(dim > 0 for dim in shape[0]):
            found.append((op, *shape))
    return found


def ub_usage(view: KernelView, context: Context) -> list[Fact]:
    """On-chip buffers a program allocates, against the unified buffer (halved by double buffering)."""
    module = view.ttadapter
    if module is None:
        return []
    buffers = _buffers(module)
    if not buffers:
        return []
    device = context.device or {}
    limit = device.get("unified_buffer_bytes")
    factor = device.get("multibuffer_factor", 1) if view.kernel.metadata.get("multibuffer", True) else 1
    total = sum(_bytes(dims, element) for _, dims, element in buffers)
    largest = max(buffers, key=lambda item: _bytes(item[1], item[2]))
    value = {"bytes": total, "limit": limit, "buffers": len(buffers),
             "largest_bytes": _bytes(largest[1], largest[2]), "multibuffer_factor": factor,
             "fits": total * factor <= limit if limit else None}
    return [view.fact("ub_usage", value, frame=largest[0].frame, stage="ttadapter", excerpt=largest[0].text)]


def unaligned_tail(view: KernelView, context: Context) -> list[Fact]:
    """Multi-dimensional buffers whose last axis is not a multiple of 32 bytes: the UB pads it.

    (The stricter 512-byte rule for cube+vector kernels is left to the catalog: which buffers it
    applies to is not visible at this stage.)
    """
    module = view.ttadapter
    if module is None:
        return []
    alignment = (context.device or {}).get("vector_tail_alignment_bytes", 32)
    facts, seen = [], set()
    for op, dims, element in _buffers(module):
        if op.name != "memref.alloc" or len(dims) < 2:
            continue
        tail = dims[-1] * max(1, (element_bits(element) or 8) // 8)
        key = (tuple(dims), element, op.frame.line if op.frame else None)
        if tail % alignment == 0 or key in seen:
            continue
        seen.add(key)
        value = {"shape": dims, "dtype": element, "tail_bytes": tail, "alignment": alignment,
                 "padded_bytes": math.ceil(tail / alignment) * alignment}
        facts.append(view.fact("unaligned_tail", value, frame=op.frame, stage="ttadapter", excerpt=op.text))
    return facts


def core_mode(view: KernelView, context: Context) -> list[Fact]:
    """Whether the kernel runs on vector cores (aiv), cube cores (aic) or both (mix)."""
    module = view.ttadapter
    if module is None:
        return []
    function = next(iter(module.find("func.func")), None)
    mode = view.kernel.metadata.get("mix_mode")
    matmuls = module.find("linalg.matmul", "linalg.batch_matmul")
    value = {"mode": mode, "cores": CORE_MODES.get(mode, mode), "matmuls": len(matmuls),
             "parallel_mode": function.attribute("parallel_mode").strip('"') if function and function.attribute(
                 "parallel_mode") else None}
    return [view.fact("core_mode", value, stage="ttadapter", excerpt=function.text[-200:] if function else "")]


def launch(view: KernelView, context: Context) -> list[Fact]:
    """Grids against the cores the kernel runs on: programs beyond them run in further rounds."""
    if not view.kernel.launches:
        return []
    device = context.device or {}
    cube = view.kernel.metadata.get("mix_mode") in ("aic", "mix")
    cores = device.get("aicore_count" if cube else "vectorcore_count")
    counts: dict[tuple, int] = defaultdict(int)
    for item in view.kernel.launches:
        counts[(item["case"], tuple(item["grid"]))] += 1
    facts = []
    for (case, grid), count in counts.items():
        programs = math.prod(grid)
        value = {"grid": list(grid), "programs": programs, "count": count, "case": case, "sm_count": cores,
                 "waves": math.ceil(programs / cores) if cores else None,
                 "forward_launches": context.launches_per_case.get(case), "max_grid": device.get("max_grid")}
        facts.append(view.fact("launch", value, stage="meta", excerpt=f"{view.kernel.name}[{grid}] x{count}"))
    return facts


Extractor = Callable[[KernelView, Context], list[Fact]]

EXTRACTORS: dict[str, Extractor] = {
    "launch": launch,
    "core_mode": core_mode,
    "ub_usage": ub_usage,
    "discrete_access": discrete_access,
    "masked_load_fill": masked_load_fill,
    "int64_arith": int64_arith,
    "int_compare": int_compare,
    "unaligned_tail": unaligned_tail,
}
