"""The records every rung exchanges: IR facts (rung 3) and findings (all rungs).

They are plain, JSON-serialisable dataclasses so that a report can be rendered from a journal
alone and so that rungs can run in different processes (or on different machines) and still
hand each other their results.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# The fact kinds rung 3 emits, with what `value` holds. Triage detectors and rung 4 read these
# names: extend the table, never rename an entry.
FACT_KINDS: dict[str, str] = {
    # NVIDIA (diagnoser.ir.nvidia). Every fact also has kernel, file, line, stage, excerpt.
    "global_access": "one source-level global load/store: {op: load|store, vector_bits, elements, dtype, masked, "
                     "via: ld.global|cp.async|tma, in_loop, instructions, widths, tensor_shape}; vector_bits is the "
                     "narrowest PTX access it became (None when no PTX instruction matched)",
    "spill": "local-memory spills of a kernel, on the line with most STL/LDL: {spill_stores_bytes, "
             "spill_loads_bytes, local_bytes, stl, ldl, in_loop, lines: {line: count}}",
    "convert_layout": "a ttg.convert_layout: {src, dst, in_loop, through_shared, shape, dtype, src_layout, dst_layout}; "
                      "through_shared: PTX moves data through shared memory at that source position",
    "layout": "a layout chosen for a tensor: {encoding: blocked|mma|dot_op|shared|slice|linear, mma_version, detail, alias}",
    "dot_lowering": "how a tt.dot lowers: {kind: wgmma|mma_sync|fma|tcgen05, mma_version, instr_shape, operand_dtype, "
                    "accumulator_dtype, input_precision, in_loop, sass: {HGMMA|HMMA|FFMA...: count}}",
    "pipelining": "a loop that loads from global memory (K-loops feed tt.dot): {requested_stages, async_copies, tma, "
                  "pipelined, sync_loads, buffers, feeds_dot, depth}",
    "barrier_in_loop": "CTA barriers (bar.sync) inside a loop, per source line: {count, loop_line, loop_depth, instruction}",
    "resources": "per kernel: {registers, spills, shared_bytes, num_warps, num_stages, local_bytes, spill_stores_bytes, "
                 "spill_loads_bytes, stack_bytes, barriers[, driver_registers, driver_spills]}",
    "occupancy": "theoretical occupancy on the target: {programs_per_sm, warps_per_sm, occupancy, limiter: "
                 "registers|shared_memory|warps|blocks, limits, device}",
    "int64_index": "64-bit integer arithmetic per element or in a loop, per source line: {ops, in_loop, per_element, count}",
    "divrem_in_loop": "integer division/remainder in a loop or per element: {op, in_loop, per_element, dtype, "
                      "constant_divisor, power_of_two}",
    "atomic": "an atomic: {op, sem, scope, in_loop, per_element, dtype}",
    "reduction_in_loop": "a reduction inside a loop: {op, cross_warp, warps_along_axis, axis, shape}",
    "launch": "launches of a kernel with one grid in one case: {grid, programs, sm_count, waves, count, case, "
              "programs_per_sm, forward_launches}; on Ascend sm_count is the cores it runs on and waves the rounds",
    # Ascend (diagnoser.ir.ascend, Triton-Ascend's ttadapter stage)
    "discrete_access": "a load/store lowered to a scalar loop (TritonToUnstructure): {op, elements, dtype, in_loop}",
    "masked_load_fill": "a masked load whose default value becomes a fill before the copy: {fill, shape, dtype}",
    "int64_arith": "int64 vector add/sub that falls back to scalar code: {op, dtype, shape, count, in_loop} "
                   "(compares: int_compare)",
    "int_compare": "an int32/int64 vector compare, scalar code on A2/A3: {op, predicate, dtype, shape, count, in_loop}",
    "ub_usage": "bytes of on-chip buffers per program against the unified buffer: {bytes, limit, buffers, "
                "largest_bytes, multibuffer_factor, fits}",
    "unaligned_tail": "a buffer whose last axis is not 32-byte (vector) / 512-byte (cube) aligned and gets padded: "
                      "{shape, dtype, tail_bytes, alignment, padded_bytes}",
    "core_mode": "vector (aiv) / cube (aic) / mix mode chosen for the kernel: {mode, cores, matmuls, parallel_mode}",
}


@dataclass
class Fact:
    """One thing the compiler produced, tied to the Python source line it came from."""

    kernel: str
    kind: str
    value: Any
    file: str | None = None
    line: int | None = None
    stage: str = ""  # ttir | ttgir | llir | ptx | sass | meta | ttadapter ...
    excerpt: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Fact":
        return cls(**data)


@dataclass
class Finding:
    """A diagnosis: a (possibly catalogued) slow pattern with the evidence that shows it.

    `evidence` items are dicts with a `type` of `source` (file, line, text), `fact` (a Fact as a
    dict), `metric` (name, value, unit), or `chunk` (path, start, end, pass, score).
    """

    pattern: str | None
    rung: int
    title: str
    file: str | None = None
    line: int | None = None
    kernel: str | None = None
    confidence: float = 0.5
    evidence: list[dict[str, Any]] = field(default_factory=list)
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Finding":
        return cls(**data)


FACT_FIELDS = tuple(Fact.__dataclass_fields__)


def fact_of(item: dict[str, Any]) -> dict[str, Any] | None:
    """The Fact (as a dict) inside a `fact` evidence item, whether nested under "fact" or flattened."""
    if item.get("type") != "fact":
        return None
    if isinstance(item.get("fact"), dict):
        return item["fact"]
    return {key: item.get(key) for key in FACT_FIELDS}
