"""What an evaluation checks and how thoroughly. Plain data: the caller sends it to the worker as JSON,
so this module imports nothing heavy (the calling process never needs torch)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


@dataclass
class Options:
    seeds: int = 3  # fresh random inputs per case for the correctness check
    seed: int | None = None  # base seed; None draws a fresh one (recorded in the result)
    time: bool = True  # time the correct cases (on backends that can time)
    torch_compile: bool = False  # also time torch.compile(reference)
    static_checks: bool = True  # reject on static rule errors (runtime guards always run)
    # "enforce": a verdict. "report": code under diagnosis (rung 2), not a verdict: what the honesty
    # guards see (torch compute in forward, outputs no kernel wrote, side streams) is noted on each
    # case and the forward is still checked and timed; tampering with the judge still rejects.
    guards: str = "enforce"
    cases: list[int] | None = None  # indexes into the problem's cases; None = all
    reps: int | None = None  # fixed timed repetitions; None = from the warm-up estimate
    min_reps: int = 30
    max_reps: int = 300
    budget_s: float = 1.0  # timing budget per contestant per case (sets the repetitions)
    quick: bool = False  # the problem's get_test_cases() (else its smallest case) instead of its cases
    contestants: str = "process"  # "process": each solution in a sandboxed process; "in-process": trusted code
    call_timeout_s: float = 300.0  # the longest one request to a contestant may take (compiling included)
    memory_limit_gib: float | None = None  # resident host memory per contestant; None: half the machine, <= 64
    process_limit: int = 16  # processes a contestant may have running at once (the compiler's included)
    precompile: bool = True  # on CUDA, every contestant compiles its kernels ahead of time, all at once

    def __post_init__(self) -> None:
        if self.guards not in ("enforce", "report"):
            raise ValueError(f"guards must be 'enforce' or 'report', not {self.guards!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Options":
        known = {key: value for key, value in data.items() if key in cls.__dataclass_fields__}
        return cls(**known)
