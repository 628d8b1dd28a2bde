"""The device tables under kb/hardware/: the one place ladder keeps a device's numbers.

One file per device, each naming the compile targets it serves (`cuda:90` -> H200) and holding
the limits everything else reads: per-SM resources for theoretical occupancy, core counts for grid
rules, and the roofline ceilings assumed until the device's own are measured (`ladder.runner.roofline`).

The tables are flat `key: value  # comment` lines whose values are Python literals; they are read
without PyYAML because the Triton-Ascend environment (`ladder.runner.ascend_ir`'s child) need not have it.
"""
from __future__ import annotations

import ast
import functools
import math
import re
from pathlib import Path
from typing import Any

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

HARDWARE_DIR = Path(__file__).resolve().parents[1] / "kb" / "hardware"
# A bare backend name means the device ladder is developed on for that backend.
DEFAULT_TARGETS = {"cuda": "cuda:90", "npu": "npu:Ascend910B3"}


@functools.lru_cache(maxsize=None)
def tables() -> dict[str, dict[str, Any]]:
    """Every device table, by file stem (`h200`, `ascend910b3`)."""
    return {path.stem: _read(path) for path in sorted(HARDWARE_DIR.glob("*.yaml"))}


def _read(path: Path) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for line in path.read_text().splitlines():
        match = re.match(r"(\w+):\s*(.*?)\s*(?:#.*)?$", line)
        if match:
            try:
                table[match.group(1)] = ast.literal_eval(match.group(2))
            except (ValueError, SyntaxError):
                table[match.group(1)] = match.group(2)
    return table


# ladder's names for a target (its `--target` values and triage's backend families) by backend.
TARGET_BACKENDS = {"sm90": "cuda", "nvidia": "cuda", "cuda": "cuda", "ascend": "npu", "npu": "npu"}


def compile_target(target: str) -> str:
    """The compile target the device tables name for one of ladder's target names: `sm90` or
    `nvidia` -> `cuda:90`; `ascend` or `npu` -> the default Ascend part; `ascend:Ascend910B4` or
    `npu:Ascend910B4` -> that part. Anything else is returned as it is (`cuda:90`, `cuda:100`)."""
    family, _, part = target.partition(":")
    backend = TARGET_BACKENDS.get(family.lower())
    if backend == "npu" and part:
        return f"npu:{part}"
    return DEFAULT_TARGETS[backend] if backend and not part else target


def for_target(target: str) -> dict[str, Any]:
    """The table of the device that serves a compile target (`cuda:90`, `npu:Ascend910B3`; a bare
    `cuda`/`npu`, or one of ladder's names such as `ascend`, means the default device), or {} for
    a target no table serves."""
    target = compile_target(target)
    for table in tables().values():
        if target in table.get("targets", []):
            return dict(table)
    return {}


def for_device_name(name: str | None) -> dict[str, Any]:
    """The table whose `name` the device's reported name begins with (`NVIDIA H100` for `NVIDIA H100
    80GB HBM3`; the longest such name), or {}: two parts of one compile target (H100 and H200 are
    both `cuda:90`) share its limits per SM but not their memory or its bandwidth."""
    named = [table for table in tables().values() if name and table.get("name") and name.startswith(table["name"])]
    return dict(max(named, key=lambda table: len(table["name"]))) if named else {}


def occupancy(device: dict[str, Any], *, registers: int | None, shared_bytes: int, num_warps: int) -> dict[str, Any]:
    """Resident programs (CTAs) per SM and what limits them: the CUDA occupancy calculator's
    arithmetic (programs per SM limited by registers, shared memory, warps and blocks).

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
