"""The `kb/hardware` table of the device that serves a compile target.

What the device stand-ins answer a forward's device queries with, and where triage's detectors
read a device's size (`sm_count`) from.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

HARDWARE_DIR = Path(__file__).resolve().parents[2] / "kb" / "hardware"
DEFAULT_DEVICE_TARGETS = {"cuda": "cuda:90", "npu": "npu:Ascend910B3"}


def hardware_table(target: str) -> dict[str, Any]:
    """The `kb/hardware` table of the device that serves a compile target (`cuda:90`,
    `npu:Ascend910B3`; a bare `cuda`/`npu` means the default device), or {}.

    The tables are flat `key: value  # comment` lines; they are read without PyYAML because the
    Triton-Ascend environment (runner.ascend_ir's child) need not have it."""
    import ast

    target = DEFAULT_DEVICE_TARGETS.get(target, target)
    for path in sorted(HARDWARE_DIR.glob("*.yaml")):
        table: dict[str, Any] = {}
        for line in path.read_text().splitlines():
            match = re.match(r"(\w+):\s*(.*?)\s*(?:#.*)?$", line)
            if match:
                try:
                    table[match.group(1)] = ast.literal_eval(match.group(2))
                except (ValueError, SyntaxError):
                    table[match.group(1)] = match.group(2)
        if target in table.get("targets", []):
            return table
    return {}
