"""What every rung and the policy share: the subject of a diagnosis, a rung's "cannot run here",
and "there is nothing to diagnose".

It sits below both the rungs and the policy (`diagnoser.ladder`), so a rung can say either
without importing the policy that climbs it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


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
