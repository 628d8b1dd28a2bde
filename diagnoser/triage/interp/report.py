"""What the walk records about a kernel: one entry per memory access, dot, reduction, atomic,
integer division, 64-bit index op, layout change, select, outer product, special-function call,
loop and tile, each with its source line, gathered in a `KernelReport`: what source detectors and
fixes read."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from .. import axisinfo as ax
from ..axisinfo import AxisInfo


@dataclass
class Access:
    """One tl.load / tl.store / atomic."""

    node_id: int
    line: int
    op: str                         # load | store | atomic
    base: Optional[str]
    shape: tuple[int, ...]
    elem_bits: int
    masked: bool
    has_other: bool
    loops: tuple[int, ...]
    info: AxisInfo
    width: ax.AccessWidth
    deps: frozenset
    block_ptr: bool = False
    true_vec: Optional[int] = None  # widest vector the real addresses allow (elements)
    true_strides: Optional[tuple[Optional[int], ...]] = None  # element stride along each dim
    care_padding: Optional[bool] = None
    dot_operand: bool = False
    sample_offsets: Any = None      # concrete element offsets for the first sampled program
    from_dot: bool = False          # a store of a value computed by tl.dot (an accumulator tile)
    mask_constancy: Optional[int] = None  # the mask's constancy along the access's fastest dim
    end_line: Optional[int] = None  # last line of the call (the compiler may cite any line of it)
    block_order: Optional[tuple[int, ...]] = None  # block pointers: their `order` (fastest dim first)
    dims: tuple = ()                # per dim, the tile constexprs sizing it (see V.dims)

    @property
    def in_loop(self) -> bool:
        return bool(self.loops)

    @property
    def numel(self) -> int:
        return math.prod(self.shape) if self.shape else 1


@dataclass
class Dot:
    node_id: int
    line: int
    a_shape: tuple[int, ...]
    b_shape: tuple[int, ...]
    a_bits: int
    b_bits: int
    input_precision: Optional[str]
    loops: tuple[int, ...]
    operand_origins: frozenset
    a_origins: frozenset = frozenset()  # loads the A operand comes from
    m_params: frozenset = frozenset()   # constexprs sizing M, N, K (from the operands' tl.arange ends)
    n_params: frozenset = frozenset()
    k_params: frozenset = frozenset()


@dataclass
class Reduction:
    node_id: int
    line: int
    op: str
    axis: Optional[int]
    in_shape: tuple[int, ...]
    loops: tuple[int, ...]
    cross_warp: bool
    from_dot: bool = False
    outer_product: bool = False     # reduces a broadcast product: a matmul done on CUDA cores
    used_in_loop: bool = False      # its value reaches a store, dot or atomic inside its own loop
    pairwise: bool = False          # reduces f(a[:, None, :], b[None, :, :]) over the shared axis
    shared_matvec: bool = False     # sums W * v[None, :] with W the same for every program: a GEMV per program


@dataclass
class Atomic:
    node_id: int
    line: int
    op: str
    sem: Optional[str]
    loops: tuple[int, ...]
    program_varying: bool           # address depends on program id
    distinct_addresses: Optional[int]  # distinct addresses per program (concrete)
    shape: tuple[int, ...]
    indirect: bool = False          # address depends on loaded values (a histogram, a scatter-add)
    base: Optional[str] = None      # the pointer argument it updates


@dataclass
class DivMod:
    node_id: int
    line: int
    op: str                         # // or %
    per_element: bool
    loops: tuple[int, ...]
    divisor_const: Optional[int]
    shape: tuple[int, ...] = ()


@dataclass
class Int64Op:
    node_id: int
    line: int
    per_element: bool
    loops: tuple[int, ...]
    text: str
    kind: str = "arith"             # arith | cast | compare
    on_data: bool = False           # computed from loaded values (not only program ids and aranges)
    feeds_address: bool = False     # reaches a pointer offset: index math, not data math


@dataclass
class LayoutOp:
    node_id: int
    line: int
    op: str                         # trans | permute | reshape | view | broadcast (a loaded vector expanded)
    loops: tuple[int, ...]
    origins: frozenset
    feeds_dot: bool = False
    feeds_store: bool = False
    feeds_other: bool = False
    vector: Optional["Access"] = None  # broadcast: the load of the vector
    axis: Optional[int] = None         # broadcast: the tile dimension the vector runs along
    of_dot: bool = False               # its input is a dot's result (an accumulator on its way to the epilogue)


@dataclass
class Where:
    node_id: int
    line: int
    cond_from_int_compare: bool
    shape: tuple[int, ...]


@dataclass
class Special:
    """A call that runs on the special-function units (MUFU: ex2, lg2, rcp, rsqrt, sin, cos): a
    quarter of the FMA rate or less, so where one sits beside a dot in a loop its count decides
    whether the tensor cores wait on it (`sfu_ops`: MUFU instructions per element)."""

    node_id: int
    line: int
    op: str
    shape: tuple[int, ...]
    loops: tuple[int, ...]
    sfu_ops: int = 1

    @property
    def results(self) -> int:
        """MUFU results the call produces: one per element per instruction."""
        return (math.prod(self.shape) if self.shape else 1) * self.sfu_ops


@dataclass
class OuterProduct:
    node_id: int
    line: int
    shape: tuple[int, ...]
    loops: tuple[int, ...]


@dataclass
class Loop:
    loop_id: int
    line: int
    kind: str                       # range | tl.range | static_range | while
    num_stages: Optional[int]
    trip_count: Optional[int]
    depth: int
    has_dot: bool = False
    loads: int = 0
    grid_stride: bool = False       # its bounds or step depend on the program id: programs share out work


@dataclass
class Tile:
    line: int
    shape: tuple[int, ...]
    bits: int
    what: str                       # load | acc | zeros | dot


@dataclass
class KernelReport:
    kernel: str
    num_warps: int
    accesses: list[Access] = field(default_factory=list)
    dots: list[Dot] = field(default_factory=list)
    reductions: list[Reduction] = field(default_factory=list)
    atomics: list[Atomic] = field(default_factory=list)
    divmods: list[DivMod] = field(default_factory=list)
    int64_ops: list[Int64Op] = field(default_factory=list)
    layout_ops: list[LayoutOp] = field(default_factory=list)
    wheres: list[Where] = field(default_factory=list)
    loops: dict[int, Loop] = field(default_factory=dict)
    tiles: list[Tile] = field(default_factory=list)
    outer_products: list[OuterProduct] = field(default_factory=list)
    specials: list[Special] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    pid_clamped: bool = False       # min/max over program-id math (grouped or persistent orderings)
    tile_params: set[str] = field(default_factory=set)  # constexprs that size a block or a loop step
    bounds: set[tuple[str, str]] = field(default_factory=set)  # (tile constexpr, size argument it is masked against)
