"""Device ceilings and a kernel's position under the roofline, in SI units throughout.

The ceilings are one record: ``{"device", "source", "bandwidth": bytes/s, "flops": {dtype: flop/s}}``
(``measured_at`` when measured). The roofline floor of one forward is ``max(flops / peak_flops,
bytes / peak_bandwidth)``: no kernel can finish sooner. ``% of roofline`` is ``floor / measured
time``; 100 % is the ceiling.

Until a device's own ceilings are measured they default to its ``kb/hardware`` table
(``ceiling_bandwidth``, ``ceiling_flops``; the H200's are measuring.md's figures).
``measure_ceilings()`` measures copy bandwidth and large matmuls on the device and
``save_ceilings()`` writes ``$XDG_CACHE_HOME/ladder/ceilings-<device>.json`` (``~/.cache`` by
default), which ``load_ceilings()`` then prefers. ``python -m ladder.runner.roofline`` measures and saves
on the current GPU.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from ladder.runner import hardware
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

DTYPE_KEYS = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32",
              "torch.float64": "fp64", "bfloat16": "bf16", "float16": "fp16", "float32": "fp32",
              "float64": "fp64"}


def default_ceilings(target: str = "cuda", device_name: str | None = None) -> dict[str, Any]:
    """The ceilings the device table assumes: the table of the device by its name where one has
    ceilings (an H100's, though it compiles for the H200's target), else the table of ``target``
    (the H200's for a bare ``cuda``).

    A device whose table states no ceilings gets the H200's, and its ``device`` says so.
    """
    table = hardware.for_device_name(device_name)
    if "ceiling_bandwidth" not in table:
        table = hardware.for_target(target)
    if "ceiling_bandwidth" not in table:
        table = hardware.for_target("cuda")
    return {"device": f"{table['name']} (defaults from kb/hardware)", "source": "defaults",
            "bandwidth": float(table["ceiling_bandwidth"]),
            "flops": {dtype: float(value) for dtype, value in table["ceiling_flops"].items()}}


def cache_path(device_name: str) -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", device_name).strip("-").lower() or "device"
    return root / "ladder" / f"ceilings-{slug}.json"


def load_ceilings(device_name: str, target: str = "cuda") -> dict[str, Any]:
    """Measured ceilings for this device if cached, else its table's defaults (``source`` says which).

    A cache file that does not read as a ceilings record (corrupt, or another format) is ignored.
    """
    path = cache_path(device_name)
    ceilings = default_ceilings(target, device_name)
    if path.is_file():
        try:
            measured = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            return ceilings
        if not isinstance(measured, dict) or not isinstance(measured.get("bandwidth"), (int, float)):
            return ceilings
        ceilings["flops"].update(measured.get("flops", {}))
        for key in ("device", "bandwidth", "measured_at"):
            if key in measured:
                ceilings[key] = measured[key]
        ceilings["source"] = str(path)
    return ceilings


def save_ceilings(ceilings: dict[str, Any]) -> Path:
    path = cache_path(ceilings["device"])
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(ceilings, indent=2))
    temporary.replace(path)
    return path


def peak_flops(ceilings: dict[str, Any], dtype: Any, allow_tf32: bool | None) -> float:
    """The flop/s ceiling for a compute dtype (a torch dtype or its name).

    fp32 with tf32 allowed contracts on tensor cores (tf32's peak). A dtype with no ceiling of its
    own (integers, fp8, unknown) gets the highest ceiling there is: the floor it gives is then
    still a time no kernel can beat, never one an honest kernel beats.
    """
    key = DTYPE_KEYS.get(str(dtype))
    if key == "fp32" and allow_tf32:
        key = "tf32"
    flops = ceilings["flops"]
    return float(flops[key]) if key in flops else float(max(flops.values()))


def floor_seconds(flops: float | None, bytes_moved: float | None, bandwidth: float | None,
                  peak: float | None) -> float | None:
    """The roofline floor: max(flops / peak flop/s, bytes / bandwidth); None if neither applies."""
    parts = []
    if bytes_moved and bandwidth:
        parts.append(bytes_moved / bandwidth)
    if flops and peak:
        parts.append(flops / peak)
    return max(parts) if parts else None


def position(seconds: float, bytes_moved: float | None, flops: float | None, bandwidth: float,
             peak: float) -> dict[str, float | None]:
    """Achieved GB/s and TFLOP/s, the roofline floor and the % of it reached, for one median time."""
    floor = floor_seconds(flops, bytes_moved, bandwidth, peak)
    return {
        "gbps": bytes_moved / seconds / 1e9 if bytes_moved else None,
        "tflops": flops / seconds / 1e12 if flops else None,
        "floor_ms": floor * 1e3 if floor else None,
        "roofline_pct": 100.0 * floor / seconds if floor else None,
    }


def measure_ceilings(device: str = "cuda", copy_bytes: int = 2 << 30, matmul_size: int = 8192,
                     reps: int = 20) -> dict[str, Any]:
    """Measure copy bandwidth and dense matmul throughput on the current device (best of ``reps``).

    Copy: ``dst.copy_(src)`` of ``copy_bytes``, counted as read + write. Matmul: square
    ``matmul_size`` products in bf16, fp16, tf32 (fp32 with tf32 allowed) and fp32 (tf32 off).
    """
    import torch

    module = getattr(torch, device)
    copy_s = _copy_time(module, device, copy_bytes, reps)
    flops = {}
    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        for key, dtype, tf32 in (("bf16", torch.bfloat16, False), ("fp16", torch.float16, False),
                                 ("tf32", torch.float32, True), ("fp32", torch.float32, False)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            seconds = _matmul_time(module, device, dtype, matmul_size, reps if key != "fp32" else 5)
            flops[key] = 2 * matmul_size ** 3 / seconds
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    return {
        "device": str(module.get_device_name()),
        "source": "measured",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "bandwidth": 2 * copy_bytes / copy_s,
        "flops": flops,
    }


def _copy_time(module, device: str, copy_bytes: int, reps: int) -> float:
    import torch

    source = torch.empty(copy_bytes // 4, dtype=torch.float32, device=device).uniform_()
    target = torch.empty_like(source)
    return _best_time(module, lambda: target.copy_(source), reps)


def _matmul_time(module, device: str, dtype, size: int, reps: int) -> float:
    import torch

    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    return _best_time(module, lambda: torch.matmul(a, b), reps)


def _best_time(module, function, reps: int) -> float:
    function()
    module.synchronize()
    best = float("inf")
    for _ in range(reps):
        start, end = module.Event(enable_timing=True), module.Event(enable_timing=True)
        start.record()
        function()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    return best


if __name__ == "__main__":
    import sys

    device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
    if device == "npu":
        import torch_npu  # noqa: F401
    measured = measure_ceilings(device)
    print(json.dumps(measured, indent=2))
    print(f"saved to {save_ceilings(measured)}")
