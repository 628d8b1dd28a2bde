"""A GEMM tile's fixed cost against its K loop (source level, NVIDIA Hopper): nv.short-k-loop.

A program that computes one output tile pays two costs its K loop does not amortise: the fill
(the first loads of the pipeline come from HBM before the first wgmma can issue) and the epilogue
(the accumulator converted and written back, a tile of BLOCK_M x BLOCK_N outputs at the SM's share
of the HBM bandwidth, since every SM writes its tiles at about the same time). With one program
resident per SM nothing runs during either, so a program's time is its K steps plus that fixed
cost, and a short K loop exposes it: a 128x256 tile writing 64 kB of fp16 spends about as long on
it as on three 64-deep K steps. Measured on the H200 with the same Triton tiles on K = 512 against
K = 4096-6144 (bench/results/triage-gemm-tiles.md): 128x256 reaches 0.74 of its long-K rate, 256x128
0.69, 128x128 0.68; a fill of `device.tile_fill_seconds` plus the epilogue's write gives 0.75, 0.75
and 0.71, and within 0.06 on the seven tiles measured there, erring towards less loss than measured.
Programs resident two or more per SM hide part of it behind each other's K loops (counted as the
fixed cost shared among them); a persistent kernel can overlap one tile's epilogue with the next
tile's loads, and is not judged here.
"""
from __future__ import annotations

from ladder.diagnoser.evidence import Finding

from ...context import TriageContext
from ..common import Findings, metric_evidence, source_evidence
from .measures import HBM_BYTES_PER_SECOND, IDLE_SECONDS, PEAK_FLOPS, device, runtime_loops, trips
from .tile_fit import Gemm, Tile, fit, gemm_launches, resident_programs

# A GEMM is reported when its programs spend under this share of their time in their K loops: the
# best Triton main loops on Hopper reach 0.9-0.94 of the floor on long K (the suite's bests), so a
# program with under 85% of its time in its K loop ends under the gap rule's 80%.
REACH_BELOW = 0.85


def k_loop_share(ctx: TriageContext, tile: Tile, gemm: Gemm, steps: int, resident: int) -> tuple[float, float]:
    """(share of a program's time spent in its K loop, fixed seconds per tile): K steps at one SM's
    share of the sustained tensor-core rate against the fill plus the epilogue's write, that fixed
    cost shared among the programs resident on the SM."""
    sm_count = device(ctx, "sm_count")
    step_seconds = 2 * tile.block_m * tile.block_n * tile.block_k / (PEAK_FLOPS / sm_count)
    epilogue_seconds = tile.block_m * tile.block_n * gemm.out_bits / 8 * sm_count / device(ctx, "ceiling_bandwidth")
    fixed = device(ctx, "tile_fill_seconds") + epilogue_seconds
    loop = steps * step_seconds
    return loop / (loop + fixed / max(resident, 1)), fixed


def compute_bound(gemm: Gemm) -> bool:
    """The GEMM's flops take longer than moving its operands and output once: a memory-bound GEMM's
    epilogue write is its floor, not an overhead."""
    bytes_moved = (gemm.m * gemm.k * gemm.a_bits + gemm.k * gemm.n * gemm.b_bits + gemm.m * gemm.n * gemm.out_bits) / 8
    return gemm.flops / PEAK_FLOPS >= gemm.batches * bytes_moved / HBM_BYTES_PER_SECOND


def detect_short_k(ctx: TriageContext) -> list[Finding]:
    """nv.short-k-loop: a compute-bound GEMM launch whose programs, one output tile each, run so few
    K steps that the tile's fill and epilogue take over 15% of its time (`REACH_BELOW`), at a cost of
    `IDLE_SECONDS` or more to the launch.
    An autotuned launch is judged by the config nv.tile-misfit's model ranks first once this cost is
    counted (its reach times the K loop's share), among the configs whose tiles the walk reads; the
    finding holds for the whole launch. Not for a persistent kernel (its dot sits in a tile loop as
    well as the K loop), nor for a dot that is not wgmma (`gemm_launches`)."""
    found = Findings()
    for (case_index, group), variants in gemm_launches(ctx, set()).items():
        analysis, _, gemm, dot = variants[0]
        if len(runtime_loops(analysis.report, dot.loops)) != 1 or not compute_bound(gemm):
            continue
        judged = []
        for variant, tile, shape, own_dot in variants:
            steps = trips(variant.report, runtime_loops(variant.report, own_dot.loops))
            resident = resident_programs(ctx, tile, shape)
            share, fixed = k_loop_share(ctx, tile, shape, steps, resident)
            judged.append((fit(ctx, tile, shape, resident).reach * share, share, tile, shape, steps, fixed))
        _, share, tile, gemm, steps, fixed = max(judged, key=lambda item: item[0])
        lost = gemm.flops / PEAK_FLOPS * (1 / share - 1)
        if share >= REACH_BELOW or lost < IDLE_SECONDS:
            continue
        which = f"of its {len(judged)} configs the walk reads, the one ranked first: " if len(judged) > 1 else ""
        detail = (f"each program computes one {tile.block_m}x{tile.block_n} tile of a {gemm.m}x{gemm.n}x{gemm.k} GEMM "
                  f"in {steps} K steps ({which}{tile.text()}); its fill and its epilogue (the "
                  f"{tile.block_m * tile.block_n * gemm.out_bits // 8:,} bytes of output it writes) take about "
                  f"{fixed * 1e6:.1f} us beside {steps} steps at one SM's share of the tensor-core rate, so its K loop "
                  f"holds only {share:.0%} of its time: a persistent kernel that overlaps each tile's epilogue with "
                  f"the next tile's loads would take up to {1 - share:.0%} off the GEMM's time")
        for each in ctx.analyses:
            if (each.case_index, each.launch.group) != (case_index, group):
                continue
            evidence = [source_evidence(ctx, dot.line, detail)]
            if each.launch.primary:
                evidence.append(metric_evidence("share of a tile's time in its K loop", round(share, 2)))
            found.add(ctx, "nv.short-k-loop", each.kernel.name, dot.line,
                      "K loop too short to hide each tile's fill and epilogue", 0.7, evidence, analysis=each)
    return found.list()
