"""Does nv.tile-misfit's model hold on this GPU? The L2 bandwidth it assumes, and its verdicts
against measured GEMM times, in one batched run; results under $OUT.

    PYTHONPATH=. python3 bench/triage/gemm_tiles.py           # on the H200, from the repository root
    PYTHONPATH=. python3 bench/triage/gemm_tiles.py --plan    # anywhere: the model's predictions only

Parts:

1. l2: read bandwidth of buffers that stay in L2 (8-24 MB, read 64 times by a Triton kernel) and
   of one that does not (1 GB), bytes/s; the model's `l2_bandwidth` (kb/hardware) should be the
   L2 figure;
2. tiles: the tile_misfit fixture's GEMM kernel (grouped or row-major tile order) timed on each
   shape with each tile (`triton.testing.do_bench`: L2 flushed, median), as a fraction of the
   table's fp16 peak and of torch.matmul on the same shape; beside it the model's reach, with the
   table's L2 bandwidth and with the measured one. A verdict agrees when the model calls a tile a
   misfit exactly when it measures under half the peak with some standard tile 1.5x faster.

Each timed row is appended to $OUT/gemm_tiles.jsonl as it finishes and skipped when the script
runs again, so a run cut short resumes; the summary ($OUT/gemm_tiles.json) is rewritten each time.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY))

from ladder.diagnoser.triage.context import TriageContext
from ladder.diagnoser.triage.detectors.source.tile_fit import (
    BETTER,
    MISFIT,
    Gemm,
    Tile,
    candidates,
    fit,
    usable,
)
from ladder.diagnoser.triage.source import parse_module
from ladder.runner import hardware

OUT = Path(os.environ.get("OUT") or REPOSITORY / "out")
KERNEL = REPOSITORY / "tests" / "diagnoser" / "triage" / "fixtures" / "tile_misfit" / "solution.py"
SHAPES = [  # (M, N, K, grouped): square, wide with B past half the L2, few tiles, skinny K, tall
    (6144, 6144, 6144, True), (4096, 4096, 4096, True), (8192, 16384, 2048, True), (8192, 16384, 2048, False),
    (1024, 2048, 8192, True), (16384, 16384, 512, True), (16384, 1024, 4096, True),
]
EXTRA_TILES = [Tile(64, 64, 32, 4, 3), Tile(128, 64, 32, 4, 3), Tile(64, 128, 32, 4, 3)]
L2_SIZES = [8 << 20, 16 << 20, 24 << 20]


def context(l2_bandwidth: float | None = None) -> TriageContext:
    table = hardware.for_target("cuda")
    return TriageContext(source=parse_module("import triton\n"),
                         device={**table, **({"l2_bandwidth": l2_bandwidth} if l2_bandwidth else {})})


def plan() -> list[tuple[tuple, Tile]]:
    """Every (shape, tile) to time: the standard tiles each shape can use plus the small ones."""
    rows = []
    for shape in SHAPES:
        gemm = as_gemm(shape)
        for tile in candidates(16) + EXTRA_TILES:
            if usable(context(), tile, gemm) or tile in EXTRA_TILES:
                rows.append((shape, tile))
    return rows


def as_gemm(shape: tuple) -> Gemm:
    m, n, k, grouped = shape
    return Gemm(m, n, k, 16, 16, 16, hardware.for_target("cuda")["ceiling_flops"]["fp16"], grouped)


def key(shape: tuple, tile: Tile) -> str:
    return f"{shape}|{tile.text()}"


# ----------------------------------------------------------------------------- on the GPU

def measure_l2() -> dict:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def read(x_ptr, out_ptr, n, REPS: tl.constexpr, BLOCK: tl.constexpr):
        pid, programs = tl.program_id(0), tl.num_programs(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for _ in range(REPS):
            for start in range(pid * BLOCK, n, programs * BLOCK):
                acc += tl.load(x_ptr + start + tl.arange(0, BLOCK))
        tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)

    programs = torch.cuda.get_device_properties(0).multi_processor_count * 8
    block = 2048
    out = torch.empty(programs * block, device="cuda")
    result = {}
    for size, reps in [(s, 64) for s in L2_SIZES] + [(1 << 30, 2)]:
        x = torch.ones(size // 4, device="cuda")
        result[f"{size >> 20} MB"] = size * reps / _median_seconds(lambda x=x, reps=reps: read[(programs,)](
            x, out, x.numel(), REPS=reps, BLOCK=block))
    return result


def _median_seconds(run, repeats: int = 10) -> float:
    """Median of CUDA-event times, L2 left warm (what is measured is the L2's own bandwidth)."""
    import torch

    run()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        start.record()
        run()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return sorted(times)[len(times) // 2]


def time_tile(shape: tuple, tile: Tile, module) -> dict:
    import torch
    import triton

    m, n, k, grouped = shape
    a, b = torch.randn(m, k, device="cuda", dtype=torch.float16), torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    grid = (triton.cdiv(m, tile.block_m) * triton.cdiv(n, tile.block_n),)

    def run():
        module.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                   c.stride(0), c.stride(1), BLOCK_M=tile.block_m, BLOCK_N=tile.block_n,
                                   BLOCK_K=tile.block_k, GROUP_M=8 if grouped else 1,
                                   num_warps=tile.num_warps, num_stages=tile.num_stages)

    seconds = triton.testing.do_bench(run, return_mode="median") / 1e3
    torch_seconds = triton.testing.do_bench(lambda: torch.matmul(a, b), return_mode="median") / 1e3
    return {"seconds": seconds, "torch_seconds": torch_seconds, "tflops": 2 * m * n * k / seconds / 1e12}


def load_kernel():
    spec = importlib.util.spec_from_file_location("tile_misfit_solution", KERNEL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- the verdicts

def verdicts(rows: dict[str, dict], l2_bandwidth: float | None) -> list[dict]:
    """Per (shape, tile): measured fraction of the peak, the model's reach, and whether both call it a misfit."""
    ctx = context(l2_bandwidth)
    table = []
    for shape in SHAPES:
        gemm = as_gemm(shape)
        timed = {tile: rows[key(shape, tile)] for shape_, tile in plan() if shape_ == shape and key(shape, tile) in rows}
        standard = [t for t in timed if t in candidates(16) and usable(ctx, t, gemm)]
        best_seconds = min((timed[t]["seconds"] for t in standard), default=None)
        model_best = max((fit(ctx, t, gemm).reach for t in candidates(16) if usable(ctx, t, gemm)), default=0.0)
        for tile, row in timed.items():
            measured = gemm.flops / row["seconds"] / gemm.peak
            reach = fit(ctx, tile, gemm).reach
            table.append({
                "shape": list(shape), "tile": tile.text(), "measured": round(measured, 3), "reach": round(reach, 3),
                "of_torch": round(row["torch_seconds"] / row["seconds"], 3),
                "measured_misfit": bool(best_seconds and measured < MISFIT and row["seconds"] >= BETTER * best_seconds),
                "model_misfit": gemm.flops >= 1e9 and reach < MISFIT and model_best >= BETTER * reach,
            })
    return table


def summary(table: list[dict]) -> dict:
    agree = sum(r["measured_misfit"] == r["model_misfit"] for r in table)
    false_alarms = sum(r["model_misfit"] and not r["measured_misfit"] for r in table)
    missed = sum(r["measured_misfit"] and not r["model_misfit"] for r in table)
    return {"rows": len(table), "agree": agree, "model_misfit_not_measured": false_alarms,
            "measured_misfit_not_modelled": missed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", action="store_true", help="print the model's reach per (shape, tile) and exit")
    args = parser.parse_args()
    if args.plan:
        ctx = context()
        for shape, tile in plan():
            f = fit(ctx, tile, as_gemm(shape))
            print(f"{shape!s:32s} {tile.text():32s} reach {f.reach:.2f} (feed {f.feed:.2f}, "
                  f"balance {f.balance:.2f}, hbm {f.hbm:.2f})")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    journal = OUT / "gemm_tiles.jsonl"
    rows = {}
    if journal.is_file():
        for line in journal.read_text().splitlines():
            entry = json.loads(line)
            rows[entry["key"]] = entry
    l2 = rows.get("l2") or {"key": "l2", **measure_l2()}
    if "l2" not in rows:
        rows["l2"] = l2
        with journal.open("a") as out:
            out.write(json.dumps(l2) + "\n")
    print("L2 / HBM read bandwidth:", {k: f"{v / 1e12:.2f} TB/s" for k, v in l2.items() if k != "key"}, flush=True)
    module = load_kernel()
    for shape, tile in plan():
        if key(shape, tile) in rows:
            continue
        try:
            entry = {"key": key(shape, tile), **time_tile(shape, tile, module)}
        except Exception as error:  # one config that fails to compile or launch must not stop the others
            print(f"{key(shape, tile)}: {type(error).__name__}: {error}", flush=True)
            continue
        rows[entry["key"]] = entry
        with journal.open("a") as out:
            out.write(json.dumps(entry) + "\n")
        print(f"{entry['key']}: {entry['tflops']:.0f} TFLOP/s", flush=True)
    measured_l2 = max(v for k, v in l2.items() if k != "key" and k != "1024 MB")
    result = {"l2": l2}
    for label, bandwidth in (("table_l2", None), ("measured_l2", measured_l2)):
        table = verdicts(rows, bandwidth)
        result[label] = {"summary": summary(table), "rows": table}
        print(f"== verdicts with the {label.replace('_', ' ')}: {summary(table)}")
    (OUT / "gemm_tiles.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
