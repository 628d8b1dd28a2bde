"""Do operand rows that are not whole 128-byte lines slow a TMA GEMM on this GPU? One batched run;
results under $OUT.

    PYTHONPATH=. python3 bench/triage/row_alignment.py            # on the GPU, from the repository root
    PYTHONPATH=. python3 bench/triage/row_alignment.py --quick    # anywhere: the interpreter, correctness only

Three of the agent's bests leave a GEMM case unexplained by any finding (level-2 40's 5000 x 3000 ->
7001 at 63% of its floor, 09's 1000 x 5000 -> 7000 at 57%, 12's 1537 x 6000 -> 5000 at 66%), and in
each a K step costs 1.2-1.4x what the same tile costs on the operator's other cases. What those
cases share is K: 3000, 5000 and 6000 fp16 elements put consecutive operand rows 6000, 10000 and
12000 bytes apart, so most rows of every 64-column TMA box start inside a 128-byte line and cross
into the next. The staged candidates test fixes for it inside whole operators (padded copies timed by
the autotuner, deeper pipelines); this measures the cause alone: the same GEMM, the same K, the
operands laid once with rows K elements apart ("dense") and once in buffers whose rows are padded to
a multiple of 64 elements ("lined", a view: the descriptor still says K, so nothing else changes).

Contestants per shape: a TMA GEMM (128x256x64 tiles, 8 warps, three and four stages) and
`torch.matmul` (cuBLAS, which takes the row stride as it is). Each is checked against `torch.matmul`
in fp32 on both layouts first, then both layouts are timed in turn, `ROUNDS` times
(`triton.testing.do_bench`: L2 flushed before each repetition, median), so a drift of the card reads
as a drift of both. A shape whose K is already a multiple of 64 is the control: its lined layout adds
a line of padding per row and should time the same. The hypothesis holds where dense is slower than
lined by well over the rounds' spread on the three suite shapes and not on the control.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]

OUT = Path(os.environ.get("OUT") or REPOSITORY / "out")
LINE_ELEMENTS = 64  # 128 bytes of fp16
ROUNDS = 5
SHAPES = [  # (label, M, N, K): N rounded to a multiple of 8, so only the operands' rows differ
    ("level2/40 case 3", 5000, 7008, 3000),
    ("level2/09 case 3", 1000, 7000, 5000),
    ("level2/12 case 4", 1537, 5000, 6000),
    ("control: K = 4096", 4096, 4096, 4096),
]
QUICK_SHAPES = [("quick: K = 200", 129, 136, 200), ("quick: K = 128", 64, 64, 128)]
TILES = {"tma 128x256x64, 3 stages": (128, 256, 64, 3), "tma 128x256x64, 4 stages": (128, 256, 64, 4)}
QUICK_TILES = {"tma 32x32x32": (32, 32, 32, 1)}


def tma_gemm_kernel():
    """The GEMM both layouts run: C = A @ B.T through TMA descriptors (zero fill past M, N and K), the
    accumulator in fp32; built on first use so that --help needs no Triton."""
    import triton
    import triton.language as tl

    @triton.jit
    def kernel(a_desc, b_desc, c_ptr, M, N, K, stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m, tiles_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
        group = pid // (GROUP_M * tiles_n)
        first_m = group * GROUP_M
        rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (pid % (GROUP_M * tiles_n)) % rows_in_group
        pid_n = (pid % (GROUP_M * tiles_n)) // rows_in_group
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(c_ptr + rows[:, None].to(tl.int64) * stride_cm + cols[None, :], acc.to(c_ptr.dtype.element_ty),
                 mask=(rows[:, None] < M) & (cols[None, :] < N))

    return kernel


def laid(values, lined: bool):
    """``values`` (fp16, rows x k) laid with rows k elements apart, or in a buffer whose rows are
    padded to whole lines (one line more where k already is whole lines: the control), as a view."""
    import torch

    rows, k = values.shape
    stride = (k // LINE_ELEMENTS + 1) * LINE_ELEMENTS if lined else k
    buffer = torch.zeros((rows, stride), dtype=values.dtype, device=values.device)
    buffer[:, :k] = values
    return buffer[:, :k]


def contestants(tiles: dict) -> dict:
    """name -> (a, b) -> C: the TMA GEMM at each tile, and cuBLAS."""
    import torch
    import triton
    from triton.tools.tensor_descriptor import TensorDescriptor

    kernel = tma_gemm_kernel()

    def tma(block_m: int, block_n: int, block_k: int, stages: int):
        def run(a, b):
            (m, k), n = a.shape, b.shape[0]
            c = torch.empty((m, n), dtype=torch.float16, device=a.device)
            a_desc = TensorDescriptor(a, [m, k], [a.stride(0), 1], [block_m, block_k])
            b_desc = TensorDescriptor(b, [n, k], [b.stride(0), 1], [block_n, block_k])
            grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
            kernel[grid](a_desc, b_desc, c, m, n, k, c.stride(0), BLOCK_M=block_m, BLOCK_N=block_n,
                         BLOCK_K=block_k, GROUP_M=8, num_warps=8 if block_m * block_n >= 128 * 256 else 4,
                         num_stages=stages)
            return c
        return run

    found = {name: tma(*tile) for name, tile in tiles.items()}
    found["cublas (torch.matmul)"] = lambda a, b: torch.matmul(a, b.T)
    return found


def measure_shape(label: str, m: int, n: int, k: int, runs: dict, device: str, timed: bool) -> list[dict]:
    """Each contestant on both layouts: checked, then timed in turn ``ROUNDS`` times."""
    import torch

    generator = torch.Generator().manual_seed(m * 31 + n * 7 + k)
    a, b = (torch.randn((rows, k), generator=generator).to(device=device, dtype=torch.float16) for rows in (m, n))
    operands = {lined: (laid(a, lined), laid(b, lined)) for lined in (False, True)}
    reference = torch.matmul(operands[False][0].float(), operands[False][1].float().T)
    tolerance = 1e-2 * max(1.0, reference.abs().max().item())
    rows = []
    for name, run in runs.items():
        row = {"shape": label, "M": m, "N": n, "K": k, "contestant": name, "row_bytes": 2 * k,
               "lined_row_bytes": 2 * operands[True][0].stride(0)}
        for lined in (False, True):
            a, b = operands[lined]
            error = (run(a, b).float() - reference).abs().max().item()
            row[f"{_layout(lined)}_max_error"] = error
        row["correct"] = all(row[f"{_layout(lined)}_max_error"] <= tolerance for lined in (False, True))
        if timed and row["correct"]:
            row.update(timed_in_turn(run, operands, 2.0 * m * n * k))
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def timed_in_turn(run, operands: dict, flop: float) -> dict:
    from triton.testing import do_bench

    times = {False: [], True: []}
    for _ in range(ROUNDS):
        for lined in (False, True):
            a, b = operands[lined]
            times[lined].append(do_bench(lambda: run(a, b), warmup=25, rep=100, return_mode="median"))
    found = {}
    for lined, samples in times.items():
        layout, median = _layout(lined), statistics.median(samples)
        found.update({f"{layout}_ms": samples, f"{layout}_median_ms": median, f"{layout}_tflops": flop / median / 1e9})
    found["dense_over_lined"] = found["dense_median_ms"] / found["lined_median_ms"]
    found["rounds_spread"] = max(max(s) / min(s) - 1.0 for s in times.values())
    return found


def _layout(lined: bool) -> str:
    return "lined" if lined else "dense"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small shapes under the interpreter: correctness only")
    args = parser.parse_args(argv)
    if args.quick:
        if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
            # Triton's own @jit helpers (tl.zeros, tl.cdiv) were built compiled and cannot run interpreted
            raise SystemExit("row_alignment: --quick needs a process that has not imported Triton yet")
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    device = "cuda" if torch.cuda.is_available() and not args.quick else "cpu"
    shapes, tiles = (QUICK_SHAPES, QUICK_TILES) if args.quick else (SHAPES, TILES)
    runs = contestants(tiles)
    rows = [row for shape in shapes for row in measure_shape(*shape, runs, device, timed=device == "cuda")]
    OUT.mkdir(parents=True, exist_ok=True)
    card = torch.cuda.get_device_name() if device == "cuda" else "CPU (Triton interpreter)"
    (OUT / "row_alignment.json").write_text(json.dumps({"device": card, "rounds": ROUNDS, "rows": rows}, indent=1))
    for row in rows:
        if "dense_over_lined" in row:
            print(f"{row['shape']:<20} {row['contestant']:<26} dense {row['dense_median_ms']:.4f} ms  "
                  f"lined {row['lined_median_ms']:.4f} ms  dense/lined {row['dense_over_lined']:.3f}  "
                  f"(rounds within {row['rounds_spread']:.1%})")
    return 0 if all(row["correct"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
