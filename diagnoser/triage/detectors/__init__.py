"""The detectors, as one ordered mapping of named, listable rules (data in, findings out).

Each entry says which level it reads (`source`, `ir`, `profile`), which backend it is for and
which catalog ids it can emit; catalog entries name their detector here, and the catalog loader
checks that every named detector exists.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ladder.diagnoser.evidence import Finding

from ..context import TriageContext
from . import ascend, ir, profile, source


@dataclass(frozen=True)
class Detector:
    run: Callable[[TriageContext], list[Finding]]
    level: str                  # source | ir | profile
    backend: str                # nvidia | ascend | any
    patterns: tuple[str, ...]

    @property
    def doc(self) -> str:
        return (self.run.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")


DETECTORS: dict[str, Detector] = {
    # source level (rung 1): the kernel and what each case launches
    "access_width": Detector(source.detect_access_width, "source", "nvidia", ("nv.scalar-access", "nv.strided-inner-axis")),
    "block_sizes": Detector(source.detect_block_sizes, "source", "nvidia", ("nv.tiny-block", "nv.oversized-block")),
    "register_pressure": Detector(source.detect_register_pressure, "source", "nvidia", ("nv.register-spill",)),
    "dot_lowering": Detector(source.detect_dot_lowering, "source", "nvidia", ("nv.mma-v2-on-hopper", "nv.no-tensor-core")),
    "pipelining": Detector(source.detect_pipelining, "source", "nvidia", ("nv.unpipelined-loop",)),
    "shared_memory": Detector(source.detect_shared_memory, "source", "nvidia", ("nv.smem-limits-occupancy",)),
    "layout_conversions": Detector(source.detect_layout_conversions, "source", "nvidia", ("nv.hot-layout-conversion",)),
    "loop_reductions": Detector(source.detect_loop_reductions, "source", "nvidia", ("nv.loop-carried-reduction",)),
    "grouped_order": Detector(source.detect_grouped_order, "source", "nvidia", ("nv.gemm-no-grouped-order",)),
    "grid_size": Detector(source.detect_grid_size, "source", "nvidia", ("nv.small-grid",)),
    "launch_count": Detector(source.detect_launch_count, "source", "nvidia", ("nv.launch-bound",)),
    "atomics": Detector(source.detect_atomics, "source", "nvidia", ("nv.atomic-contention",)),
    "unfused": Detector(source.detect_unfused, "source", "nvidia", ("nv.unfused-epilogue",)),
    "redundant_traffic": Detector(source.detect_redundant_traffic, "source", "nvidia", ("nv.redundant-global-traffic",)),
    "hardcoded_config": Detector(source.detect_hardcoded_config, "source", "nvidia", ("nv.hardcoded-config",)),
    "tile_fit": Detector(source.detect_tile_fit, "source", "nvidia", ("nv.tile-misfit",)),
    "sfu_bound": Detector(source.detect_sfu_bound, "source", "nvidia",
                          ("nv.sfu-bound-loop",)),
    "short_k": Detector(source.detect_short_k, "source", "nvidia", ("nv.short-k-loop",)),
    "index_math": Detector(source.detect_index_math, "source", "nvidia", ("nv.index-div-mod", "nv.int64-index")),
    "npu_grid": Detector(ascend.detect_npu_grid, "source", "ascend", ("npu.grid-exceeds-cores",)),
    "npu_ub": Detector(ascend.detect_npu_ub, "source", "ascend", ("npu.ub-overflow",)),
    "npu_alignment": Detector(ascend.detect_npu_alignment, "source", "ascend", ("npu.unaligned-tail-axis",)),
    "npu_int64": Detector(ascend.detect_npu_int64, "source", "ascend", ("npu.int64-scalar-fallback",)),
    "npu_discrete": Detector(ascend.detect_npu_discrete, "source", "ascend", ("npu.discrete-access",)),
    "npu_masked_fill": Detector(ascend.detect_npu_masked_fill, "source", "ascend", ("npu.masked-load-fill",)),
    "npu_where": Detector(ascend.detect_npu_where, "source", "ascend", ("npu.where-condition-dtype",)),
    "npu_single_pass": Detector(ascend.detect_npu_single_pass, "source", "ascend", ("npu.no-multibuffer-overlap",)),
    # IR level (rung-3 facts)
    "ir_access": Detector(ir.detect_ir_access, "ir", "nvidia", ("nv.scalar-access",)),
    "ir_spill": Detector(ir.detect_ir_spill, "ir", "nvidia", ("nv.register-spill",)),
    "ir_layout": Detector(ir.detect_ir_layout, "ir", "nvidia", ("nv.hot-layout-conversion",)),
    "ir_dot": Detector(ir.detect_ir_dot, "ir", "nvidia", ("nv.mma-v2-on-hopper", "nv.no-tensor-core")),
    "ir_pipelining": Detector(ir.detect_ir_pipelining, "ir", "nvidia", ("nv.unpipelined-loop",)),
    "ir_occupancy": Detector(ir.detect_ir_occupancy, "ir", "nvidia", ("nv.smem-limits-occupancy",)),
    "ir_reductions": Detector(ir.detect_ir_reductions, "ir", "nvidia", ("nv.loop-carried-reduction",)),
    "ir_index": Detector(ir.detect_ir_index, "ir", "nvidia", ("nv.index-div-mod", "nv.int64-index")),
    "ir_atomics": Detector(ir.detect_ir_atomics, "ir", "nvidia", ("nv.atomic-contention",)),
    "ir_launch": Detector(ir.detect_ir_launch, "ir", "any", ("nv.small-grid", "npu.grid-exceeds-cores")),
    "ir_tile_fit": Detector(ir.detect_ir_tile_fit, "ir", "nvidia", ("nv.tile-misfit",)),
    "ir_tiny_block": Detector(ir.detect_ir_tiny_block, "ir", "nvidia", ("nv.tiny-block",)),
    "ir_ascend": Detector(ir.detect_ir_ascend, "ir", "ascend",
                          ("npu.discrete-access", "npu.masked-load-fill", "npu.int64-scalar-fallback",
                           "npu.where-condition-dtype", "npu.ub-overflow", "npu.unaligned-tail-axis")),
    # profile level (rung-2 metrics)
    "profile": Detector(profile.detect_profile, "profile", "nvidia",
                        ("nv.small-grid", "nv.smem-limits-occupancy", "nv.launch-bound", "nv.register-spill",
                         "nv.loop-carried-reduction")),
}


def detectors_for(target: str) -> dict[str, Detector]:
    """The detectors that apply to a backend (`nvidia` or `ascend`)."""
    return {name: d for name, d in DETECTORS.items() if d.backend in ("any", target)}
