"""Nsight Compute: the command line that profiles one forward per case, and its raw CSV page parsed.

We ask `ncu` for an explicit list of metrics (few replay passes, so a whole suite profiles in
minutes) and read its machine-readable page (`--csv --page raw --print-units base`): one header row
of column names, one row of units, then one row per profiled kernel launch, with numbers printed
with thousands separators. Everything the ladder needs from a launch (speed of light, occupancy,
warp stall reasons, L1/L2/DRAM throughput, shared-memory bank conflicts) comes out of `counters()`
as plain numbers.

Clocks are never locked (`--clock-control none`): the timings elsewhere in the ladder run at the
clocks the GPU picks, and locked base clocks would make the two disagree.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ladder.runner.paths import child_pythonpath

REPO = Path(__file__).resolve().parents[2]

# The columns ncu prints before the metrics on the raw page (2023.x..2025.x).
ID_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
              "Block Size", "Grid Size", "Device", "CC")

# Warp stall reasons as the WarpStateStats section names them (average warps stalled per issued
# instruction, so they add up to the cycles between two issues of a warp).
STALL_REASONS = ("barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle",
                 "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc",
                 "no_instruction", "not_selected", "selected", "short_scoreboard", "sleeping",
                 "tex_throttle", "wait")
STALL_METRIC = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"

# name -> (group, key): where each metric lands in `counters()`.
METRICS: dict[str, tuple[str, str]] = {
    "gpu__time_duration.sum": ("time", "ns"),
    # speed of light: % of the peak sustained rate over the kernel's elapsed cycles
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": ("sol", "sm_pct"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": ("sol", "memory_pct"),
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": ("sol", "dram_pct"),
    "lts__throughput.avg.pct_of_peak_sustained_elapsed": ("sol", "l2_pct"),
    "l1tex__throughput.avg.pct_of_peak_sustained_active": ("sol", "l1_pct"),
    # memory traffic
    "dram__bytes_read.sum": ("memory", "dram_read_bytes"),
    "dram__bytes_write.sum": ("memory", "dram_write_bytes"),
    "lts__t_sector_hit_rate.pct": ("memory", "l2_hit_pct"),
    "l1tex__t_sector_hit_rate.pct": ("memory", "l1_hit_pct"),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": ("memory", "smem_ld_bank_conflicts"),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": ("memory", "smem_st_bank_conflicts"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": ("memory", "smem_ld_wavefronts"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": ("memory", "smem_st_wavefronts"),
    # occupancy
    "sm__maximum_warps_per_active_cycle_pct": ("occupancy", "theoretical_pct"),
    "sm__warps_active.avg.pct_of_peak_sustained_active": ("occupancy", "achieved_pct"),
    "launch__occupancy_limit_registers": ("occupancy", "limit_registers"),
    "launch__occupancy_limit_shared_mem": ("occupancy", "limit_shared_mem"),
    "launch__occupancy_limit_warps": ("occupancy", "limit_warps"),
    "launch__occupancy_limit_blocks": ("occupancy", "limit_blocks"),
    # launch
    "launch__grid_size": ("launch", "grid_size"),
    "launch__block_size": ("launch", "block_size"),
    "launch__registers_per_thread": ("launch", "registers_per_thread"),
    "launch__shared_mem_per_block_static": ("launch", "smem_static_bytes"),
    "launch__shared_mem_per_block_dynamic": ("launch", "smem_dynamic_bytes"),
    "launch__waves_per_multiprocessor": ("launch", "waves_per_sm"),
    **{STALL_METRIC.format(reason): ("stalls", reason) for reason in STALL_REASONS},
}

# If a metric name is unknown to the installed ncu, it refuses the whole run; these sections hold
# the same metrics under the same names, at the price of more replay passes.
FALLBACK_SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats",
                     "MemoryWorkloadAnalysis_Tables")


class NcuError(Exception):
    """ncu ran but gave nothing usable; the message is one line a user can act on."""


@dataclass
class KernelRow:
    """One profiled launch from the raw page: identity columns plus metric -> (value, unit)."""

    index: int
    kernel: str
    block: str = ""
    grid: str = ""
    device: str = ""
    cc: str = ""
    metrics: dict[str, tuple[float | str | None, str]] = field(default_factory=dict)

    def value(self, name: str) -> float | None:
        got = self.metrics.get(name, (None, ""))[0]
        return got if isinstance(got, float) else None


def find_ncu() -> str | None:
    """Path of the ncu executable: $NCU, then PATH, then the usual CUDA install folders."""
    candidates = [os.environ.get("NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu"]
    candidates += sorted(str(p) for p in Path("/opt/nvidia").glob("nsight-compute/*/ncu"))
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def kernel_filter(names: list[str]) -> str | None:
    """An ncu `--kernel-name` value matching exactly these kernels (None: profile every kernel)."""
    names = sorted(set(names))
    if not names:
        return None
    return "regex:^(" + "|".join(re.escape(n) for n in names) + ")$"


def command(ncu: str, program: list[str], kernels: list[str] | None = None,
            sections: bool = False, launch_count: int | None = None) -> list[str]:
    """The ncu command line that profiles `program` inside its cudaProfilerStart/Stop ranges only.

    The driver brackets exactly one forward per case (or a few replays per chosen launch site of a
    script) with the profiler API, so warm-up, autotuning and input generation are never profiled;
    `kernels` narrows it to Triton kernels, `launch_count` stops profiling after that many launches
    (a bound on the run's time whatever the program does).
    """
    cmd = [ncu, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
           "--profile-from-start", "off", "--target-processes", "all"]
    if sections:
        for section in FALLBACK_SECTIONS:
            cmd += ["--section", section]
    else:
        cmd += ["--metrics", ",".join(METRICS)]
    name_filter = kernel_filter(kernels or [])
    if name_filter:
        cmd += ["--kernel-name", name_filter]
    if launch_count:
        cmd += ["--launch-count", str(launch_count)]
    return cmd + list(program)


def _number(text: str) -> float | str | None:
    """ncu's cell text as a float ("1,234.5" -> 1234.5); 'n/a' and blanks are None."""
    text = text.strip()
    if not text or text.lower() in {"n/a", "nan"}:
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return text


def parse_raw_csv(text: str) -> list[KernelRow]:
    """Every profiled launch in ncu's output, in launch order.

    The program's own output and ncu's `==PROF==` / `==WARNING==` lines may precede the table;
    the table starts at the header row whose first cells are ncu's identity columns.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"')), None)
    if start is None:
        return []
    table = [line for line in lines[start:] if line.startswith('"')]
    reader = csv.reader(io.StringIO("\n".join(table)))
    header = next(reader)
    units: list[str] = []
    rows: list[KernelRow] = []
    for cells in reader:
        if len(cells) != len(header):
            continue
        if not cells[0].strip():  # the units row has an empty ID
            units = cells
            continue
        record = dict(zip(header, cells))
        row = KernelRow(index=int(_number(record["ID"]) or 0), kernel=record.get("Kernel Name", ""),
                        block=record.get("Block Size", ""), grid=record.get("Grid Size", ""),
                        device=record.get("Device", ""), cc=record.get("CC", ""))
        for position, name in enumerate(header):
            if name in ID_COLUMNS:
                continue
            unit = units[position] if position < len(units) else ""
            row.metrics[name] = (_number(cells[position]), unit)
        rows.append(row)
    return rows


def _in_base_unit(row: KernelRow, name: str) -> float | None:
    """A metric's value, converted to ns / bytes if ncu printed a scaled unit anyway."""
    value = row.value(name)
    if value is None:
        return None
    unit = row.metrics[name][1]
    scale = {"usecond": 1e3, "msecond": 1e6, "second": 1e9,
             "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}
    return value * scale.get(unit, 1.0)


def counters(row: KernelRow) -> dict:
    """The launch's metrics grouped for the ladder: time, sol, memory, occupancy, launch, stalls."""
    grouped: dict[str, dict] = {group: {} for group, _ in METRICS.values()}
    for name, (group, key) in METRICS.items():
        value = _in_base_unit(row, name)
        if value is not None:
            grouped[group][key] = value
    memory = grouped["memory"]
    for op in ("ld", "st"):
        conflicts, wavefronts = memory.get(f"smem_{op}_bank_conflicts"), memory.get(f"smem_{op}_wavefronts")
        if conflicts is not None and wavefronts:
            # share of shared-memory wavefronts that exist only because of bank conflicts
            memory[f"smem_{op}_conflict_pct"] = 100.0 * conflicts / wavefronts
    stalls = grouped["stalls"]
    if stalls:
        ranked = sorted(((v, k) for k, v in stalls.items() if k != "selected"), reverse=True)
        grouped["top_stalls"] = [{"reason": k, "warps_per_issue": round(v, 3)} for v, k in ranked[:3] if v > 0]
    time_ns = grouped.pop("time").get("ns")
    return {"kernel": row.kernel, "time_ns": time_ns, "block": row.block, "grid": row.grid, **grouped}


def diagnose_failure(output: str, returncode: int) -> str:
    """One line saying why an ncu run produced no table."""
    if "ERR_NVGPUCTRPERM" in output:
        return "ncu has no permission to read GPU performance counters (ERR_NVGPUCTRPERM)"
    errors = [line.split("==ERROR==", 1)[1].strip() for line in output.splitlines() if "==ERROR==" in line]
    if errors:
        return "ncu: " + errors[0]
    if "No kernels were profiled" in output:
        return "ncu profiled no kernel (no Triton launch between the profiler start/stop calls)"
    return f"ncu exited with status {returncode} and printed no result table"


def unknown_metric(output: str) -> bool:
    """Whether ncu refused the run because a requested metric does not exist on this GPU/version."""
    return bool(re.search(r"==ERROR==.*(metric|Metric)", output))


def profile_jobs(jobs: list[dict], kernels: list[str] | None = None, timeout: float = 300.0,
                 launch_count: int | None = None) -> dict:
    """Profile the driver's jobs under ncu; counters per launch, mapped back to (job, case).

    Returns {"available": bool, "why": one line, "cases": {(job, case): [counters per launch]},
    "errors": {(job, case): one line}, "started": [jobs the driver began, in order], "log": the driver's
    log lines}, plus "timed_out": True when ncu ran past `timeout` (its table, printed at the end, is
    lost). Never raises
    for a missing or failing ncu: the ladder then says so and uses what events and the IR give.
    """
    executable = find_ncu()
    if executable is None:
        return _unavailable("ncu not found (put it on PATH or set $NCU)")
    with tempfile.TemporaryDirectory(prefix="ladder-ncu-") as work:
        jobs_path, log_path = Path(work, "jobs.json"), Path(work, "launches.jsonl")
        jobs_path.write_text(json.dumps(jobs))
        program = [sys.executable, "-m", "ladder.diagnoser.profile.driver", str(jobs_path), str(log_path)]
        output, returncode = _run(command(executable, program, kernels, launch_count=launch_count), timeout)
        if output is None:  # slow, not broken: the caller may still profile other jobs
            log = [entry for entry in read_log(log_path) if entry.get("case") != "start"]
            return {**_unavailable(f"ncu did not finish within {timeout:.0f} s", log), "timed_out": True, "log": log}
        rows = parse_raw_csv(output)
        if not rows and unknown_metric(output):
            log_path.unlink(missing_ok=True)
            output, returncode = _run(command(executable, program, kernels, sections=True,
                                              launch_count=launch_count), timeout)
            rows = parse_raw_csv(output or "")
        log = read_log(log_path)
    started = [entry["job"] for entry in log if entry.get("case") == "start"]
    log = [entry for entry in log if entry.get("case") != "start"]
    if not rows:
        return {**_unavailable(diagnose_failure(output or "", returncode), log), "started": started, "log": log}
    cases, missing = align(rows, log)
    why = f"{len(rows)} launches profiled" + (f"; {missing} logged launches had no ncu row" if missing else "")
    return {"available": True, "why": why, "cases": cases, "errors": _errors(log), "started": started, "log": log}


def read_log(path: Path) -> list[dict]:
    """The driver's launch log; a line cut short by a crash is skipped."""
    entries = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return entries


def _unavailable(why: str, log: list[dict] | None = None) -> dict:
    return {"available": False, "why": why, "cases": {}, "errors": _errors(log or []), "started": []}


def _errors(log: list[dict]) -> dict:
    return {(entry["job"], entry["case"]): entry["error"] for entry in log if entry.get("error")}


def run_driver_alone(jobs: list[dict], timeout: float, interpret: bool = False) -> tuple[str | None, int, list[dict]]:
    """The driver on `jobs` in a child process with no profiler around it (a script's timed sites, a
    forward's split): its output (None when it ran past `timeout`), exit status and launch log.
    `interpret` runs it under Triton's interpreter."""
    with tempfile.TemporaryDirectory(prefix="ladder-driver-") as work:
        jobs_path, log_path = Path(work, "jobs.json"), Path(work, "log.jsonl")
        jobs_path.write_text(json.dumps(jobs))
        program = [sys.executable, "-m", "ladder.diagnoser.profile.driver", str(jobs_path), str(log_path)]
        output, returncode = _run(program, timeout, {"TRITON_INTERPRET": "1"} if interpret else None)
        return output, returncode, read_log(log_path)


def _run(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> tuple[str | None, int]:
    """Run ncu (or the driver alone) in its own process group, so a timeout ends it and what it
    started; `env` adds to this process's environment."""
    env = {**os.environ, **(env or {}),
           "PYTHONPATH": child_pythonpath(os.environ.get("PYTHONPATH"))}
    process = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None, -1
    return output, process.returncode


def align(rows: list[KernelRow], log: list[dict]) -> tuple[dict, int]:
    """Give each logged Triton launch its ncu row, in order, matching kernel names.

    ncu serialises launches, so the rows come in launch order; rows of other kernels (torch ops
    inside the forward, when no name filter was given) are skipped by name. Returns the counters
    per (job, case) and how many logged launches found no row.
    """
    cases: dict[tuple, list[dict]] = {}
    position, missing = 0, 0
    for entry in log:
        if not isinstance(entry.get("launches", []), list):
            continue  # a script job's summary line counts its launches; only lists name profiled ones
        launches = cases.setdefault((entry["job"], entry["case"]), [])
        for name in entry.get("launches", []):
            match = next((i for i in range(position, len(rows)) if rows[i].kernel == name), None)
            if match is None:
                missing += 1
                continue
            launches.append(counters(rows[match]))
            position = match + 1
    return cases, missing
