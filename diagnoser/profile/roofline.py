"""Which resource bounds a kernel's case: the roofline class, with the rule that decided it.

Inputs are what rung 2 measured for one case (the forward's time, its useful flops and bytes, the
number of kernel launches) plus the device's measured ceilings and, when Nsight Compute ran, its
counters. The rules, in the order they are applied:

1. **launch-bound**: the GPU is idle for most of the forward. With ncu, the kernels' own durations
   (`gpu__time_duration`) add up to less than half of the measured time; without ncu, the forward
   takes less than `LAUNCH_US` microseconds per launch, which is the cost of a Triton launch from
   Python (host-side argument handling plus the driver call), so the host is what is being timed.
2. **memory-bound**: memory throughput reaches `BUSY` (60%) of its ceiling. With ncu this is
   the larger of DRAM and overall memory speed-of-light (it counts the bytes really moved, re-reads
   included); without, the useful bytes over the time against the measured copy bandwidth.
3. **compute-bound**: compute throughput reaches `BUSY` of its ceiling (ncu: SM speed of light;
   without: useful flops over the time against the measured matmul peak for the dtype).
   If both 2 and 3 hold, the busier of the two wins.
4. **latency-bound** (latency/occupancy): neither memory nor compute reaches `BUSY`. This is Nsight
   Compute's own reading of speed of light ("below 60% of peak typically indicates latency
   issues"): the units wait on dependencies, too few warps are resident to hide latency, or the
   grid is too small. The occupancy numbers say which.

The *region* is separate from the class: the side of the ridge point (peak flops / peak bandwidth)
the kernel's arithmetic intensity falls on, i.e. what would bound it at the roofline.
"""
from __future__ import annotations

from ladder.runner.roofline import floor_seconds

CLASSES = ("memory-bound", "compute-bound", "latency-bound", "launch-bound")
BUSY = 0.60
LAUNCH_US = 10.0
IDLE = 0.5


def classify(time_s: float, flops: float, bytes_moved: float, ceilings: dict, launches: int = 1,
             ncu: dict | None = None) -> dict:
    """The class of one case and the numbers behind it.

    `ceilings`: {"bandwidth": bytes/s, "flops": flop/s for the case's dtype}. `ncu`: the forward's
    counters aggregated over its launches by `aggregate()` (or None).
    """
    achieved_bw = bytes_moved / time_s if bytes_moved else 0.0
    achieved_flops = flops / time_s if flops else 0.0
    memory_util = achieved_bw / ceilings["bandwidth"] if ceilings.get("bandwidth") else 0.0
    compute_util = achieved_flops / ceilings["flops"] if ceilings.get("flops") else 0.0
    source = "events"
    if ncu and ncu.get("memory_pct") is not None:
        memory_util, compute_util, source = ncu["memory_pct"] / 100, (ncu.get("sm_pct") or 0) / 100, "ncu"
    floor = floor_seconds(flops, bytes_moved, ceilings.get("bandwidth"), ceilings.get("flops"))
    ridge = ceilings["flops"] / ceilings["bandwidth"] if ceilings.get("flops") and ceilings.get("bandwidth") else None
    intensity = flops / bytes_moved if bytes_moved else None
    result = {
        "achieved_gbps": achieved_bw / 1e9,
        "achieved_tflops": achieved_flops / 1e12,
        "memory_util": memory_util,
        "compute_util": compute_util,
        "util_source": source,
        "floor_s": floor,
        "efficiency": floor / time_s if floor else None,
        "intensity": intensity,
        "region": None if intensity is None or ridge is None else ("compute" if intensity >= ridge else "memory"),
    }
    busy = ncu.get("busy_s") if ncu else None
    per_launch_us = time_s / max(launches, 1) * 1e6
    if busy is not None and busy < IDLE * time_s:
        why = f"kernels run {busy / time_s:.0%} of the forward's {time_s * 1e6:.1f} us; the GPU idles between launches"
        return {**result, "class": "launch-bound", "why": why}
    if busy is None and per_launch_us < LAUNCH_US:
        why = f"{per_launch_us:.1f} us per launch ({launches} launches) is below the {LAUNCH_US:.0f} us a Triton launch costs on the host"
        return {**result, "class": "launch-bound", "why": why}
    if max(memory_util, compute_util) >= BUSY:
        if memory_util >= compute_util:
            why = f"memory throughput at {memory_util:.0%} of its ceiling ({source})"
            return {**result, "class": "memory-bound", "why": why}
        why = f"compute throughput at {compute_util:.0%} of its ceiling ({source})"
        return {**result, "class": "compute-bound", "why": why}
    bound = ("latency or occupancy bounds it" if source == "ncu" else
             "latency, occupancy or traffic beyond the compulsory bytes bounds it")
    why = (f"neither memory ({memory_util:.0%}) nor compute ({compute_util:.0%}) reaches {BUSY:.0%} of its"
           f" ceiling ({source}): {bound}")
    return {**result, "class": "latency-bound", "why": why}


def aggregate(launch_counters: list[dict]) -> dict | None:
    """One forward's ncu counters: kernel time summed, utilisations weighted by each kernel's time."""
    timed = [c for c in launch_counters if c.get("time_ns")]
    if not timed:
        return None
    total_ns = sum(c["time_ns"] for c in timed)

    def weighted(group: str, key: str) -> float | None:
        pairs = [(c[group][key], c["time_ns"]) for c in timed if c.get(group, {}).get(key) is not None]
        if not pairs:
            return None
        return sum(v * t for v, t in pairs) / sum(t for _, t in pairs)

    memory = [weighted("sol", "memory_pct"), weighted("sol", "dram_pct")]
    memory = [m for m in memory if m is not None]
    return {
        "busy_s": total_ns * 1e-9,
        "memory_pct": max(memory) if memory else None,
        "sm_pct": weighted("sol", "sm_pct"),
        "achieved_occupancy_pct": weighted("occupancy", "achieved_pct"),
        "theoretical_occupancy_pct": weighted("occupancy", "theoretical_pct"),
        "dram_bytes": sum((c.get("memory", {}).get("dram_read_bytes") or 0)
                          + (c.get("memory", {}).get("dram_write_bytes") or 0) for c in timed),
    }
