"""How well a GEMM's tile fits the shape it runs (source level, NVIDIA Hopper): nv.tile-misfit.

A tile of BLOCK_M x BLOCK_N x BLOCK_K decides, for one GEMM shape, how much of the tensor-core peak
the kernel can reach. The model multiplies three limits, each a fraction of the peak:

- **operand feed**: every K step a program stages (BLOCK_M + BLOCK_N) x BLOCK_K operands from L2
  into shared memory and does 2 x BLOCK_M x BLOCK_N x BLOCK_K flops on them, so the tile's
  arithmetic intensity against L2 is 2 BM BN / (BM a + BN b) flop/byte (a, b: operand bytes). Below
  the L2 ridge point (peak flop/s over the L2 bandwidth) the tensor cores wait on operands;
- **waves**: tiles are spread over the SMs; the SM with most tiles sets the time, so ceil'd tiles
  per SM against the average is the share of the GPU kept busy (too few tiles, or a heavy tail);
- **L2 reuse**: the programs resident at once (a wave) share operand panels through L2; an operand
  larger than half the L2 is read again from HBM by every wave that walks it (how much of it a wave
  walks depends on the tile order, row-major or grouped). Against HBM bandwidth, that traffic can
  make a compute-bound GEMM memory-bound.

The kernel's tile is measured against a set of standard Hopper tiles (wgmma-capable, fitting
shared memory and 255 registers) on the same shape and order. A tile that reaches under
`MISFIT` of the peak where one of those reaches `BETTER` times more is a misfit; a tile lowered to
mma.sync is nv.mma-v2-on-hopper's, not this rule's.

Some shapes have no good tile: every tile that feeds the tensor cores leaves a partial last wave
(288 tiles of 128x256 on 132 SMs: the busiest SMs run 3 tiles while the average is 2.18), and the
tiles without one are too small to feed them. Comparing tiles with tiles cannot see that, since
they all lose it; what removes it is splitting the tiles past the last full wave along K (stream-K,
or a persistent kernel that shares their K loops). So the best tile's reach is also measured
against its reach with that tail split away (`tail_loss`): under `TAIL` of it, the finding says so.

Device numbers come from the target's table (`ladder.runner.hardware`: SM count, L2 size and
bandwidth, HBM bandwidth, flop/s per dtype).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ladder.diagnoser.evidence import Finding
from ladder.runner import hardware

from ...context import LaunchAnalysis, TriageContext
from ..common import Findings, source_evidence
from .measures import (
    IDLE_SECONDS,
    THREADS_PER_WARP,
    device,
    dot_version,
    runtime_loops,
    trips,
)

MISFIT = 0.5         # a tile that reaches under half of the peak on its shape...
BETTER = 1.5         # ...where a standard tile reaches 1.5x as much
MIN_FLOPS = 1e9      # GEMMs smaller than this finish in microseconds whatever the tile
TAIL = 0.8           # the best tile reaching under 80% of its reach with its last wave split along K
ACC_REGISTERS = 128  # fp32 accumulator registers per thread a candidate may take (the rest: operands, addresses)


@dataclass(frozen=True)
class Tile:
    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int

    def text(self) -> str:
        return f"{self.block_m}x{self.block_n}x{self.block_k} ({self.num_warps} warps, {self.num_stages} stages)"


@dataclass(frozen=True)
class Gemm:
    """One GEMM launch: its shape, operand and output widths, how its tiles are ordered."""

    m: int
    n: int
    k: int
    a_bits: int
    b_bits: int
    out_bits: int
    peak: float          # tensor-core flop/s for the operand dtype
    grouped: bool        # tiles walked in groups of rows (GROUP_SIZE_M) or persistently
    batches: int = 1     # independent GEMMs (batch, split-K slices) of this shape in the launch

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.batches


@dataclass(frozen=True)
class Fit:
    tile: Tile
    feed: float          # fraction of the peak the tile's operand reuse can feed from L2
    balance: float       # share of the SMs' time the tiles keep busy
    hbm: float           # 1, or compute time over HBM time when HBM traffic dominates
    intensity: float     # flop per byte of operands the tile stages
    ridge: float         # the L2 ridge point the intensity is measured against
    tiles: int
    resident: int

    @property
    def reach(self) -> float:
        return self.feed * self.balance * self.hbm


def candidates(a_bits: int) -> list[Tile]:
    """The standard Hopper tiles for an operand width: wgmma's 64-row multiples, BLOCK_K of 128
    bytes of operand per row (the widest wgmma K step that keeps the shared-memory stages small)."""
    k = max(16, 1024 // a_bits)
    return [Tile(128, 256, k, 8, 3), Tile(256, 128, k, 8, 3), Tile(128, 128, k, 8, 4), Tile(128, 128, k, 4, 4),
            Tile(128, 64, k, 4, 4), Tile(64, 128, k, 4, 4), Tile(64, 64, k, 4, 4)]


def shared_bytes(tile: Tile, gemm: Gemm) -> int:
    return tile.num_stages * tile.block_k * (tile.block_m * gemm.a_bits + tile.block_n * gemm.b_bits) // 8


def resident_programs(ctx: TriageContext, tile: Tile, gemm: Gemm, registers: int | None = None) -> int:
    """Programs of this tile resident per SM (the occupancy calculator on the target's table);
    registers estimated from the fp32 accumulator when the compiled count is not known."""
    threads = THREADS_PER_WARP * tile.num_warps
    registers = registers or min(255, tile.block_m * tile.block_n // threads + 48)
    table = ctx.device if "max_warps_per_sm" in ctx.device else hardware.for_target("cuda")
    return hardware.occupancy(table, registers=registers, shared_bytes=shared_bytes(tile, gemm),
                              num_warps=tile.num_warps)["programs_per_sm"]


def fit(ctx: TriageContext, tile: Tile, gemm: Gemm, resident: int | None = None) -> Fit:
    """The three limits of `tile` on `gemm` (see the module's docstring)."""
    sm_count = device(ctx, "sm_count")
    ridge = gemm.peak / device(ctx, "l2_bandwidth")
    intensity = 2 * tile.block_m * tile.block_n * 8 / (tile.block_m * gemm.a_bits + tile.block_n * gemm.b_bits)
    tiles_m, tiles_n = math.ceil(gemm.m / tile.block_m), math.ceil(gemm.n / tile.block_n)
    tiles = tiles_m * tiles_n * gemm.batches
    per_sm = tiles / sm_count
    balance = per_sm / math.ceil(per_sm)
    resident = resident if resident is not None else resident_programs(ctx, tile, gemm)
    wave = max(1, min(tiles, sm_count * max(resident, 1)))
    if gemm.grouped:
        rows = min(tiles_m, math.ceil(math.sqrt(wave)))
        cols = min(tiles_n, math.ceil(wave / rows))
    else:
        cols = min(tiles_n, wave)
        rows = min(tiles_m, math.ceil(wave / tiles_n))
    waves = math.ceil(tiles / wave)
    l2 = device(ctx, "l2_bytes")
    a_bytes = gemm.m * gemm.k * gemm.a_bits / 8 * gemm.batches
    b_bytes = gemm.k * gemm.n * gemm.b_bits / 8 * gemm.batches
    a_reads = 1.0 if a_bytes <= l2 / 2 else max(1.0, waves * rows / (tiles_m * gemm.batches))
    b_reads = 1.0 if b_bytes <= l2 / 2 else max(1.0, waves * cols / (tiles_n * gemm.batches))
    traffic = a_bytes * a_reads + b_bytes * b_reads + gemm.m * gemm.n * gemm.out_bits / 8 * gemm.batches
    compute_seconds = gemm.flops / gemm.peak
    hbm_seconds = traffic / device(ctx, "ceiling_bandwidth")
    return Fit(tile, min(1.0, intensity / ridge), balance, min(1.0, compute_seconds / hbm_seconds),
               intensity, ridge, tiles, resident)


def usable(ctx: TriageContext, tile: Tile, gemm: Gemm) -> bool:
    """A candidate the shape can use: wgmma-capable, within shared memory and registers, and no
    taller or wider than the GEMM rounded up to wgmma's 64 rows."""
    return (shared_bytes(tile, gemm) <= device(ctx, "shared_memory_per_block")
            and tile.block_m * tile.block_n // (THREADS_PER_WARP * tile.num_warps) <= ACC_REGISTERS
            and tile.block_m <= max(64, _round_up(gemm.m, 64)) and tile.block_n <= max(64, _round_up(gemm.n, 64)))


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def best_fit(ctx: TriageContext, gemm: Gemm) -> Fit | None:
    fits = [fit(ctx, tile, gemm) for tile in candidates(gemm.a_bits) if usable(ctx, tile, gemm)]
    return max(fits, key=lambda f: f.reach, default=None)


def misfit(ctx: TriageContext, tile: Tile, gemm: Gemm, resident: int | None = None) -> tuple[Fit, Fit] | None:
    """(the tile's fit, the best standard tile's) when the tile is a misfit for the shape, else None."""
    if gemm.flops < MIN_FLOPS:
        return None
    current, best = fit(ctx, tile, gemm, resident), best_fit(ctx, gemm)
    if best is None or current.reach >= MISFIT or best.reach < BETTER * current.reach:
        return None
    return current, best


@dataclass(frozen=True)
class Tail:
    """A shape no tile fits without a partial last wave."""

    current: Fit         # the kernel's tile (of an autotuned launch's configs, the one the model ranks first)
    best: Fit            # the tile, standard or the kernel's, that reaches most with its tail
    split: Fit           # the tile that would reach most with the tiles past its last full wave split along K

    @property
    def split_reach(self) -> float:
        return self.split.feed * self.split.hbm


def tail_loss(ctx: TriageContext, tiles: list[Tile], gemm: Gemm) -> Tail | None:
    """A Tail when the kernel's best tile and every standard tile reach under `TAIL` of what the
    best of them would with its last wave split along K, and that costs the launch `IDLE_SECONDS`
    or more. Fewer tiles than SMs is nv.small-grid's (no full wave to split after)."""
    if gemm.flops < MIN_FLOPS or not tiles:
        return None
    own = [fit(ctx, tile, gemm) for tile in tiles]
    current = max(own, key=lambda f: f.reach)
    if current.tiles < device(ctx, "sm_count"):
        return None
    fits = own + [fit(ctx, tile, gemm) for tile in candidates(gemm.a_bits) if usable(ctx, tile, gemm)]
    best = max(fits, key=lambda f: f.reach)
    split = max(fits, key=lambda f: f.feed * f.hbm)
    tail = Tail(current, best, split)
    if best.reach >= TAIL * tail.split_reach:
        return None
    lost = gemm.flops / gemm.peak * (1 / current.reach - 1 / tail.split_reach)
    return tail if lost >= IDLE_SECONDS else None


def explain_tail(tail: Tail, gemm: Gemm, sm_count: int, configs: int) -> str:
    """Why, in numbers: the kernel's tile, the tail of the tile that feeds the tensor cores best,
    and the time splitting that tail would save (relative: the model's absolute reach runs high)."""
    current, split = tail.current, tail.split
    which = f"of its {configs} configs, the one this model ranks first: " if configs > 1 else ""
    per_sm = split.tiles / sm_count
    return (f"{which}a {current.tile.text()} tile on a {gemm.m}x{gemm.n}x{gemm.k} GEMM reaches about "
            f"{current.reach:.0%} of the tensor-core peak ({current.tiles / sm_count:.2f} tiles per SM, "
            f"{current.balance:.0%} of the SMs' time used, operands fed at {current.feed:.0%}). The tile that feeds "
            f"the tensor cores best, {split.tile.text()}, leaves a partial last wave: {split.tiles} tiles are "
            f"{per_sm:.2f} per SM, the busiest SMs run {math.ceil(per_sm)} while the average is {per_sm:.2f} "
            f"({split.balance:.0%} of their time used), and no standard tile reaches more than {tail.best.reach:.0%} "
            f"with its tail. Splitting the tiles past its last full wave along K (stream-K, or a persistent kernel "
            f"sharing their K loops) would take about {1 - current.reach / tail.split_reach:.0%} off the GEMM's time")


def explain(current: Fit, best: Fit, gemm: Gemm) -> str:
    """Why, in numbers: each limit of the tile against the best standard tile's."""
    parts = []
    if current.feed < 1:
        parts.append(f"its operands give {current.intensity:.0f} flop per byte staged from L2 against a ridge point of "
                     f"{current.ridge:.0f}: the tensor cores can be fed {current.feed:.0%} of their peak")
    if current.balance < 0.9:
        parts.append(f"{current.tiles} tiles over the SMs keep {current.balance:.0%} of them busy (tail or too few)")
    if current.hbm < 1:
        parts.append(f"operands re-read from HBM by every wave cap it at {current.hbm:.0%}")
    limits = "; ".join(parts) or "its limits multiply"
    return (f"a {current.tile.text()} tile on a {gemm.m}x{gemm.n}x{gemm.k} GEMM reaches about {current.reach:.0%} "
            f"of the tensor-core peak: {limits}. A {best.tile.text()} tile would reach about {best.reach:.0%} "
            f"({best.intensity:.0f} flop/byte, {best.tiles} tiles)")


# ----------------------------------------------------------------------------- from a launch

def launch_gemm(ctx: TriageContext, analysis: LaunchAnalysis) -> tuple[Tile, Gemm, Any] | None:
    """(tile, GEMM, dot) of a launch whose kernel runs one tl.dot, in a K loop on 2-D operands, with
    M, N and K known; None otherwise. A chain of dots (attention: QK^T, then PV) is not one GEMM:
    its tiles answer to other limits (the softmax state in registers), so the model's standard
    tiles would be the wrong advice."""
    from .matmul import gemm_dims, looped_dot, masked_rows

    report = analysis.report
    dot = looped_dot(report)
    if dot is None or len(dot.a_shape) != 2 or len(report.dots) != 1:
        return None
    m, n, k = gemm_dims(analysis)
    rows = masked_rows(analysis, dot)
    m = rows if rows is not None and (m is None or rows < m) else m
    if not (m and n and k):
        return None
    block_m, block_n, block_k = dot.a_shape[-2], dot.b_shape[-1], dot.a_shape[-1]
    tile = Tile(block_m, block_n, block_k, report.num_warps, analysis.launch.num_stages)
    tiles = math.ceil(m / block_m) * math.ceil(n / block_n)
    batches = max(1, analysis.launch.programs // tiles) if not report.pid_clamped else 1
    store = next((a for a in report.accesses if a.op in ("store", "atomic") and a.from_dot), None)
    out_bits = store.elem_bits if store is not None else 32
    gemm = Gemm(m, n, k, dot.a_bits, dot.b_bits, out_bits, tensor_peak(ctx, dot), report.pid_clamped, batches)
    return tile, gemm, dot


def tensor_peak(ctx: TriageContext, dot: Any) -> float:
    """Tensor-core flop/s for the dot's operands (fp32 contracts in tf32 unless asked for ieee)."""
    from ladder.runner.roofline import peak_flops

    names = {8: "float8", 16: "float16", 32: "float32", 64: "float64"}
    flops = ctx.device.get("ceiling_flops") or hardware.for_target("cuda")["ceiling_flops"]
    return peak_flops({"flops": flops}, names.get(dot.a_bits, "float16"), dot.input_precision != "ieee")


def fixed_across_shapes(ctx: TriageContext) -> set[str]:
    """Kernels nv.hardcoded-config reports: one fixed config over several shapes, a small tile on a
    large one among its reasons. Autotuning, which that finding asks for, chooses the tile per
    shape, so the misfit is not reported a second time."""
    from .matmul import detect_hardcoded_config

    return {finding.kernel for finding in detect_hardcoded_config(ctx) if finding.kernel}


def detect_tile_fit(ctx: TriageContext) -> list[Finding]:
    """nv.tile-misfit: a GEMM launch whose tile reaches under half of the tensor-core peak on the
    shape it runs (operand feed from L2, waves over the SMs, L2 reuse against HBM) where a standard
    Hopper tile would reach 1.5x as much. One shape is enough: a tile is judged against the work it
    is given, so a fixed config that fits its only shape badly is found too. Where no tile fits
    without a partial last wave (`tail_loss`), the finding says that instead.

    Not for a dot that lowers to mma.sync or FMA (nv.mma-v2-on-hopper, nv.no-tensor-core say why),
    nor for one outside a runtime K loop (its program's work is one tile), nor for a chain of dots
    such as attention (`launch_gemm`), nor for a kernel nv.hardcoded-config reports
    (`fixed_across_shapes`). An autotuned launch is judged as a whole: a misfit only when every
    config is one, a tail when the config the model ranks first has it."""
    found = Findings()
    fixed = fixed_across_shapes(ctx)
    for variants in gemm_launches(ctx, fixed).values():
        first, _, gemm, dot = variants[0]
        verdicts = [(misfit(ctx, tile, shape), shape) for _, tile, shape, _ in variants]
        if all(verdict is not None for verdict, _ in verdicts):
            confidence, details = 0.7, [explain(*verdict, shape) for verdict, shape in verdicts]
        else:
            tail = tail_loss(ctx, [tile for _, tile, *_ in variants], gemm)
            if tail is None:
                continue
            confidence = 0.6
            details = [explain_tail(tail, gemm, device(ctx, "sm_count"), first.launch.variants)] * len(variants)
        for (analysis, *_), detail in zip(variants, details):
            found.add(ctx, "nv.tile-misfit", analysis.kernel.name, dot.line, "GEMM tile does not fit its shape",
                      confidence, [source_evidence(ctx, dot.line, detail)], analysis=analysis)
    return found.list()


def gemm_launches(ctx: TriageContext, fixed: set[str]) -> dict[tuple[int, int], list[tuple[Any, Tile, Gemm, Any]]]:
    """(analysis, tile, GEMM, dot) of each config of each launch (case, launch), for launches whose
    one dot (`launch_gemm`) lowers to wgmma inside a runtime K loop of two or more steps, of kernels
    not in `fixed`."""
    launches: dict[tuple[int, int], list] = {}
    for analysis in ctx.analyses:
        if analysis.kernel.name in fixed:
            continue
        launch = launch_gemm(ctx, analysis)
        if launch is None:
            continue
        tile, gemm, dot = launch
        report = analysis.report
        looped = runtime_loops(report, dot.loops) and trips(report, dot.loops) >= 2
        if dot_version(dot, report.num_warps) != 3 or not looped:
            continue
        launches.setdefault((analysis.case_index, analysis.launch.group), []).append((analysis, tile, gemm, dot))
    return launches
