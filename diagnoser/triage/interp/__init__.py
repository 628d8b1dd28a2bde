"""Walk a Triton kernel's Python source the way the compiler will see it, for one launch.

The walk evaluates every expression in two domains at once:
- abstract: the AxisInfo lattice (what the compiler can *prove* about index tensors), shapes,
  element widths and dependency tags (program id, loaded values, loop variables);
- concrete: the actual integer values for one sampled program id (what is *true* for this case),
  computed with numpy for index math only; anything that depends on loaded data is unknown.

It records the kernel's memory accesses, dots, reductions, atomics, integer division, 64-bit
index math, layout-changing ops and loops, each with its source line. Source detectors read this
report; fixes compare the abstract and concrete views to know which hints are true.
"""
from .numeric import axis_strides, true_vector
from .reductions import SCANS
from .report import (Access, Atomic, DivMod, Dot, Int64Op, KernelReport, LayoutOp, Loop, OuterProduct,
                     Reduction, Tile, Where)
from .values import Binding, V
from .walker import KernelWalker, sample_pids, walk_kernel

__all__ = [
    "Access", "Atomic", "Binding", "DivMod", "Dot", "Int64Op", "KernelReport", "KernelWalker", "LayoutOp",
    "Loop", "OuterProduct", "Reduction", "SCANS", "Tile", "V", "Where", "axis_strides", "sample_pids",
    "true_vector", "walk_kernel",
]
