"""What every rung and the policy share: the subject of a diagnosis, a rung's "cannot run here",
and "there is nothing to diagnose".

It sits below both the rungs and the policy (`ladder.diagnoser.ladder`), so a rung can say either
without importing the policy that climbs it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

# What marks code written for Ascend NPUs: torch_npu, or tensors placed on an npu device.
NPU_MARKERS = ("torch_npu", 'device="npu"', "device='npu'", ".npu()")


class RungUnavailable(Exception):
    """A rung cannot run on this machine (a tool, a package or the index is missing); not an error."""


class NothingLaunched(Exception):
    """The subject ran and launched no Triton kernel: there is nothing to diagnose, and the climb
    ends there (a file of plain PyTorch, a script whose kernels never run)."""


@dataclass
class Subject:
    """What is diagnosed: a solution (+ problem) pair, or any script that launches Triton kernels."""

    solution: str
    problem: str | None = None
    script: bool = False
    backend: str = "aot"  # cuda | npu | aot | interpret
    target: str = "sm90"  # sm90 | ascend
    device: str | None = None  # the accelerator's name when the backend has one

    def to_dict(self) -> dict:
        return asdict(self)


def written_for_npu(*texts: str) -> bool:
    """Whether any of these sources (a solution, its problem) is written for Ascend NPUs."""
    return any(marker in text for text in texts for marker in NPU_MARKERS)


def target_for(backend: str, solution: str, problem: str | None = None, requested: str | None = None) -> str:
    """The compile target a diagnosis uses: the one asked for; else Ascend on the npu backend or
    for code written for NPUs, so that every rung judges the kernel for the device it is written
    for; else sm90."""
    if requested:
        return requested
    if backend == "npu":
        return "ascend"
    texts = [Path(path).read_text(errors="replace") for path in (solution, problem) if path and Path(path).is_file()]
    return "ascend" if written_for_npu(*texts) else "sm90"


def checked_target(value: str) -> str:
    """`value` if it names a target ladder has tables for (`sm90`, `ascend`, `ascend:PART`), else
    ValueError saying which there are."""
    from ladder.runner import hardware

    family, _, part = value.partition(":")
    if value in ("sm90", "ascend") or (family == "ascend" and part and hardware.for_target(value)):
        return value
    parts = sorted(t.split(":", 1)[1] for table in hardware.tables().values() for t in table.get("targets", [])
                   if t.startswith("npu:"))
    raise ValueError(f"{value!r}: use sm90, ascend, or ascend:PART with a table in kb/hardware (parts: {', '.join(parts)})")
