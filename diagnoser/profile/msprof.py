"""Ascend: msprof's operator summaries, read into the same shape rung 2 uses for ncu counters.

Written to the CANN / Triton-Ascend documentation (`docs/en/debug_guide/profiling.md` in
Triton-Ascend: `msprof op --kernel-name=K --output=DIR python3 script.py`, and the op_summary
columns of the CANN profiling guide); **untested on Ascend hardware** until someone runs it there.

The summary rows give, per operator launch, its duration, block dim and the share of time each
pipeline was busy (`aiv_vec_ratio`, `aiv_scalar_ratio`, `aiv_mte2_ratio`, ... for vector cores;
`aic_mac_ratio`, `aic_mte2_ratio`, ... for cube cores). Triton-Ascend's guide reads them as we do
here: the busiest pipeline is the bottleneck (MTE2/MTE3/MTE1 = data movement, vec/mac/fixpipe =
compute, scalar = work that fell back to scalar code), and a block dim above the core count means
host-side scheduling overhead.
"""
from __future__ import annotations

import csv
import shutil
from pathlib import Path

# pipeline -> roofline class it indicates when it is the busiest one
PIPE_CLASS = {
    "mte1": "memory-bound", "mte2": "memory-bound", "mte3": "memory-bound",
    "vec": "compute-bound", "mac": "compute-bound", "cube": "compute-bound", "fixpipe": "compute-bound",
    "scalar": "latency-bound",
}
SUMMARY_GLOBS = ("**/op_summary*.csv", "**/PipeUtilization.csv")


def find_msprof() -> str | None:
    return shutil.which("msprof")


def command(msprof: str, program: list[str], output: str, kernel: str | None = None,
            launch_count: int = 20) -> list[str]:
    """`msprof op` over the driver (one kernel name, or every operator when None)."""
    cmd = [msprof, "op", f"--output={output}", f"--launch-count={launch_count}"]
    if kernel:
        cmd.append(f"--kernel-name={kernel}")
    return cmd + program


def _float(text: str | None) -> float | None:
    try:
        return float(str(text).strip().rstrip("%"))
    except (TypeError, ValueError):
        return None


def parse_summary(path: str | Path) -> list[dict]:
    """Rows of one op_summary / PipeUtilization CSV as {op, duration_us, block_dim, pipes, times}."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    parsed = []
    for row in rows:
        row = {k.strip(): v for k, v in row.items() if k}
        pipes = {}
        for column, value in row.items():
            if column.endswith("_ratio") and (column.startswith("aiv_") or column.startswith("aic_")):
                number = _float(value)
                if number is not None:
                    pipes[column[: -len("_ratio")]] = number
        times = {c[: -len("_time(us)")]: _float(v) for c, v in row.items() if c.endswith("_time(us)") and _float(v) is not None}
        parsed.append({
            "op": row.get("Op Name") or row.get("OP Name") or row.get("Kernel Name") or "",
            "duration_us": _float(row.get("Task Duration(us)")),
            "block_dim": _float(row.get("Block Dim")),
            "pipes": pipes,
            "times": times,
        })
    return parsed


def bottleneck(row: dict, cores: int | None = None) -> dict:
    """The busiest pipeline of one launch and the class it points to, with the guide's reading."""
    if not row["pipes"]:
        return {"class": None, "pipe": None, "why": "no pipeline ratios in the summary"}
    name, share = max(row["pipes"].items(), key=lambda item: item[1])
    pipe = name.split("_", 1)[1]
    why = f"{name} is the busiest pipeline at {share:.0%}"
    if cores and row.get("block_dim") and row["block_dim"] > cores:
        why += f"; block dim {row['block_dim']:.0f} exceeds the {cores} cores (host scheduling overhead)"
    return {"class": PIPE_CLASS.get(pipe, "latency-bound"), "pipe": name, "share": share, "why": why}


def read_output(folder: str | Path) -> list[dict]:
    """Every summary row msprof wrote under `folder` (op_summary*.csv or PipeUtilization.csv)."""
    rows: list[dict] = []
    for pattern in SUMMARY_GLOBS:
        for path in sorted(Path(folder).glob(pattern)):
            rows.extend(parse_summary(path))
        if rows:
            break
    return rows
