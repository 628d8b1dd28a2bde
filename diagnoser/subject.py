"""What every rung and the policy share: the subject of a diagnosis, and a rung's "cannot run here".

It sits below both the rungs and the policy (`diagnoser.ladder`), so a rung can say it is
unavailable without importing the policy that climbs it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


class RungUnavailable(Exception):
    """A rung cannot run on this machine (a tool, a package or the index is missing); not an error."""


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
