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
    # NVIDIA
    "global_access": "one global load/store: {op: load|store, vector_bits, elements, dtype, masked, via: ld.global|cp.async|tma}",
    "spill": "local-memory spills of a kernel: {spill_stores_bytes, spill_loads_bytes, local_bytes}",
    "convert_layout": "a ttg.convert_layout: {src, dst, in_loop, through_shared}",
    "layout": "a layout chosen for a tensor: {encoding: blocked|mma|dot_op|shared|slice, mma_version, detail}",
    "dot_lowering": "how a tt.dot lowers: {kind: wgmma|mma_sync|fma, mma_version, instr_shape, operand_dtype, input_precision}",
    "pipelining": "a loop that feeds tt.dot: {requested_stages, async_copies, tma, pipelined}",
    "barrier_in_loop": "a CTA barrier inside a loop: {count}",
    "resources": "per kernel: {registers, spills, shared_bytes, num_warps, num_stages, local_bytes}",
    "occupancy": "theoretical occupancy on the target: {programs_per_sm, warps_per_sm, occupancy, limiter}",
    "int64_index": "64-bit integer arithmetic on an index: {ops, in_loop}",
    "divrem_in_loop": "integer division/remainder in a loop or per element: {op, in_loop, per_element}",
    "atomic": "an atomic: {op, sem, scope, in_loop}",
    "reduction_in_loop": "a reduction inside a loop: {op, cross_warp}",
    "launch": "one launch per forward: {grid, programs, sm_count, waves}",
    # Ascend (Triton-Ascend's ttadapter stage)
    "discrete_access": "a load/store lowered to a scalar loop (TritonToUnstructure)",
    "masked_load_fill": "a masked load whose default value becomes a fill before the copy",
    "int64_arith": "int64 add/compare that falls back to scalar code",
    "ub_usage": "bytes of on-chip buffers per program against the unified buffer: {bytes, limit}",
    "core_mode": "vector (aiv) / cube (aic) / mix mode chosen for the kernel",
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
