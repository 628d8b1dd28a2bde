"""Source-level detectors for NVIDIA (rung 1): the kernel as written plus what each case launches.

Each detector takes the `TriageContext` and returns findings. They read the walk of every
(case, launch) (`ctx.analyses`), which carries both what the compiler will be able to prove
(AxisInfo mirror) and what is actually true for the case; without a problem they fall back to
the kernel walked with the launch site's literals (`ctx.static`) and say less.

One module per pattern family: `access` (vector width, coalescing, index math), `tiles` (block
sizes, registers, shared memory, pipelining), `matmul` (dot lowering, GEMM tile order, fixed
configs), `tile_fit` (a GEMM tile against the shape it runs), `launches` (grid size, launch
count), `reductions` (layout conversions, loop-carried reductions, atomics), `special`
(special-function work against the tensor cores), `short_k` (a GEMM tile's fill and epilogue
against its K loop) and `traffic` (unfused epilogues, redundant reads); `measures` holds the
quantities several of them compute.
"""
from __future__ import annotations

from .access import detect_access_width, detect_index_math
from .launches import detect_grid_size, detect_launch_count
from .matmul import detect_dot_lowering, detect_grouped_order, detect_hardcoded_config
from .reductions import detect_atomics, detect_layout_conversions, detect_loop_reductions
from .short_k import detect_short_k
from .special import detect_sfu_bound
from .tile_fit import detect_tile_fit
from .tiles import detect_block_sizes, detect_pipelining, detect_register_pressure, detect_shared_memory
from .traffic import detect_redundant_traffic, detect_unfused

__all__ = ["detect_access_width", "detect_block_sizes", "detect_register_pressure", "detect_dot_lowering",
           "detect_pipelining", "detect_shared_memory", "detect_layout_conversions", "detect_loop_reductions",
           "detect_grouped_order", "detect_grid_size", "detect_launch_count", "detect_atomics", "detect_unfused",
           "detect_redundant_traffic", "detect_hardcoded_config", "detect_index_math", "detect_tile_fit",
           "detect_sfu_bound", "detect_short_k"]
