"""Fact extractors for kernels compiled for NVIDIA GPUs: one function per fact kind.

Each reads the stage that decides the question (TTGIR for what the compiler chose, PTX for what it
emitted, SASS/cubin for what the hardware runs) and ties the answer to the user's source line
through the op's location. `EXTRACTORS` lists them in the order a report reads them; the value of
each fact is documented in `ladder.diagnoser.evidence.FACT_KINDS`.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Callable

from ladder.diagnoser.evidence import Fact
from ladder.runner import hardware
from ladder.diagnoser.ir.mlir import Module, Op, element_bits, tensor_types
from ladder.diagnoser.ir.ptx import async_copy_bits, global_access_bits
from ladder.diagnoser.ir.view import Context, KernelView

INPUT_PRECISION = {"0": "tf32", "1": "tf32x3", "2": "ieee"}
GLOBAL_OPS = {
    "tt.load": ("load", "ld.global"),
    "tt.store": ("store", "st.global"),
    "ttg.async_copy_global_to_local": ("load", "cp.async"),
    "tt.descriptor_load": ("load", "tma"),
    "tt.descriptor_store": ("store", "tma"),
    "tt.descriptor_gather": ("load", "tma"),
    "tt.descriptor_scatter": ("store", "tma"),
    "ttng.async_tma_copy_global_to_local": ("load", "tma"),
    "ttng.async_tma_copy_local_to_global": ("store", "tma"),
    "ttng.async_tma_gather": ("load", "tma"),
    "ttng.async_tma_scatter": ("store", "tma"),
}
DOT_OPS = ("tt.dot", "ttng.warp_group_dot", "tt.dot_scaled", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled")
INT_DIVREM = ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi", "arith.ceildivsi",
              "arith.ceildivui")
BARRIERS = ("bar.sync", "barrier.sync", "bar.arrive", "barrier.arrive", "bar.red", "barrier.sync.aligned",
            "barrier.cta.sync", "barrier.cta.sync.aligned", "barrier.cta.arrive")
SHARED_TRAFFIC = ("st.shared", "ld.shared", "stmatrix", "ldmatrix")


def _excerpt(*parts: str) -> str:
    return "\n".join(part for part in parts if part)


def _frame_key(op: Op) -> tuple:
    frame = op.frame
    return (frame.file, frame.line, frame.col) if frame else (None, op.index)


def _encoding_kind(definition: str) -> str:
    for prefix, kind in (("#ttg.blocked", "blocked"), ("#ttg.nvidia_mma", "mma"), ("#ttg.amd_mfma", "mma"),
                         ("#ttg.dot_op", "dot_op"), ("#ttg.slice", "slice"), ("#ttg.linear", "linear"),
                         ("#ttg.nvmma_shared", "shared"), ("#ttg.swizzled_shared", "shared"),
                         ("#ttg.shared", "shared"), ("#ttng.tensor_memory", "tensor_memory")):
        if definition.startswith(prefix):
            return kind
    return definition.split("<")[0].lstrip("#") or "unknown"


def _mma_version(definition: str) -> int | None:
    match = re.search(r"versionMajor = (\d+)", definition)
    return int(match.group(1)) if match else None


def _int_list(definition: str, name: str) -> list[int] | None:
    match = re.search(rf"{name} = \[([\d,\s]*)\]", definition)
    return [int(x) for x in match.group(1).split(",") if x.strip()] if match else None


def _warps_along(module: Module, encoding: str | None, axis: int) -> int | None:
    """How many warps a layout spreads along one tensor axis (slice layouts via their parent)."""
    if encoding is None:
        return None
    definition = module.resolve_alias(encoding)
    if definition.startswith("#ttg.slice"):
        dim = int(re.search(r"dim = (\d+)", definition).group(1))
        parent = re.search(r"parent = (#[\w.]+(?:<.*>)?)\}>$", definition)
        return _warps_along(module, parent.group(1) if parent else None, axis if axis < dim else axis + 1)
    warps = _int_list(definition, "warpsPerCTA")
    return warps[axis] if warps and axis < len(warps) else None


def _result_type(op: Op) -> str:
    """The last type on an op line: the result type of arith ops (`extsi ... to tensor<..>` too)."""
    body = op.text.split(" loc(")[0]
    return body.rsplit(" : ", 1)[1].split(" to ")[-1].strip() if " : " in body else ""


def _is_i64(type_text: str) -> bool:
    types = tensor_types(type_text)
    return types[-1].element == "i64" if types else type_text == "i64"


def _is_tensor(type_text: str) -> bool:
    return type_text.startswith("tensor<")


# ---------------------------------------------------------------------------------------------
# Extractors
# ---------------------------------------------------------------------------------------------

def global_access(view: KernelView, context: Context) -> list[Fact]:
    """Each source-level global load/store, with the width of the PTX instructions it became."""
    module, code = view.ttgir, view.ptx
    if module is None:
        return []
    groups: dict[tuple, list[Op]] = defaultdict(list)
    for op in module.ops:
        if op.name in GLOBAL_OPS:
            groups[(GLOBAL_OPS[op.name], _frame_key(op))].append(op)
    facts = []
    for ((kind, via), _), ops in groups.items():
        op = ops[0]
        frame = op.frame
        types = tensor_types(op.text.split(" loc(")[0])
        block = types[0] if types else None  # a tensor of pointers, or a TMA descriptor's block
        if via == "tma":
            dtype, shape = (block.element, list(block.shape)) if block else (None, [])
        else:
            dtype = block.pointee if block and block.pointee else _scalar_pointee(op.text)
            shape = list(block.shape) if block and block.pointee else []
        matches = _ptx_matches(code, frame, kind, via) if code is not None and frame else []
        widths = [bits for _, bits in matches if bits]  # a TMA copy moves a whole tile: no width
        bits = min(widths) if widths else None
        ebits = element_bits(dtype) if dtype else None
        value = {
            "op": kind, "vector_bits": bits, "elements": bits // ebits if bits and ebits else None,
            "dtype": dtype, "masked": _is_masked(op), "via": via, "in_loop": any(o.in_loop for o in ops),
            "instructions": len(matches), "widths": sorted(set(widths)), "tensor_shape": shape,
        }
        facts.append(view.fact("global_access", value, frame=frame, stage="ptx" if matches else "ttgir",
                               excerpt=_excerpt(op.text, matches[0][0].text if matches else "")))
    return facts


def _scalar_pointee(text: str) -> str | None:
    match = re.search(r"!tt\.ptr<([^,>]+)", text)
    return match.group(1) if match else None


def _is_masked(op: Op) -> bool:
    if op.name == "ttg.async_copy_global_to_local":
        return " mask " in op.text
    operands = len(op.operands())
    return operands >= 2 if op.name == "tt.load" else operands >= 3 if op.name == "tt.store" else False


def _ptx_matches(code: Any, frame: Any, kind: str, via: str) -> list[tuple[Any, int]]:
    def widths(instructions: list) -> list[tuple[Any, int]]:
        found = []
        for instruction in instructions:
            if via == "cp.async":
                bits = async_copy_bits(instruction)
            elif via == "tma":
                bits = 0 if instruction.opcode.startswith("cp.async.bulk.tensor") else None
            else:
                access = global_access_bits(instruction.opcode)
                bits = access[1] if access and access[0] == kind else None
            if bits is not None:
                found.append((instruction, bits))
        return found

    return widths(code.at(frame.file, frame.line, frame.col)) or widths(code.at(frame.file, frame.line))


def spill(view: KernelView, context: Context) -> list[Fact]:
    """Local-memory spills, placed on the source line with the most spill instructions (STL/LDL)."""
    resources = view.kernel.resources
    stores, loads = resources.get("spill_stores_bytes", 0), resources.get("spill_loads_bytes", 0)
    spill_instructions = [ins for ins in view.sass if ins.opcode.split(".")[0] in ("STL", "LDL")]
    if not (stores or loads or spill_instructions):
        return []
    per_line = Counter((ins.frame.file, ins.frame.line) for ins in spill_instructions if ins.frame)
    frame = None
    if per_line:
        (file, line), _ = per_line.most_common(1)[0]
        frame = next(ins.frame for ins in spill_instructions if ins.frame and (ins.frame.file, ins.frame.line) == (file, line))
    value = {
        "spill_stores_bytes": stores, "spill_loads_bytes": loads, "local_bytes": resources.get("local_bytes", 0),
        "stl": sum(ins.opcode.startswith("STL") for ins in spill_instructions),
        "ldl": sum(ins.opcode.startswith("LDL") for ins in spill_instructions),
        "in_loop": any(ins.in_loop for ins in spill_instructions),
        "lines": {f"{line}": count for (_, line), count in per_line.most_common()},
    }
    excerpt = "\n".join(ins.text for ins in spill_instructions[:4])
    return [view.fact("spill", value, frame=frame, stage="sass", excerpt=excerpt)]


def convert_layout(view: KernelView, context: Context) -> list[Fact]:
    """Each ttg.convert_layout left in the final TTGIR: what to what, in a loop or not."""
    module, code = view.ttgir, view.ptx
    if module is None:
        return []
    facts = []
    for op in module.find("ttg.convert_layout"):
        types = tensor_types(op.text.split(" loc(")[0])
        if len(types) < 2:
            continue
        source, target = types[0], types[-1]
        src_def, dst_def = module.resolve_alias(source.encoding or ""), module.resolve_alias(target.encoding or "")
        frame = op.frame
        shared = bool(code and frame and any(ins.opcode.startswith(SHARED_TRAFFIC)
                                             for ins in code.at(frame.file, frame.line, frame.col)))
        value = {"src": _encoding_kind(src_def), "dst": _encoding_kind(dst_def), "in_loop": op.in_loop,
                 "through_shared": shared, "shape": list(source.shape), "dtype": source.element,
                 "src_layout": src_def, "dst_layout": dst_def}
        facts.append(view.fact("convert_layout", value, frame=frame, stage="ttgir", excerpt=op.text))
    return facts


def layout(view: KernelView, context: Context) -> list[Fact]:
    """Each layout the compiler chose, on the first op that uses it (a dot for MMA layouts)."""
    module = view.ttgir
    if module is None:
        return []
    facts = []
    for alias, definition in module.aliases.items():
        kind = _encoding_kind(definition)
        if definition.startswith("#ttg.shared_memory") or definition.startswith("#ttng.tensor_memory_space"):
            continue
        users = [op for op in module.ops if re.search(rf"{re.escape(alias)}\b(?![\w])", op.text + op.tail)
                 and op.frame is not None]
        if not users:
            continue
        user = next((op for op in users if op.name in DOT_OPS), users[0]) if kind == "mma" else users[0]
        value = {"encoding": kind, "mma_version": _mma_version(definition), "alias": alias, "detail": definition}
        facts.append(view.fact("layout", value, frame=user.frame, stage="ttgir", excerpt=f"{alias} = {definition}"))
    return facts


def dot_lowering(view: KernelView, context: Context) -> list[Fact]:
    """How each tt.dot lowers: wgmma (HGMMA), mma.sync (HMMA) or FMA, checked against the SASS."""
    module = view.ttgir
    if module is None:
        return []
    groups: dict[tuple, list[Op]] = defaultdict(list)
    for op in module.find(*DOT_OPS):
        groups[_frame_key(op)].append(op)
    facts = []
    for ops in groups.values():
        op = ops[0]
        types = tensor_types(op.text.split(" loc(")[0])
        result = types[-1] if types else None
        encoding = module.resolve_alias(result.encoding) if result and result.encoding else ""
        version = _mma_version(encoding)
        if op.name == "ttng.warp_group_dot":
            kind = "wgmma"
        elif op.name.startswith("ttng.tc_gen5"):
            kind = "tcgen05"
        elif version == 2 or version == 1:
            kind = "mma_sync"
        else:
            kind = "fma"
        frame = op.frame
        sass_ops = Counter(ins.opcode.split(".")[0] for ins in view.sass
                           if ins.frame and frame and (ins.frame.file, ins.frame.line) == (frame.file, frame.line)
                           and ins.opcode.split(".")[0] in ("HGMMA", "HMMA", "IMMA", "QGMMA", "IGMMA", "FFMA", "DFMA"))
        precision = op.attribute("inputPrecision")
        value = {
            "kind": kind, "mma_version": version, "instr_shape": _int_list(encoding, "instrShape"),
            "operand_dtype": types[0].element if types else None, "accumulator_dtype": result.element if result else None,
            "input_precision": INPUT_PRECISION.get(precision, precision),
            "in_loop": op.in_loop, "sass": dict(sass_ops),
        }
        facts.append(view.fact("dot_lowering", value, frame=frame, stage="ttgir", excerpt=op.text))
    return facts


def pipelining(view: KernelView, context: Context) -> list[Fact]:
    """Each loop that loads from global memory: were its loads made asynchronous, how many buffers."""
    module = view.ttgir
    if module is None:
        return []
    facts = []
    allocations = {result: op for op in module.find("ttg.local_alloc") for result in op.results}
    for loop in module.find("scf.for", "scf.while"):
        inside = module.inside(loop)
        names = Counter(op.name for op in inside)
        async_copies = names["ttg.async_copy_global_to_local"]
        tma = sum(names[name] for name, (kind, via) in GLOBAL_OPS.items() if via == "tma" and kind == "load")
        plain = names["tt.load"]
        if not (async_copies or tma or plain):
            continue
        buffers = [tensor_types(allocations[operand].text)[0].shape[0]
                   for op in inside if op.name == "ttg.memdesc_index"
                   for operand in op.operands()[:1] if operand in allocations
                   and tensor_types(allocations[operand].text)]
        requested = loop.attribute("tt.num_stages")
        value = {
            "requested_stages": int(requested) if requested else view.kernel.metadata.get("num_stages"),
            "async_copies": async_copies, "tma": tma, "sync_loads": plain,
            "pipelined": bool(async_copies or tma), "buffers": max(buffers) if buffers else None,
            "feeds_dot": any(name in names for name in DOT_OPS), "depth": len(loop.loops) + 1,
        }
        facts.append(view.fact("pipelining", value, frame=loop.frame, stage="ttgir", excerpt=loop.text))
    return facts


def barrier_in_loop(view: KernelView, context: Context) -> list[Fact]:
    """CTA-wide barriers (bar.sync) executed on every iteration of a loop, per source line."""
    code = view.ptx
    if code is None:
        return []
    groups: dict[tuple, list] = defaultdict(list)
    for instruction in code.instructions:
        if instruction.in_loop and instruction.opcode in BARRIERS:
            frame = instruction.frame
            groups[(instruction.loops[-1], (frame.file, frame.line) if frame else None)].append(instruction)
    facts = []
    for (loop_number, _), instructions in groups.items():
        loop = code.loops[loop_number]
        loop_frame = code.instructions[loop.end].frame or _instruction_frame(code, loop.start)
        value = {"count": len(instructions), "loop_line": loop_frame.line if loop_frame else None,
                 "loop_depth": loop.depth, "instruction": instructions[0].opcode}
        facts.append(view.fact("barrier_in_loop", value, frame=instructions[0].frame, stage="ptx",
                               excerpt=instructions[0].text))
    return facts


def _instruction_frame(code: Any, index: int) -> Any:
    """The user frame of the first instruction at or after `index` that has one."""
    for instruction in code.instructions[index:]:
        if instruction.frame:
            return instruction.frame
    return None


def resources(view: KernelView, context: Context) -> list[Fact]:
    """Registers, spills, shared and local memory of the kernel as compiled."""
    used = view.kernel.resources
    if not used:
        return []
    value = {
        "registers": used.get("registers"),
        "spills": used.get("spill_stores_bytes", 0) + used.get("spill_loads_bytes", 0),
        "shared_bytes": used.get("shared_bytes"),
        "num_warps": used.get("num_warps"),
        "num_stages": used.get("num_stages"),
        "local_bytes": used.get("local_bytes"),
        **{key: used[key] for key in ("spill_stores_bytes", "spill_loads_bytes", "stack_bytes", "barriers",
                                       "driver_registers", "driver_spills") if key in used},
    }
    return [view.fact("resources", value, stage="sass")]


def occupancy(view: KernelView, context: Context) -> list[Fact]:
    """Theoretical programs per SM on the target device, and which resource limits them."""
    used = view.kernel.resources
    if context.device is None or not used or "max_warps_per_sm" not in context.device:
        return []
    value = hardware.occupancy(context.device, registers=used.get("registers"),
                               shared_bytes=used.get("shared_bytes") or 0, num_warps=used.get("num_warps") or 4)
    value["device"] = context.device["name"]
    return [view.fact("occupancy", value, stage="meta")]


def int64_index(view: KernelView, context: Context) -> list[Fact]:
    """64-bit integer arithmetic done per element or in a loop, per source line."""
    module = view.ttgir
    if module is None:
        return []
    groups: dict[tuple, list[Op]] = defaultdict(list)
    for op in module.ops:
        if not op.name.startswith("arith.") or op.name in ("arith.constant", "arith.cmpi", "arith.select"):
            continue
        result = _result_type(op)
        if _is_i64(result) and (_is_tensor(result) or op.in_loop) and op.frame:
            groups[(op.frame.file, op.frame.line)].append(op)
    facts = []
    for ops in groups.values():
        value = {"ops": sorted({op.name for op in ops}), "in_loop": any(op.in_loop for op in ops),
                 "per_element": any(_is_tensor(_result_type(op)) for op in ops), "count": len(ops)}
        facts.append(view.fact("int64_index", value, frame=ops[0].frame, stage="ttgir", excerpt=ops[0].text))
    return facts


def divrem_in_loop(view: KernelView, context: Context) -> list[Fact]:
    """Integer division or remainder done per element or inside a loop."""
    module = view.ttgir
    if module is None:
        return []
    facts = []
    for op in module.find(*INT_DIVREM):
        result = _result_type(op)
        per_element = _is_tensor(result)
        if not (op.in_loop or per_element):
            continue
        divisor = _constant_value(module, op.operands()[1]) if len(op.operands()) > 1 else None
        value = {"op": op.name.split(".")[1], "in_loop": op.in_loop, "per_element": per_element,
                 "dtype": tensor_types(result)[-1].element if per_element else result,
                 "constant_divisor": divisor is not None,
                 "power_of_two": bool(divisor and divisor > 0 and divisor & (divisor - 1) == 0)}
        facts.append(view.fact("divrem_in_loop", value, frame=op.frame, stage="ttgir", excerpt=op.text))
    return facts


def _constant_value(module: Module, value: str) -> int | None:
    """The integer a value always holds (through splats and broadcasts), if it is a constant."""
    op = module.definition(value)
    while op is not None and op.name in ("tt.splat", "tt.broadcast", "tt.expand_dims") and op.operands():
        op = module.definition(op.operands()[0])
    if op is None or op.name != "arith.constant":
        return None
    match = re.search(r"(?:dense<)?(-?\d+)>?\s*:", op.text)
    return int(match.group(1)) if match else None


def atomic(view: KernelView, context: Context) -> list[Fact]:
    """Each atomic with its operation, memory-ordering semantics and scope."""
    module = view.ttgir
    if module is None:
        return []
    facts, seen = [], set()
    for op in module.find("tt.atomic_rmw", "tt.atomic_cas"):
        words = [word.strip() for word in op.text.split(op.name, 1)[1].split("%")[0].split(",") if word.strip()]
        if op.name == "tt.atomic_cas":
            words = ["cas", *words]
        kind, sem, scope = (words + [None, None, None])[:3]
        key = (kind, sem, scope, _frame_key(op))
        if key in seen:
            continue
        seen.add(key)
        types = tensor_types(op.text.split(" loc(")[0])
        value = {"op": kind, "sem": sem, "scope": scope, "in_loop": op.in_loop,
                 "per_element": bool(types), "dtype": types[-1].element if types else _scalar_pointee(op.text)}
        facts.append(view.fact("atomic", value, frame=op.frame, stage="ttgir", excerpt=op.text))
    return facts


def reduction_in_loop(view: KernelView, context: Context) -> list[Fact]:
    """A tt.reduce inside a loop, and whether it must combine across warps (shared memory + barrier)."""
    module = view.ttgir
    if module is None:
        return []
    facts = []
    for op in module.find("tt.reduce"):
        if not op.in_loop:
            continue
        axis = int(op.attribute("axis"))
        operand = tensor_types(op.tail)
        warps = _warps_along(module, operand[0].encoding, axis) if operand else None
        combine = next((inner.name.split(".")[1] for inner in module.inside(op)
                        if inner.name.startswith("arith.")), None)
        value = {"op": combine, "cross_warp": warps > 1 if warps is not None else None, "warps_along_axis": warps,
                 "axis": axis, "shape": list(operand[0].shape) if operand else []}
        facts.append(view.fact("reduction_in_loop", value, frame=op.frame, stage="ttgir", excerpt=op.text))
    return facts


def launch(view: KernelView, context: Context) -> list[Fact]:
    """Launches per forward with their grids, against the device's SM count and resident programs."""
    launches = view.kernel.launches
    if not launches:
        return []
    per_grid = Counter((launch_["case"], tuple(launch_["grid"] or ())) for launch_ in launches)
    device = context.device or {}
    sm_count = device.get("sm_count") or device.get("vectorcore_count")
    resident = None
    if device.get("max_warps_per_sm") and view.kernel.resources:
        used = view.kernel.resources
        resident = hardware.occupancy(device, registers=used.get("registers"),
                                      shared_bytes=used.get("shared_bytes") or 0,
                                      num_warps=used.get("num_warps") or 4)["programs_per_sm"]
    facts = []
    for (case, grid), count in per_grid.items():
        programs = 1
        for size in grid:
            programs *= size
        slots = sm_count * resident if sm_count and resident else sm_count
        value = {"grid": list(grid), "programs": programs, "count": count, "case": case, "sm_count": sm_count,
                 "programs_per_sm": resident, "waves": round(programs / slots, 3) if slots else None,
                 "forward_launches": context.launches_per_case.get(case)}
        facts.append(view.fact("launch", value, stage="meta", excerpt=f"{view.kernel.name}[{tuple(grid)}] x{count}"))
    return facts


Extractor = Callable[[KernelView, Context], list[Fact]]

EXTRACTORS: dict[str, Extractor] = {
    "launch": launch,
    "resources": resources,
    "occupancy": occupancy,
    "spill": spill,
    "global_access": global_access,
    "layout": layout,
    "convert_layout": convert_layout,
    "dot_lowering": dot_lowering,
    "pipelining": pipelining,
    "barrier_in_loop": barrier_in_loop,
    "reduction_in_loop": reduction_in_loop,
    "int64_index": int64_index,
    "divrem_in_loop": divrem_in_loop,
    "atomic": atomic,
}
