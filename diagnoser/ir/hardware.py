"""Device limits (kb/hardware/*.yaml) and the theoretical occupancy they imply.

The numbers live in one place, the YAML tables under kb/hardware/, one file per device, each
naming the compile targets it serves (`cuda:90` -> H200). Occupancy is the CUDA occupancy
calculator's arithmetic: programs per SM limited by registers, shared memory, warps and blocks.
"""
from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

HARDWARE_DIR = Path(__file__).resolve().parents[2] / "kb" / "hardware"
DEFAULT_DEVICE = {"cuda": "h200", "npu": "ascend910b3"}


@functools.lru_cache(maxsize=None)
def devices() -> dict[str, dict[str, Any]]:
    import yaml

    return {path.stem: yaml.safe_load(path.read_text()) for path in sorted(HARDWARE_DIR.glob("*.yaml"))}


def for_target(target: str) -> dict[str, Any] | None:
    """The device table serving a compile target (`cuda:90`, `npu:Ascend910B3`), if any."""
    tables = devices()
    for table in tables.values():
        if target in table.get("targets", []):
            return table
    default = DEFAULT_DEVICE.get(target.split(":")[0])
    return tables.get(default) if default else None


def occupancy(device: dict[str, Any], *, registers: int | None, shared_bytes: int, num_warps: int) -> dict[str, Any]:
    """Resident programs (CTAs) per SM and what limits them.

    `limiter` names the tightest resource; `programs_per_sm` 0 means the kernel cannot launch
    (more shared memory than one block may have).
    """
    warps_per_sm = device["max_warps_per_sm"]
    limits: dict[str, int] = {}
    if registers:
        unit = device["register_allocation_unit"]
        per_warp = math.ceil(registers * device["warp_size"] / unit) * unit
        limits["registers"] = (device["registers_per_sm"] // per_warp) // num_warps
    if shared_bytes > device["shared_memory_per_block"]:
        limits["shared_memory"] = 0
    elif shared_bytes:
        unit = device["shared_memory_allocation_unit"]
        per_block = math.ceil((shared_bytes + device["shared_memory_reserved_per_block"]) / unit) * unit
        limits["shared_memory"] = device["shared_memory_per_sm"] // per_block
    limits["warps"] = warps_per_sm // num_warps
    limits["blocks"] = device["max_blocks_per_sm"]
    limiter = min(limits, key=lambda name: limits[name])
    programs = limits[limiter]
    return {
        "programs_per_sm": programs,
        "warps_per_sm": programs * num_warps,
        "occupancy": round(programs * num_warps / warps_per_sm, 4),
        "limiter": limiter,
        "limits": limits,
    }
